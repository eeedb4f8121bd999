-- PostgreSQL translation of ../0023_replicas.sql (same number, same tables).
-- Replicas (store/replicas.go). Each Warden process registers itself at
-- start-up and heartbeats; a journey records the replica that admitted
-- it, so the sweeps end only the journeys of replicas whose heartbeat
-- stopped, and per-replica rate limits divide by the replicas alive.
CREATE TABLE replicas (
    id         TEXT PRIMARY KEY,
    hostname   TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    last_seen  TEXT NOT NULL
);
CREATE INDEX replicas_last_seen ON replicas (last_seen);

ALTER TABLE journeys ADD COLUMN replica_id TEXT NOT NULL DEFAULT '';

-- Replicas (store/replicas.go). Each Warden process registers itself at
-- start-up and heartbeats; a journey records the replica that admitted
-- it, so the sweeps end only the journeys of replicas whose heartbeat
-- stopped. On SQLite one process serves the file, and the table holds at
-- most the current process and the ones before it.
CREATE TABLE replicas (
    id         TEXT PRIMARY KEY,
    hostname   TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    last_seen  TEXT NOT NULL
);
CREATE INDEX replicas_last_seen ON replicas (last_seen);

ALTER TABLE journeys ADD COLUMN replica_id TEXT NOT NULL DEFAULT '';

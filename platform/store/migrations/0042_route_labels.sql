-- Route labels (issue 30, docs/releases.md): a reviewer says whether a
-- journey was routed to the right skill, and if not where it should have
-- gone ('' = no skill: it should have been refused). One row per journey,
-- the latest label; every label and relabel is in the audit chain
-- (route.labelled). The journey's route, release and agent are copied so
-- accuracy is counted from this table alone.
CREATE TABLE route_labels (
	journey_id       TEXT PRIMARY KEY REFERENCES journeys (id) ON DELETE CASCADE,
	tenant_id        TEXT NOT NULL,
	agent            TEXT NOT NULL,
	env              TEXT NOT NULL,
	release_digest   TEXT NOT NULL,
	routed_skill     TEXT NOT NULL, -- '' when the journey was refused (no route)
	expected_skill   TEXT NOT NULL, -- '' when it should have been refused
	correct          INTEGER NOT NULL CHECK (correct IN (0, 1)),
	journey_at       TEXT NOT NULL,
	labelled_by      TEXT NOT NULL, -- the audit actor "type:id"
	labelled_by_name TEXT NOT NULL,
	labelled_at      TEXT NOT NULL
);
CREATE INDEX route_labels_target ON route_labels (agent, env, labelled_at);

-- The labelling settings: the share of each day's journeys proposed for
-- labelling, and the route_accuracy alert (below alert_percent over the
-- last alert_last_n labelled journeys). One row; absent means defaults.
CREATE TABLE route_label_settings (
	id             INTEGER PRIMARY KEY CHECK (id = 1),
	sample_percent INTEGER NOT NULL CHECK (sample_percent BETWEEN 1 AND 100),
	alert_percent  INTEGER NOT NULL CHECK (alert_percent BETWEEN 1 AND 100),
	alert_last_n   INTEGER NOT NULL CHECK (alert_last_n >= 1),
	changed_by     TEXT NOT NULL,
	changed_at     TEXT NOT NULL
);

-- A replay also routes the labelled journeys under the candidate and the
-- release active then, and counts how many each routes right.
ALTER TABLE release_replays ADD COLUMN active_digest TEXT NOT NULL DEFAULT '';
ALTER TABLE release_replays ADD COLUMN labelled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE release_replays ADD COLUMN labelled_right INTEGER NOT NULL DEFAULT 0;
ALTER TABLE release_replays ADD COLUMN active_right INTEGER NOT NULL DEFAULT 0;

-- A canary may require the candidate to route the labelled journeys no
-- worse than the active release (a replay shows it).
ALTER TABLE release_pointers ADD COLUMN label_gate INTEGER NOT NULL DEFAULT 0;

-- A fifth kind of alert, route_accuracy: subject is "agent/env", value
-- the accuracy in percent over the last labelled journeys. SQLite cannot
-- change a CHECK, so the table is rebuilt.
CREATE TABLE alerts_new (
	id            TEXT PRIMARY KEY,
	kind          TEXT NOT NULL CHECK (kind IN ('failure_rate', 'p99_latency', 'budget_burn', 'model_overrun', 'route_accuracy')),
	subject       TEXT NOT NULL,
	value         INTEGER NOT NULL,
	threshold     INTEGER NOT NULL,
	fired_at      TEXT NOT NULL,
	resolved_at   TEXT,
	acked_by      TEXT NOT NULL DEFAULT '',
	acked_by_name TEXT NOT NULL DEFAULT '',
	acked_at      TEXT,
	ack_note      TEXT NOT NULL DEFAULT ''
);
INSERT INTO alerts_new (id, kind, subject, value, threshold, fired_at, resolved_at, acked_by, acked_by_name, acked_at, ack_note)
	SELECT id, kind, subject, value, threshold, fired_at, resolved_at, acked_by, acked_by_name, acked_at, ack_note FROM alerts;
DROP TABLE alerts;
ALTER TABLE alerts_new RENAME TO alerts;
CREATE UNIQUE INDEX alerts_firing ON alerts (kind, subject) WHERE resolved_at IS NULL;
CREATE INDEX alerts_resolved ON alerts (resolved_at);

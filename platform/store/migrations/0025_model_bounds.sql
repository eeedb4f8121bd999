-- The model gateway's bounds (docs/models.md).
--
-- What a call was charged against what it reserved: overrun_micros is the
-- cost above the reservation when an upstream reported more usage than
-- the request as forwarded can bill (a lying or buggy upstream, or a
-- deployment whose context window or output cap is set too low); the
-- call is charged what was reported all the same, and the model_overrun
-- alert fires. usage_source says where the tokens came from: 'reported'
-- by the upstream, 'estimated' by Warden (no usage came, as in a cut
-- stream), or 'invalid' (the upstream reported a negative or impossible
-- count; the reservation was charged).
ALTER TABLE model_calls ADD COLUMN overrun_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE model_calls ADD COLUMN usage_source TEXT NOT NULL DEFAULT '';
CREATE INDEX model_calls_overrun ON model_calls (created_at) WHERE overrun_micros > 0;

-- The model gateway's egress settings, one row: the hosts deployments may
-- reach although they are (or resolve to) loopback, private, link-local
-- or other internal addresses, for on-premises model servers; one host
-- per line, lower-case, no port. No row: none.
CREATE TABLE model_gateway_settings (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    allowed_hosts TEXT NOT NULL DEFAULT '',
    updated_at    TEXT NOT NULL
);

-- A fourth kind of alert, model_overrun: subject is the deployment whose
-- calls cost more than their reservations, value the number of such
-- calls in the window. SQLite cannot change a CHECK, so the table is
-- rebuilt.
CREATE TABLE alerts_new (
	id          TEXT PRIMARY KEY,
	kind        TEXT NOT NULL CHECK (kind IN ('failure_rate', 'p99_latency', 'budget_burn', 'model_overrun')),
	subject     TEXT NOT NULL,
	value       INTEGER NOT NULL,
	threshold   INTEGER NOT NULL,
	fired_at    TEXT NOT NULL,
	resolved_at TEXT
);
INSERT INTO alerts_new (id, kind, subject, value, threshold, fired_at, resolved_at)
	SELECT id, kind, subject, value, threshold, fired_at, resolved_at FROM alerts;
DROP TABLE alerts;
ALTER TABLE alerts_new RENAME TO alerts;
CREATE UNIQUE INDEX alerts_firing ON alerts (kind, subject) WHERE resolved_at IS NULL;
CREATE INDEX alerts_resolved ON alerts (resolved_at);

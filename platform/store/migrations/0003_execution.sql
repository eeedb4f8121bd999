-- Approvals, durable execution and the effect ledger.

ALTER TABLE tenants ADD COLUMN dual_control_minor INTEGER NOT NULL DEFAULT 100000;

ALTER TABLE actions ADD COLUMN approvals_given INTEGER NOT NULL DEFAULT 0;
ALTER TABLE actions ADD COLUMN receipt TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN failure TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN compensates TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN callback_url TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN external INTEGER NOT NULL DEFAULT 0;
ALTER TABLE actions ADD COLUMN decided_at TEXT;
ALTER TABLE actions ADD COLUMN executed_at TEXT;

-- One row per approver per action: the same person cannot count twice.
CREATE TABLE decisions (
	id             TEXT PRIMARY KEY,
	action_id      TEXT NOT NULL REFERENCES actions (id),
	principal_id   TEXT NOT NULL,
	principal_name TEXT NOT NULL DEFAULT '',
	decision       TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
	comment        TEXT NOT NULL DEFAULT '',
	payload_digest TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	UNIQUE (action_id, principal_id)
);

-- The effect ledger: one record per side effect, keyed by its stable
-- idempotency key and bound to the payload digest.
CREATE TABLE effects (
	idempotency_key TEXT PRIMARY KEY,
	payload_digest  TEXT NOT NULL,
	tool            TEXT NOT NULL,
	tenant          TEXT NOT NULL DEFAULT '',
	action_id       TEXT NOT NULL DEFAULT '',
	state           TEXT NOT NULL CHECK (state IN ('intended', 'reserved', 'executed', 'recorded', 'failed')),
	receipt         TEXT NOT NULL DEFAULT '',
	error           TEXT NOT NULL DEFAULT '',
	attempts        INTEGER NOT NULL DEFAULT 0,
	needs_review    INTEGER NOT NULL DEFAULT 0,
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL
);
CREATE INDEX effects_state ON effects (state, updated_at);

-- Durable jobs (a transactional outbox): enqueued in the same transaction
-- as the decision that needs them, run by the worker, retried with backoff,
-- rescued when a worker died holding one.
CREATE TABLE jobs (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	kind         TEXT NOT NULL,
	payload      TEXT NOT NULL DEFAULT '{}',
	unique_key   TEXT UNIQUE,
	state        TEXT NOT NULL CHECK (state IN ('available', 'running', 'done', 'discarded')),
	attempts     INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL DEFAULT 25,
	run_at       TEXT NOT NULL,
	locked_until TEXT,
	last_error   TEXT NOT NULL DEFAULT '',
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL
);
CREATE INDEX jobs_ready ON jobs (state, run_at);

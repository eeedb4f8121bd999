-- PostgreSQL translation of ../0002_runtime.sql (same number, same tables).
-- The request plane: keys, budgets, tools, journeys, pending actions.
-- Money is integer micro-units (1 USD = 1,000,000); action amounts are the
-- currency's minor units (cents), as agents send them.

ALTER TABLE tenants ADD COLUMN trace_retention_days BIGINT NOT NULL DEFAULT 30;

-- Virtual keys: the secret is shown once; only its SHA-256 is kept, found
-- by a short public prefix.
CREATE TABLE virtual_keys (
	id            TEXT PRIMARY KEY,
	tenant_id     TEXT NOT NULL REFERENCES tenants (id),
	name          TEXT NOT NULL,
	prefix        TEXT NOT NULL UNIQUE,
	secret_hash   TEXT NOT NULL,
	scopes        TEXT NOT NULL DEFAULT '[]',
	rate_per_min  BIGINT NOT NULL DEFAULT 600,
	burst         BIGINT NOT NULL DEFAULT 60,
	created_by    TEXT NOT NULL,
	created_at    TEXT NOT NULL,
	expires_at    TEXT,
	revoked_at    TEXT,
	last_used_at  TEXT
);
CREATE INDEX virtual_keys_tenant ON virtual_keys (tenant_id);

-- One budget per tenant. Admission reserves, settlement charges and releases.
CREATE TABLE budgets (
	tenant_id       TEXT PRIMARY KEY REFERENCES tenants (id),
	period          TEXT NOT NULL CHECK (period IN ('day', 'month', 'total')),
	limit_micros    BIGINT NOT NULL CHECK (limit_micros >= 0),
	spent_micros    BIGINT NOT NULL DEFAULT 0 CHECK (spent_micros >= 0),
	reserved_micros BIGINT NOT NULL DEFAULT 0 CHECK (reserved_micros >= 0),
	alert_percent   BIGINT NOT NULL DEFAULT 80 CHECK (alert_percent BETWEEN 1 AND 100),
	period_start    TEXT NOT NULL,
	updated_at      TEXT NOT NULL
);

-- The tool catalog: what each tool may do and how it is called.
CREATE TABLE tools (
	name              TEXT PRIMARY KEY,
	description       TEXT NOT NULL DEFAULT '',
	impact            TEXT NOT NULL CHECK (impact IN ('low', 'medium', 'high')),
	reversibility     TEXT NOT NULL CHECK (reversibility IN ('reversible', 'compensatable', 'irreversible')),
	compensating_tool TEXT NOT NULL DEFAULT '',
	provider          TEXT NOT NULL CHECK (provider IN ('builtin', 'http', 'external')),
	webhook_url       TEXT NOT NULL DEFAULT '',
	timeout_ms        BIGINT NOT NULL DEFAULT 5000,
	max_attempts      BIGINT NOT NULL DEFAULT 3,
	args_schema       TEXT NOT NULL DEFAULT '{}',
	enabled           BIGINT NOT NULL DEFAULT 1,
	approval_ttl_s    BIGINT NOT NULL DEFAULT 86400,
	unit_cost_micros  BIGINT NOT NULL DEFAULT 0,
	updated_at        TEXT NOT NULL
);

-- Journeys: one user outcome each, with redacted input and output.
CREATE TABLE journeys (
	id              TEXT PRIMARY KEY,
	tenant_id       TEXT NOT NULL REFERENCES tenants (id),
	key_id          TEXT NOT NULL DEFAULT '',
	principal_id    TEXT NOT NULL DEFAULT '',
	request_id      TEXT NOT NULL,
	correlation_id  TEXT NOT NULL,
	skill           TEXT NOT NULL DEFAULT '',
	release_digest  TEXT NOT NULL,
	status          TEXT NOT NULL,
	error_code      TEXT NOT NULL DEFAULT '',
	input           TEXT NOT NULL DEFAULT '',
	output          TEXT NOT NULL DEFAULT '',
	input_tokens    BIGINT NOT NULL DEFAULT 0,
	output_tokens   BIGINT NOT NULL DEFAULT 0,
	tool_units      BIGINT NOT NULL DEFAULT 0,
	review_units    BIGINT NOT NULL DEFAULT 0,
	cost_micros     BIGINT NOT NULL DEFAULT 0,
	reserved_micros BIGINT NOT NULL DEFAULT 0,
	latency_ms      BIGINT NOT NULL DEFAULT 0,
	created_at      TEXT NOT NULL,
	finished_at     TEXT
);
CREATE INDEX journeys_tenant_created ON journeys (tenant_id, created_at);
CREATE INDEX journeys_created ON journeys (created_at);

-- The step journal: each step's recorded (redacted) arguments and result.
CREATE TABLE journey_steps (
	journey_id  TEXT NOT NULL REFERENCES journeys (id) ON DELETE CASCADE,
	n           BIGINT NOT NULL,
	kind        TEXT NOT NULL,
	tool        TEXT NOT NULL DEFAULT '',
	arguments   TEXT NOT NULL DEFAULT '',
	result      TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	units       BIGINT NOT NULL DEFAULT 0,
	latency_ms  BIGINT NOT NULL DEFAULT 0,
	started_at  TEXT NOT NULL,
	PRIMARY KEY (journey_id, n)
);

-- Idempotency-Key: the first response to (key, Idempotency-Key) is kept
-- and replayed.
CREATE TABLE idempotency (
	key_id        TEXT NOT NULL,
	idem_key      TEXT NOT NULL,
	request_hash  TEXT NOT NULL,
	status_code   BIGINT NOT NULL DEFAULT 0,
	response      TEXT NOT NULL DEFAULT '',
	created_at    TEXT NOT NULL,
	PRIMARY KEY (key_id, idem_key)
);

-- Pending high-impact actions. arguments holds what execution needs,
-- sealed (encrypted) at rest; arguments_redacted is what people see.
CREATE TABLE actions (
	id                  TEXT PRIMARY KEY,
	tenant_id           TEXT NOT NULL REFERENCES tenants (id),
	journey_id          TEXT NOT NULL DEFAULT '',
	step_n              BIGINT NOT NULL DEFAULT 0,
	key_id              TEXT NOT NULL DEFAULT '',
	requested_by        TEXT NOT NULL DEFAULT '',
	tool                TEXT NOT NULL,
	arguments_sealed    TEXT NOT NULL,
	arguments_redacted  TEXT NOT NULL,
	summary             TEXT NOT NULL,
	targets             TEXT NOT NULL DEFAULT '[]',
	amount_minor        BIGINT,
	currency            TEXT NOT NULL DEFAULT '',
	reason              TEXT NOT NULL DEFAULT '',
	impact              TEXT NOT NULL,
	reversibility       TEXT NOT NULL,
	policy_rule         TEXT NOT NULL,
	approvals_required  BIGINT NOT NULL DEFAULT 1,
	payload_digest      TEXT NOT NULL,
	idempotency_key     TEXT NOT NULL UNIQUE,
	status              TEXT NOT NULL,
	expires_at          TEXT NOT NULL,
	created_at          TEXT NOT NULL,
	updated_at          TEXT NOT NULL
);
CREATE INDEX actions_status_expires ON actions (status, expires_at);
CREATE INDEX actions_tenant_status ON actions (tenant_id, status);

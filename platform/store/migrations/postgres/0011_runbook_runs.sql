-- PostgreSQL translation of ../0011_runbook_runs.sql (same number, same tables).
-- Runbook runs (docs/runbooks.md). One row per press of a runbook action.
-- The idempotency key is the one-time token of the confirmation page that
-- was confirmed: UNIQUE, so a double submit or a retried request finds the
-- first run instead of running the tool again. A run is claimed
-- ('running') before its tool runs and finished ('done' or 'failed') with
-- the seq of its "runbook.action" audit event.
CREATE TABLE runbook_runs (
	id              TEXT PRIMARY KEY,
	idempotency_key TEXT NOT NULL UNIQUE,
	runbook         TEXT NOT NULL,
	action          TEXT NOT NULL,
	tool            TEXT NOT NULL,
	principal       TEXT NOT NULL,  -- principal id
	principal_name  TEXT NOT NULL,
	reason          TEXT NOT NULL,
	status          TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
	outcome         TEXT NOT NULL DEFAULT '',
	audit_seq       BIGINT,
	created_at      TEXT NOT NULL,
	finished_at     TEXT
);

-- A runbook's history, newest first, is one indexed read.
CREATE INDEX runbook_runs_runbook ON runbook_runs (runbook, created_at, id);

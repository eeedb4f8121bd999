-- PostgreSQL translation of ../0014_runbook_approvals.sql (same number, same tables).
-- A runbook tool with a high impact (purge_traces) does not run on press:
-- the press creates an action for someone other than the presser to
-- approve, and the run waits ('awaiting_approval') with that action's id
-- until the decision finishes it. SQLite cannot change a CHECK, so the
-- table is rebuilt.
CREATE TABLE runbook_runs_new (
	id              TEXT PRIMARY KEY,
	idempotency_key TEXT NOT NULL UNIQUE,
	runbook         TEXT NOT NULL,
	action          TEXT NOT NULL,
	tool            TEXT NOT NULL,
	principal       TEXT NOT NULL,  -- principal id
	principal_name  TEXT NOT NULL,
	reason          TEXT NOT NULL,
	status          TEXT NOT NULL CHECK (status IN ('running', 'awaiting_approval', 'done', 'failed')),
	outcome         TEXT NOT NULL DEFAULT '',
	audit_seq       BIGINT,
	created_at      TEXT NOT NULL,
	finished_at     TEXT,
	action_id       TEXT NOT NULL DEFAULT ''  -- the approval request of a high-impact tool
);

INSERT INTO runbook_runs_new (id, idempotency_key, runbook, action, tool, principal, principal_name, reason, status, outcome, audit_seq, created_at, finished_at)
	SELECT id, idempotency_key, runbook, action, tool, principal, principal_name, reason, status, outcome, audit_seq, created_at, finished_at FROM runbook_runs;
DROP TABLE runbook_runs;
ALTER TABLE runbook_runs_new RENAME TO runbook_runs;

CREATE INDEX runbook_runs_runbook ON runbook_runs (runbook, created_at, id);

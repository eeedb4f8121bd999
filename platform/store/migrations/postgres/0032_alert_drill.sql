-- PostgreSQL translation of ../0032_alert_drill.sql (same number, same tables).
-- Alerts people act on (issue 26). An alert is acknowledged once: who
-- (principal id and the name shown then), when, and an optional note; the
-- audit chain has the same as alert.acknowledged.
ALTER TABLE alerts ADD COLUMN acked_by TEXT NOT NULL DEFAULT '';
ALTER TABLE alerts ADD COLUMN acked_by_name TEXT NOT NULL DEFAULT '';
ALTER TABLE alerts ADD COLUMN acked_at TEXT;
ALTER TABLE alerts ADD COLUMN ack_note TEXT NOT NULL DEFAULT '';

-- A tool switched off for one tenant only (a runbook's "switch this tool
-- off for this tenant"): a row means off for that tenant, whatever the
-- tool's own switch says; the other tenants keep the tool. Switching it
-- back on deletes the row. Who and why are in the audit chain
-- (tool.disable / tool.enable with the tenant).
CREATE TABLE tool_tenant_switches (
	tool        TEXT NOT NULL REFERENCES tools (name),
	tenant_id   TEXT NOT NULL REFERENCES tenants (id),
	reason      TEXT NOT NULL DEFAULT '',
	switched_by TEXT NOT NULL DEFAULT '',
	switched_at TEXT NOT NULL,
	PRIMARY KEY (tool, tenant_id)
);

-- The alert page's cause reads the failed journeys of one skill in the
-- rule's window.
CREATE INDEX journeys_skill_status_created ON journeys (skill, status, created_at);

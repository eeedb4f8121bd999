-- PostgreSQL translation of ../0017_switch_reasons.sql (same number, same tables).
-- Why a tool was switched off and a tenant frozen, by whom and when: the
-- pages that show the switch, and an action whose execution it blocked,
-- say it in the true order of events. The audit trail keeps the history;
-- these columns keep the current state.
ALTER TABLE tools ADD COLUMN switch_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN switched_by TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN switched_at TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN frozen_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN frozen_by TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN frozen_at TEXT NOT NULL DEFAULT '';

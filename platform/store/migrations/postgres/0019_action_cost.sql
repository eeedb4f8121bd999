-- PostgreSQL translation of ../0019_action_cost.sql (same number, same tables).
-- What an action cost when it was charged to its tenant's budget outside
-- any journey (proposed through /v1/actions, or a reversal), and when: the
-- Budgets page itemises spend, so its figures add up.
ALTER TABLE actions ADD COLUMN cost_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE actions ADD COLUMN charged_at TEXT;
CREATE INDEX actions_tenant_charged ON actions (tenant_id, charged_at);

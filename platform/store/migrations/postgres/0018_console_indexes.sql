-- PostgreSQL translation of ../0018_console_indexes.sql (same number, same tables).
-- Console pages stay fast as data grows (issue 13).
--
-- The budgets page lists each tenant's costliest journeys of the period:
-- walking this index from its most expensive end finds them without
-- reading every journey of the period.
CREATE INDEX journeys_tenant_cost ON journeys (tenant_id, cost_micros, id);

-- The traces page of one tenant, newest first (ids sort by time): read in
-- order from the index instead of sorting all the tenant's journeys.
CREATE INDEX journeys_tenant_id ON journeys (tenant_id, id);
-- ... and filtered by status (a rare status would otherwise walk every
-- journey of the tenant, or of all tenants, to fill a page).
CREATE INDEX journeys_tenant_status_id ON journeys (tenant_id, status, id);
CREATE INDEX journeys_status_id ON journeys (status, id);

-- An approver's recent decisions, newest first.
CREATE INDEX decisions_principal_created ON decisions (principal_id, created_at);

-- The latest events of one verb (an auditor's recent exports) without
-- walking the whole trail.
CREATE INDEX audit_events_verb_seq ON audit_events (verb, seq);

-- On-call's failed actions, oldest first.
CREATE INDEX actions_status_created ON actions (status, created_at, id);

-- Search and the Actions list (issue 26): every query they make reads an
-- index in the lists' order (newest first) and stops at the page's end,
-- so a search costs the same at a million actions as at a thousand.
--
-- The Actions list: all actions, or one tenant's, or one tool's, newest
-- first (status has actions_status_created already); the date range is a
-- range of the same created_at.
CREATE INDEX actions_created ON actions (created_at, id);
CREATE INDEX actions_tenant_created ON actions (tenant_id, created_at, id);
CREATE INDEX actions_tool_created ON actions (tool, created_at, id);
-- Search by target (its keyed token: "ORD-1004" and "ord-1004" are one),
-- amount, the agent's key and the person who asked, newest first.
CREATE INDEX actions_target_created ON actions (target_key, created_at, id);
CREATE INDEX actions_amount_created ON actions (amount_minor, created_at, id);
CREATE INDEX actions_key_created ON actions (key_id, created_at, id);
CREATE INDEX actions_requester_created ON actions (requested_by, created_at, id);
-- A key's journeys, newest first (ids sort by time).
CREATE INDEX journeys_key_id ON journeys (key_id, id);
-- What one person or key did, in the audit trail, newest first.
CREATE INDEX audit_events_actor_seq ON audit_events (actor_id, seq);
-- People and keys by the start of their name (or e-mail), in any case.
CREATE INDEX principals_name_lower ON principals (lower(name));
CREATE INDEX principals_email_lower ON principals (lower(email));
CREATE INDEX virtual_keys_name_lower ON virtual_keys (lower(name));

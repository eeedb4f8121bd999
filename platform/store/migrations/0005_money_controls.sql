-- Money controls from the security review (issue 8).
--
-- The catalog declares which argument of a tool is its amount, its
-- currency and its target (order, account, customer), so dual control
-- reads the amount the provider will receive and can add up actions on
-- the same target.
ALTER TABLE tools ADD COLUMN amount_arg TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN currency_arg TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN target_arg TEXT NOT NULL DEFAULT '';
UPDATE tools SET amount_arg = 'amount_minor', currency_arg = 'currency', target_arg = 'order_id'
	WHERE name = 'issue_refund' AND provider = 'builtin';
UPDATE tools SET target_arg = 'refund_id' WHERE name = 'reverse_refund' AND provider = 'builtin';
UPDATE tools SET target_arg = 'order_id'
	WHERE name IN ('send_customer_email', 'submit_change_request') AND provider = 'builtin';

-- Dual-control thresholds per currency: minor units of one currency are
-- not comparable with another's. A currency without a row needs two
-- approvers for any amount (fail closed); a threshold of 0 turns dual
-- control off for that currency. The old single threshold was in US cents.
CREATE TABLE dual_control_thresholds (
	tenant_id       TEXT NOT NULL REFERENCES tenants (id),
	currency        TEXT NOT NULL,
	threshold_minor INTEGER NOT NULL CHECK (threshold_minor >= 0),
	updated_at      TEXT NOT NULL,
	PRIMARY KEY (tenant_id, currency)
);
INSERT INTO dual_control_thresholds (tenant_id, currency, threshold_minor, updated_at)
	SELECT id, 'USD', dual_control_minor, created_at FROM tenants;
ALTER TABLE tenants DROP COLUMN dual_control_minor;
-- Actions on the same target within this window add up for dual control.
ALTER TABLE tenants ADD COLUMN dual_control_window_s INTEGER NOT NULL DEFAULT 86400;

-- What an action's dual control was decided on: the target (a keyed token,
-- since a target may be an account number, and its display form) and the
-- sentence that says why it needs the approvers it needs.
ALTER TABLE actions ADD COLUMN target_key TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN target_label TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN approval_basis TEXT NOT NULL DEFAULT '';
-- The principal who created the key an agent asked with: that person may
-- not approve the request either.
ALTER TABLE actions ADD COLUMN key_owner TEXT NOT NULL DEFAULT '';
CREATE INDEX actions_tenant_target ON actions (tenant_id, target_key, created_at);

-- An agent's callback URL may carry personal data or a token in its
-- query: the column people read keeps it redacted, and the URL Warden
-- calls is sealed like the action's arguments.
ALTER TABLE actions ADD COLUMN callback_url_sealed TEXT NOT NULL DEFAULT '';

-- Pending and approved actions from before this migration: the key's
-- creator becomes the key owner (they may not approve them either), and a
-- reversal a person asked for stops carrying the agent's key (the agent
-- could cancel it).
UPDATE actions SET key_owner = (SELECT created_by FROM virtual_keys WHERE virtual_keys.id = actions.key_id)
	WHERE key_owner = '' AND key_id != ''
	AND EXISTS (SELECT 1 FROM virtual_keys WHERE virtual_keys.id = actions.key_id AND created_by != 'cli');
UPDATE actions SET key_id = '' WHERE compensates != '' AND requested_by != '';

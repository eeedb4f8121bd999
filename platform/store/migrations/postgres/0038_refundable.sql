-- PostgreSQL translation of ../0038_refundable.sql (same number, same tables).
-- What is left to refund (approvals/refundable.go, docs/api.md): a tool
-- may name the argument holding its target's total (total_arg, in minor
-- units of the amount's currency), and a lookup tool the members of its
-- result holding its target's total and that total's currency
-- (total_result, total_currency_result). A lookup's answer is kept per
-- tenant and target in target_totals; an action keeps the total its own
-- arguments declared in total_minor, and whether it is weighed at all
-- (weigh_refundable: its tool declares the amount argument, so the
-- amount is what the provider receives). Executed actions whose reversal
-- executed no longer count, so reversals are found by compensates.
ALTER TABLE tools ADD COLUMN total_arg TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN total_result TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN total_currency_result TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN total_minor BIGINT;
ALTER TABLE actions ADD COLUMN weigh_refundable BIGINT NOT NULL DEFAULT 0;
UPDATE actions SET weigh_refundable = 1
WHERE amount_minor IS NOT NULL AND target_key != '' AND compensates = ''
    AND tool IN (SELECT name FROM tools WHERE amount_arg != '');
CREATE INDEX actions_compensates ON actions (compensates);

CREATE TABLE target_totals (
    tenant_id   TEXT NOT NULL,
    target_key  TEXT NOT NULL,
    currency    TEXT NOT NULL,
    total_minor BIGINT NOT NULL,
    tool        TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, target_key)
);

-- The simulator's order lookup answers each order's amount and currency.
UPDATE tools SET target_arg = 'order_id', total_result = 'amount_minor', total_currency_result = 'currency'
WHERE name = 'lookup_order' AND provider = 'builtin';

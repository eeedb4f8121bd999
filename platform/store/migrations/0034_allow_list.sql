-- A tenant's allow-list (docs/redaction.md): terms its approvers need to
-- read (catalogue terms, brands, products, places) that name detection
-- must leave alone. term_key is the term folded (lower case, single
-- spaces), unique per tenant.
CREATE TABLE allow_terms (
    tenant_id  TEXT NOT NULL,
    term_key   TEXT NOT NULL,
    term       TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, term_key)
);

-- The rest of the model gateway (docs/models.md).
--
-- A deployment's weight spreads an alias's calls among deployments of
-- equal priority.
ALTER TABLE model_deployments ADD COLUMN weight INTEGER NOT NULL DEFAULT 1;

-- Per-alias routing options: cascade (try the cheapest deployment first,
-- escalate when its answer fails the call's declared check) and an exact
-- match cache (seconds to keep an answer; 0 is off).
CREATE TABLE model_aliases (
    alias       TEXT PRIMARY KEY,
    cascade     INTEGER NOT NULL DEFAULT 0,
    cache_ttl_s INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT NOT NULL
);

-- A tenant's model settings: what of a call's content is stored
-- ('redacted' or 'none') and whether PII in prompts is replaced by keyed
-- tokens before the request leaves Warden. No row: redacted, not
-- outbound.
CREATE TABLE model_tenant_settings (
    tenant_id          TEXT PRIMARY KEY,
    content            TEXT NOT NULL DEFAULT 'redacted',
    outbound_redaction INTEGER NOT NULL DEFAULT 0,
    updated_at         TEXT NOT NULL
);

-- A virtual key's limits on model calls: requests and tokens per minute
-- (0 is no limit of that kind).
CREATE TABLE model_key_limits (
    key_id     TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL,
    rpm        INTEGER NOT NULL DEFAULT 0,
    tpm        INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);

-- A call answered from the cache: nothing was sent upstream or charged.
ALTER TABLE model_calls ADD COLUMN cache_hit INTEGER NOT NULL DEFAULT 0;

-- PostgreSQL translation of ../0020_models.sql (same number, same tables).
-- Model deployments the chat gateway (/v1/chat/completions) routes to: an
-- alias names what agents ask for; deployments sharing an alias are tried
-- in priority order. The upstream API key is sealed (agent/seal), bound
-- to the deployment's id.
CREATE TABLE model_deployments (
    id                  TEXT PRIMARY KEY,
    name                TEXT NOT NULL UNIQUE,
    alias               TEXT NOT NULL,
    priority            BIGINT NOT NULL DEFAULT 0,
    provider            TEXT NOT NULL,
    base_url            TEXT NOT NULL,
    api_key_sealed      TEXT NOT NULL DEFAULT '',
    upstream_model      TEXT NOT NULL,
    input_micros_per_m  BIGINT NOT NULL DEFAULT 0,
    output_micros_per_m BIGINT NOT NULL DEFAULT 0,
    context_window      BIGINT NOT NULL,
    max_output_tokens   BIGINT NOT NULL,
    timeout_ms          BIGINT NOT NULL,
    concurrency         BIGINT NOT NULL,
    enabled             BIGINT NOT NULL DEFAULT 1,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
CREATE INDEX model_deployments_alias ON model_deployments (alias, priority);

-- One row per call to the chat gateway: who called, which alias, which
-- deployments were tried (attempts, JSON), and what it cost. Prompt and
-- completion are stored redacted (agent/redact), never as sent.
CREATE TABLE model_calls (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL,
    key_id         TEXT NOT NULL,
    alias          TEXT NOT NULL,
    deployment     TEXT NOT NULL DEFAULT '',
    attempts       TEXT NOT NULL DEFAULT '[]',
    stream         BIGINT NOT NULL DEFAULT 0,
    status         TEXT NOT NULL,
    http_status    BIGINT NOT NULL DEFAULT 0,
    latency_ms     BIGINT NOT NULL DEFAULT 0,
    ttft_ms        BIGINT NOT NULL DEFAULT 0,
    input_tokens   BIGINT NOT NULL DEFAULT 0,
    output_tokens  BIGINT NOT NULL DEFAULT 0,
    reserved_micros BIGINT NOT NULL DEFAULT 0,
    cost_micros    BIGINT NOT NULL DEFAULT 0,
    prompt         TEXT NOT NULL DEFAULT '',
    completion     TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL
);
CREATE INDEX model_calls_created ON model_calls (created_at, id);

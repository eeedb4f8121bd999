-- PostgreSQL translation of ../0031_mcp_runtime.sql (same number, same tables).
-- The MCP door under the runtime (docs/mcp.md): each upstream tool has its
-- own kill switch (enabled), names the arguments people decide on where it
-- moves money (amount, currency, target: as the tool catalog does), and
-- costs unit_cost_micros of the tenant's budget a call. headers_sealed is
-- a server's extra request headers (JSON object), sealed like its token.
ALTER TABLE mcp_servers ADD COLUMN headers_sealed TEXT NOT NULL DEFAULT '';
ALTER TABLE mcp_tools ADD COLUMN enabled BIGINT NOT NULL DEFAULT 1;
ALTER TABLE mcp_tools ADD COLUMN amount_arg TEXT NOT NULL DEFAULT '';
ALTER TABLE mcp_tools ADD COLUMN currency_arg TEXT NOT NULL DEFAULT '';
ALTER TABLE mcp_tools ADD COLUMN target_arg TEXT NOT NULL DEFAULT '';
ALTER TABLE mcp_tools ADD COLUMN unit_cost_micros BIGINT NOT NULL DEFAULT 0;

-- A high-impact call waits for approval as an action. call_key is bound to
-- the key, the tool and the payload digest, so a client's retry of the same
-- call reattaches to its action instead of proposing a second one;
-- result_sealed is the upstream's answer to the approved call (sealed,
-- bound to its idempotency key), kept for the client that waits or comes
-- back for it.
CREATE TABLE mcp_calls (
    call_key        TEXT PRIMARY KEY,
    action_id       TEXT NOT NULL UNIQUE,
    idempotency_key TEXT NOT NULL UNIQUE,
    result_sealed   TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL
);

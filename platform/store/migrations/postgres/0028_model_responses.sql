-- Stored Responses (POST /v1/responses with store, the default;
-- docs/models.md): kept per tenant and key, so previous_response_id, GET
-- and DELETE find only the caller's own. input and output are the
-- response's own items (JSON lists, redacted), from which the context of
-- a response that continues it is rebuilt (with the items of the
-- responses before it, through previous_id); response is the Response
-- object without its output, redacted. The tenant's trace retention
-- deletes them.
CREATE TABLE model_responses (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    previous_id TEXT NOT NULL DEFAULT '',
    input       TEXT NOT NULL,
    output      TEXT NOT NULL,
    response    TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX model_responses_tenant_created ON model_responses (tenant_id, created_at);

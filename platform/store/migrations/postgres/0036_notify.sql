-- PostgreSQL translation of ../0034_notify.sql (same number, same tables).
-- Notifications (docs/notifications.md). A channel is where messages go:
-- e-mail, a Slack-compatible or Teams webhook, a generic signed webhook,
-- Alertmanager or PagerDuty. config holds what may be shown (host, port,
-- sender, recipients, the URL's host); secret_sealed the rest, sealed
-- (platform/seal, bound to the channel's id): webhook URLs, passwords,
-- signing secrets, routing keys. The last_* columns are its health as
-- deliveries found it.
CREATE TABLE notify_channels (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    config          TEXT NOT NULL,
    secret_sealed   TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    last_ok_at      TEXT NOT NULL DEFAULT '',
    last_failed_at  TEXT NOT NULL DEFAULT '',
    last_error      TEXT NOT NULL DEFAULT '',
    failures        BIGINT NOT NULL DEFAULT 0
);

-- Which channels hear about what, per tenant ('' = every tenant).
-- min_amount_minor and tools narrow action.pending; min_severity narrows
-- alerts.
CREATE TABLE notify_routes (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL DEFAULT '',
    event            TEXT NOT NULL,
    channel_id       TEXT NOT NULL REFERENCES notify_channels (id) ON DELETE CASCADE,
    min_amount_minor BIGINT,
    tools            TEXT NOT NULL DEFAULT '',
    min_severity     TEXT NOT NULL DEFAULT '',
    created_at       TEXT NOT NULL
);
CREATE INDEX notify_routes_event ON notify_routes (event, tenant_id);

-- One message to one channel: its id is the stable message id receivers
-- deduplicate by; message is the rendered, redacted content (what the
-- console shows an approver, never arguments).
CREATE TABLE notify_deliveries (
    id           TEXT PRIMARY KEY,
    channel_id   TEXT NOT NULL REFERENCES notify_channels (id) ON DELETE CASCADE,
    event        TEXT NOT NULL,
    subject      TEXT NOT NULL,
    tenant_id    TEXT NOT NULL DEFAULT '',
    message      TEXT NOT NULL,
    status       TEXT NOT NULL,
    attempts     BIGINT NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    delivered_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX notify_deliveries_channel ON notify_deliveries (channel_id, created_at);

-- A page (PagerDuty incident, Alertmanager alert) per channel and dedup
-- key: open while its alert fires, resolving while its resolution waits
-- out the quiet time (resolve_id: the delivery that will send it),
-- resolved after. A re-fire while resolving keeps the
-- page open and sends nothing: a flapping alert pages once.
CREATE TABLE notify_pages (
    channel_id   TEXT NOT NULL REFERENCES notify_channels (id) ON DELETE CASCADE,
    dedup_key    TEXT NOT NULL,
    state        TEXT NOT NULL,
    resolve_id   TEXT NOT NULL DEFAULT '',
    triggered_at TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (channel_id, dedup_key)
);

-- Installation-wide settings: the quiet time of pages, in seconds, and
-- the share of a pending action's lifetime after which it escalates, and
-- the minutes after which its approvers are reminded (0: never).
CREATE TABLE notify_settings (
    id               BIGINT PRIMARY KEY CHECK (id = 1),
    quiet_seconds    BIGINT NOT NULL,
    escalate_percent BIGINT NOT NULL,
    remind_minutes   BIGINT NOT NULL
);
INSERT INTO notify_settings (id, quiet_seconds, escalate_percent, remind_minutes) VALUES (1, 300, 50, 0);

-- Governed control-plane changes (docs/changes.md): a change that loosens
-- a control waits here for a second admin; one applied at once by break
-- glass is kept here too, until someone reviews it. before_json and
-- after_json are the values shown in the diff; payload_digest binds a
-- decision to them. tenant_id is '' for an installation-wide change.
CREATE TABLE changes (
    id                  TEXT PRIMARY KEY,
    kind                TEXT NOT NULL,
    tenant_id           TEXT NOT NULL DEFAULT '',
    tenant_slug         TEXT NOT NULL DEFAULT '',
    subject             TEXT NOT NULL,
    summary             TEXT NOT NULL,
    before_json         TEXT NOT NULL,
    after_json          TEXT NOT NULL,
    reason              TEXT NOT NULL DEFAULT '',
    payload_digest      TEXT NOT NULL,
    requested_by        TEXT NOT NULL,
    requested_by_name   TEXT NOT NULL,
    requested_by_email  TEXT NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    break_glass         INTEGER NOT NULL DEFAULT 0,
    expires_at          TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    decided_by          TEXT NOT NULL DEFAULT '',
    decided_by_name     TEXT NOT NULL DEFAULT '',
    decision_comment    TEXT NOT NULL DEFAULT '',
    decided_at          TEXT,
    failure             TEXT NOT NULL DEFAULT '',
    reviewed_by_name    TEXT NOT NULL DEFAULT '',
    reviewed_at         TEXT
);
CREATE INDEX changes_status ON changes (status, created_at);
CREATE INDEX changes_subject ON changes (kind, subject, status);

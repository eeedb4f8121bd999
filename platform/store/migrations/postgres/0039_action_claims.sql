-- Take (docs/notifications.md): an approver's advisory claim on a pending
-- action ("Bob is reviewing"). One per action; a claim past expires_at is
-- released (nothing removes it: readers compare with now). It locks
-- nothing: another approver may still decide the action.
CREATE TABLE action_claims (
    action_id      TEXT PRIMARY KEY REFERENCES actions (id) ON DELETE CASCADE,
    principal_id   TEXT NOT NULL,
    principal_name TEXT NOT NULL,
    taken_at       TEXT NOT NULL,
    expires_at     TEXT NOT NULL
);

-- How long a claim holds before it is released by itself.
ALTER TABLE notify_settings ADD COLUMN claim_minutes BIGINT NOT NULL DEFAULT 30;

-- A deployment whose upstream serves POST {base}/responses natively
-- (docs/models.md): an alias whose every enabled deployment has it on is
-- forwarded as Responses; otherwise /v1/responses is translated to Chat
-- Completions. Off (0) by default: every upstream that works today is
-- reached as before.
ALTER TABLE model_deployments ADD COLUMN responses_api INTEGER NOT NULL DEFAULT 0;

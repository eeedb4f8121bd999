-- The model doors (docs/models.md): which OpenAI operation a model call
-- served ('chat' for /v1/chat/completions, 'responses' for /v1/responses,
-- 'embeddings' for /v1/embeddings), and the tags the agent sent with it
-- (x-warden-metadata or the body's metadata: a JSON object of short
-- strings, redacted; '' when none), filterable on the Models page.
ALTER TABLE model_calls ADD COLUMN operation TEXT NOT NULL DEFAULT 'chat';
ALTER TABLE model_calls ADD COLUMN metadata TEXT NOT NULL DEFAULT '';

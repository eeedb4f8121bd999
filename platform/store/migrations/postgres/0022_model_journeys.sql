-- PostgreSQL translation of ../0022_model_journeys.sql (same number, same tables).
-- Model-driven skills (agent/runtime/model.go). A model call a journey
-- made is linked to it; calls from agents outside Warden have no journey.
ALTER TABLE model_calls ADD COLUMN journey_id TEXT NOT NULL DEFAULT '';
CREATE INDEX model_calls_journey ON model_calls (journey_id);

-- The conversation of a model-driven journey (messages, tool calls and
-- their results), so that it resumes after an approval without asking the
-- model again for what it already decided. Tool results carry personal
-- data: the conversation is sealed (agent/seal), bound to the journey id.
-- model_turns counts the model calls made; pending_call is the id of the
-- tool call that awaits approval.
CREATE TABLE journey_conversations (
    journey_id   TEXT PRIMARY KEY REFERENCES journeys (id) ON DELETE CASCADE,
    sealed       TEXT NOT NULL,
    model_turns  BIGINT NOT NULL DEFAULT 0,
    tool_calls   BIGINT NOT NULL DEFAULT 0,
    pending_call TEXT NOT NULL DEFAULT '',
    updated_at   TEXT NOT NULL
);

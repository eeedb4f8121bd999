-- Canary releases (docs/releases.md, "Canary").
--
-- A pointer row may carry a candidate bundle that a share of new journeys
-- runs under, and the floor its success rate must clear to be promoted.
-- Starting, rolling back and promoting a canary each add a pointer row, as
-- activation does: the newest row per (agent, env) still says everything
-- admission needs in one indexed read, and nothing is edited in place.
ALTER TABLE release_pointers ADD COLUMN candidate TEXT NOT NULL DEFAULT '';   -- "" when no canary runs
ALTER TABLE release_pointers ADD COLUMN share INTEGER NOT NULL DEFAULT 0;     -- percent of new journeys, 0-100
ALTER TABLE release_pointers ADD COLUMN floor REAL NOT NULL DEFAULT 0.90;     -- the Wilson lower bound to reach

-- The gate counts a candidate's journeys since the canary started.
CREATE INDEX journeys_release_created ON journeys (release_digest, created_at);
CREATE INDEX actions_journey ON actions (journey_id);
CREATE INDEX audit_events_subject ON audit_events (subject_type, subject_id);

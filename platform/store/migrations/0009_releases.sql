-- Release bundles and pointers (docs/releases.md).
--
-- A bundle is immutable and content-addressed: its digest is the SHA-256
-- of its canonical JSON, so a row can never be changed, only added. A
-- pointer row says which bundle an agent runs in an environment from its
-- time on; the newest row per (agent, env) is the active one, so
-- activation and rollback add rows and history is everything before.
CREATE TABLE release_bundles (
	digest       TEXT PRIMARY KEY, -- "sha256:" + 64 lowercase hex digits
	body         TEXT NOT NULL,    -- the canonical JSON the digest is over
	published_by TEXT NOT NULL,    -- who published it, as the audit actor "type:id"
	author_name  TEXT NOT NULL,
	note         TEXT NOT NULL,
	created_at   TEXT NOT NULL
);

CREATE TRIGGER release_bundles_no_update BEFORE UPDATE ON release_bundles
BEGIN
	SELECT RAISE(ABORT, 'release bundles are immutable');
END;

CREATE TRIGGER release_bundles_no_delete BEFORE DELETE ON release_bundles
BEGIN
	SELECT RAISE(ABORT, 'release bundles are immutable');
END;

CREATE TABLE release_pointers (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	agent       TEXT NOT NULL,
	env         TEXT NOT NULL,
	digest      TEXT NOT NULL REFERENCES release_bundles (digest),
	kind        TEXT NOT NULL,  -- "activated" or "rolled_back"
	author      TEXT NOT NULL,  -- the audit actor "type:id"
	author_name TEXT NOT NULL,
	reason      TEXT NOT NULL,
	created_at  TEXT NOT NULL
);

-- The active bundle is one indexed read: the newest row of (agent, env).
CREATE INDEX release_pointers_target ON release_pointers (agent, env, id);

CREATE TRIGGER release_pointers_no_update BEFORE UPDATE ON release_pointers
BEGIN
	SELECT RAISE(ABORT, 'release pointers are append-only');
END;

CREATE TRIGGER release_pointers_no_delete BEFORE DELETE ON release_pointers
BEGIN
	SELECT RAISE(ABORT, 'release pointers are append-only');
END;

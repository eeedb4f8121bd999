-- PostgreSQL translation of ../0016_release_contents.sql (same number, same tables).
-- Release contents and stored replays (docs/releases.md).
--
-- A bundle names each surface by an identifier; where Warden holds the
-- content (a routing policy, a skill set, a prompt) the identifier is the
-- content's hash and the content is kept here, so the runtime can run
-- under it: rolling back a release rolls back its behaviour. Contents are
-- immutable, like bundles.
CREATE TABLE release_contents (
	id         TEXT PRIMARY KEY, -- "sha256:" + hex SHA-256 of body
	body       TEXT NOT NULL,    -- canonical JSON
	created_at TEXT NOT NULL
);

CREATE TRIGGER release_contents_no_update BEFORE UPDATE ON release_contents
	FOR EACH ROW EXECUTE FUNCTION warden_refuse('release contents are immutable');

CREATE TRIGGER release_contents_no_delete BEFORE DELETE ON release_contents
	FOR EACH ROW EXECUTE FUNCTION warden_refuse('release contents are immutable');

-- A replay is a dry run of a candidate release over recorded journeys. It
-- is kept, so the canary that follows can link the evidence it was
-- started on.
CREATE TABLE release_replays (
	id          TEXT PRIMARY KEY,
	agent       TEXT NOT NULL,
	env         TEXT NOT NULL,
	candidate   TEXT NOT NULL REFERENCES release_bundles (digest),
	skill       TEXT NOT NULL,
	requested   BIGINT NOT NULL, -- how many journeys were asked for
	replayed    BIGINT NOT NULL, -- how many were found and replayed
	agreed      BIGINT NOT NULL, -- how many routed to the same skill
	report      TEXT NOT NULL,    -- the rows, as JSON
	author      TEXT NOT NULL,    -- the audit actor "type:id"
	author_name TEXT NOT NULL,
	created_at  TEXT NOT NULL
);

CREATE INDEX release_replays_candidate ON release_replays (candidate, created_at);

-- /readyz proves the storage is writable again after a write failed for
-- storage reasons (a full disk) by writing and deleting one row here.
CREATE TABLE write_probes (
	at TEXT NOT NULL
);

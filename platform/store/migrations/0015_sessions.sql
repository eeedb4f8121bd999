-- Console sessions live on the server: the browser's cookie holds only a
-- random token, and the row it names (by the token's SHA-256, so a copy of
-- the database opens no session) says who is signed in and until when.
-- Sign-out and an admin's revocation end a session at once; a session
-- also ends after WARDEN_SESSION_IDLE without use, and WARDEN_SESSION_MAX
-- after its sign-in (expires_at).
CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,        -- ULID: shown to admins, names the session in the audit trail
	token_hash   TEXT NOT NULL UNIQUE,    -- hex SHA-256 of the cookie's token
	principal    TEXT NOT NULL REFERENCES principals (id),
	client_addr  TEXT NOT NULL DEFAULT '', -- the address the sign-in came from
	id_token     TEXT NOT NULL DEFAULT '', -- the raw ID token, the id_token_hint of RP-initiated logout
	created_at   TEXT NOT NULL,
	last_seen_at TEXT NOT NULL,           -- updated at most once a minute
	expires_at   TEXT NOT NULL,           -- created_at + WARDEN_SESSION_MAX
	ended_at     TEXT,                    -- sign-out or revocation
	ended_by     TEXT NOT NULL DEFAULT '', -- 'logout', 'revoked', 'replaced'
	CHECK (ended_at IS NOT NULL OR ended_by = '')
);

CREATE INDEX sessions_active ON sessions (ended_at, created_at, id);
CREATE INDEX sessions_principal ON sessions (principal, ended_at);

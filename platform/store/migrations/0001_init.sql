-- Tenants: organisations whose agents run through Warden.
CREATE TABLE tenants (
	id         TEXT PRIMARY KEY,
	slug       TEXT NOT NULL UNIQUE,
	name       TEXT NOT NULL,
	frozen     INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL
);

-- Principals: console users, identified by issuer and subject of a verified
-- OIDC ID token. Roles and tenant scope are refreshed at every login.
CREATE TABLE principals (
	id            TEXT PRIMARY KEY,
	issuer        TEXT NOT NULL,
	subject       TEXT NOT NULL,
	email         TEXT NOT NULL DEFAULT '',
	name          TEXT NOT NULL DEFAULT '',
	roles         TEXT NOT NULL DEFAULT '[]',
	tenants       TEXT NOT NULL DEFAULT '[]',
	first_seen_at TEXT NOT NULL,
	last_login_at TEXT NOT NULL,
	UNIQUE (issuer, subject)
);

-- The hash-chained audit log (docs/audit-format.md). Append-only: the
-- triggers refuse updates and deletes; the chain detects anyone who gets
-- past them.
CREATE TABLE audit_events (
	seq          INTEGER PRIMARY KEY,
	time         TEXT NOT NULL,
	actor_type   TEXT NOT NULL,
	actor_id     TEXT NOT NULL,
	tenant       TEXT NOT NULL DEFAULT '',
	verb         TEXT NOT NULL,
	subject_type TEXT NOT NULL DEFAULT '',
	subject_id   TEXT NOT NULL DEFAULT '',
	details      TEXT NOT NULL DEFAULT '{}',
	prev_hash    TEXT NOT NULL,
	hash         TEXT NOT NULL
);

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
	SELECT RAISE(ABORT, 'audit events are append-only');
END;

CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN
	SELECT RAISE(ABORT, 'audit events are append-only');
END;

CREATE INDEX audit_events_tenant_seq ON audit_events (tenant, seq);

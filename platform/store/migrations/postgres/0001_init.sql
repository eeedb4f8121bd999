-- PostgreSQL translation of ../0001_init.sql (same number, same tables).
-- Types: every INTEGER is BIGINT (money is micro-units), times stay TEXT
-- in store.FormatTime's form so that domain code compares them as text on
-- both engines, flags stay 0/1 integers.

-- warden_refuse is what the append-only triggers call: it refuses the
-- change with the message the trigger names (SQLite's RAISE(ABORT, …)).
CREATE FUNCTION warden_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '%', TG_ARGV[0];
END
$$;

-- SQLite's typeof() and sqlite_schema, for the audit verifier, which
-- reads both engines with one query: columns here are typed, so a TEXT
-- column's value is 'text' and a NULL is 'null'.
CREATE FUNCTION typeof(v anyelement) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN v IS NULL THEN 'null'
		WHEN pg_typeof(v) IN ('text'::regtype, 'character varying'::regtype) THEN 'text'
		ELSE pg_typeof(v)::text END
$$;
CREATE FUNCTION typeof(v text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN v IS NULL THEN 'null' ELSE 'text' END
$$;
CREATE VIEW sqlite_schema AS
	SELECT CASE table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END AS type, table_name::text AS name
	FROM information_schema.tables WHERE table_schema = current_schema();

-- Tenants: organisations whose agents run through Warden.
CREATE TABLE tenants (
	id         TEXT PRIMARY KEY,
	slug       TEXT NOT NULL UNIQUE,
	name       TEXT NOT NULL,
	frozen     BIGINT NOT NULL DEFAULT 0,
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
	seq          BIGINT PRIMARY KEY,
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
	FOR EACH ROW EXECUTE FUNCTION warden_refuse('audit events are append-only');

CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
	FOR EACH ROW EXECUTE FUNCTION warden_refuse('audit events are append-only');

CREATE INDEX audit_events_tenant_seq ON audit_events (tenant, seq);

-- PostgreSQL translation of ../0024_drop_sqlite_emulation.sql (same number).
-- 0001 defined SQLite's typeof() and a sqlite_schema view here, so that
-- the audit verifier and the table listings could send SQLite's queries
-- to both engines. They now ask each engine in its own terms
-- (store.TableNames, store.TableExists, the verifier's pg_typeof), and the
-- emulation goes: nothing in the schema pretends to be SQLite any more.
DROP VIEW sqlite_schema;
DROP FUNCTION typeof(anyelement);
DROP FUNCTION typeof(text);

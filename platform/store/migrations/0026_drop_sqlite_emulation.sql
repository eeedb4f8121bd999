-- Nothing to do on SQLite: typeof() and sqlite_schema are SQLite's own.
-- PostgreSQL's 0024 drops the copies of them that its 0001 defined
-- (postgres/0024_drop_sqlite_emulation.sql); this file keeps the two
-- engines' migrations numbered alike.
SELECT 1;

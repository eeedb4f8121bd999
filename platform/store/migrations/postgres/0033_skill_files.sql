-- PostgreSQL translation of ../0032_skill_files.sql (same number, same tables).
-- Skill files (docs/releases.md).
--
-- A release's skill set names each skill with the SHA-256 of its SKILL.md.
-- The files themselves are kept here, by that hash, whenever Warden loads
-- them, so that a rollback's confirmation can show what changed in a
-- skill's instructions line by line, not only that its hash differs.
-- Like release contents, they are immutable.
CREATE TABLE skill_files (
	hash       TEXT PRIMARY KEY, -- hex SHA-256 of body
	name       TEXT NOT NULL,    -- the skill's name in the file
	body       TEXT NOT NULL,    -- the SKILL.md as read
	created_at TEXT NOT NULL
);

CREATE TRIGGER skill_files_no_update BEFORE UPDATE ON skill_files
	FOR EACH ROW EXECUTE FUNCTION warden_refuse('skill files are immutable');

CREATE TRIGGER skill_files_no_delete BEFORE DELETE ON skill_files
	FOR EACH ROW EXECUTE FUNCTION warden_refuse('skill files are immutable');

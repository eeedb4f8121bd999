-- PostgreSQL translation of ../0010_skill_switches.sql (same number, same tables).
-- Skill kill switches (issue 11). A skill is on unless a row says it is
-- off: skills are defined in code, so a new skill needs no row, and the
-- switch outlives a restart. Who pressed it, when and why is in the audit
-- chain (skill.disabled, skill.enabled); the row keeps the last reason so
-- the Kill switches page can say why a skill is off.
CREATE TABLE skill_switches (
	skill      TEXT PRIMARY KEY,
	enabled    BIGINT NOT NULL CHECK (enabled IN (0, 1)),
	reason     TEXT NOT NULL DEFAULT '',
	changed_by TEXT NOT NULL DEFAULT '',
	changed_at TEXT NOT NULL
);

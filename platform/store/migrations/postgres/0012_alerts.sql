-- PostgreSQL translation of ../0012_alerts.sql (same number, same tables).
-- Alerts (issue 11). A skill without a row in alert_rules uses the
-- built-in defaults (alerts.DefaultRule); a row holds what an admin set.
-- Who set it and the values it replaced are in the audit chain
-- (alert.rule_set).
CREATE TABLE alert_rules (
	skill                TEXT PRIMARY KEY,
	failure_rate_percent BIGINT NOT NULL CHECK (failure_rate_percent BETWEEN 1 AND 100),
	p99_latency_ms       BIGINT NOT NULL CHECK (p99_latency_ms > 0),
	window_minutes       BIGINT NOT NULL CHECK (window_minutes BETWEEN 1 AND 1440),
	min_journeys         BIGINT NOT NULL CHECK (min_journeys >= 1),
	changed_by           TEXT NOT NULL DEFAULT '',
	changed_at           TEXT NOT NULL
);

-- Alerts that fired: subject is the skill (failure_rate, p99_latency) or
-- the tenant id (budget_burn). value and threshold are in the kind's unit
-- (percent, milliseconds, percent). At most one alert of a kind and
-- subject is firing at a time.
CREATE TABLE alerts (
	id          TEXT PRIMARY KEY,
	kind        TEXT NOT NULL CHECK (kind IN ('failure_rate', 'p99_latency', 'budget_burn')),
	subject     TEXT NOT NULL,
	value       BIGINT NOT NULL,
	threshold   BIGINT NOT NULL,
	fired_at    TEXT NOT NULL,
	resolved_at TEXT
);
CREATE UNIQUE INDEX alerts_firing ON alerts (kind, subject) WHERE resolved_at IS NULL;
CREATE INDEX alerts_resolved ON alerts (resolved_at);

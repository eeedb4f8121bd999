-- Running totals of spend, so the Budgets page costs the same at ten
-- million journeys a month as at ten (docs/architecture.md, "Spend
-- totals"). Before, the page added up every journey, action and model call
-- of the period on each view.
--
-- spend_totals holds, per tenant, UTC day, kind and virtual key, what the
-- rows the page itemises cost and how many there are: journeys that cost
-- anything (by created_at), actions charged outside any journey (by
-- charged_at) and model calls (by created_at). A period (day, month,
-- total) is the sum of its days. top_journeys keeps each tenant's five
-- costliest journeys of each UTC day, from which a period's top spenders
-- are chosen.
--
-- The triggers below keep both in step with the rows, in the statement
-- that writes a row and so in its transaction: whichever path settles a
-- journey, charges an action or records a model call, and however many do
-- so at once, the totals move with it or not at all. An increment is an
-- upsert on the bucket's row, which writers take turns on. Deleting a row
-- (trace retention) leaves the totals alone: a purged journey still cost
-- what it cost this month. Journeys' and model calls' tenant, key and
-- creation time never change after insert.
CREATE TABLE spend_totals (
	tenant_id TEXT NOT NULL,
	day       TEXT NOT NULL,    -- the UTC day's start, in store.FormatTime's form
	kind      TEXT NOT NULL,    -- journey, action or model
	key_id    TEXT NOT NULL,    -- the virtual key ('' when none)
	micros    INTEGER NOT NULL DEFAULT 0,
	items     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (tenant_id, day, kind, key_id)
);

CREATE TABLE top_journeys (
	tenant_id  TEXT NOT NULL,
	day        TEXT NOT NULL,
	journey_id TEXT NOT NULL,
	micros     INTEGER NOT NULL,
	PRIMARY KEY (tenant_id, day, journey_id)
);
CREATE INDEX top_journeys_rank ON top_journeys (tenant_id, day, micros DESC, journey_id DESC);

-- Journeys: one costs from its first micro-unit on; its cost may grow
-- (an approved step resumed), so an update adds the difference.
CREATE TRIGGER spend_journeys_insert AFTER INSERT ON journeys
WHEN NEW.cost_micros > 0
BEGIN
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
	VALUES (NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', 'journey', NEW.key_id, NEW.cost_micros, 1)
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
	INSERT INTO top_journeys (tenant_id, day, journey_id, micros)
	SELECT NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', NEW.id, NEW.cost_micros
	WHERE (SELECT COUNT(*) FROM top_journeys WHERE tenant_id = NEW.tenant_id
		AND day = substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z'
		AND (micros > NEW.cost_micros OR (micros = NEW.cost_micros AND journey_id > NEW.id))) < 5
	ON CONFLICT (tenant_id, day, journey_id) DO UPDATE SET micros = excluded.micros;
	DELETE FROM top_journeys WHERE tenant_id = NEW.tenant_id AND day = substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z'
		AND journey_id IN (SELECT journey_id FROM top_journeys WHERE tenant_id = NEW.tenant_id
			AND day = substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z'
			ORDER BY micros DESC, journey_id DESC LIMIT -1 OFFSET 5);
END;

CREATE TRIGGER spend_journeys_update AFTER UPDATE OF cost_micros ON journeys
WHEN NEW.cost_micros IS NOT OLD.cost_micros
BEGIN
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
	VALUES (NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', 'journey', NEW.key_id,
		max(NEW.cost_micros, 0) - max(OLD.cost_micros, 0), (NEW.cost_micros > 0) - (OLD.cost_micros > 0))
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
	DELETE FROM top_journeys WHERE tenant_id = NEW.tenant_id AND day = substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z'
		AND journey_id = NEW.id AND NEW.cost_micros <= 0;
	INSERT INTO top_journeys (tenant_id, day, journey_id, micros)
	SELECT NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', NEW.id, NEW.cost_micros
	WHERE NEW.cost_micros > 0 AND (SELECT COUNT(*) FROM top_journeys WHERE tenant_id = NEW.tenant_id
		AND day = substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z'
		AND (micros > NEW.cost_micros OR (micros = NEW.cost_micros AND journey_id > NEW.id))) < 5
	ON CONFLICT (tenant_id, day, journey_id) DO UPDATE SET micros = excluded.micros;
	DELETE FROM top_journeys WHERE tenant_id = NEW.tenant_id AND day = substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z'
		AND journey_id IN (SELECT journey_id FROM top_journeys WHERE tenant_id = NEW.tenant_id
			AND day = substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z'
			ORDER BY micros DESC, journey_id DESC LIMIT -1 OFFSET 5);
END;

-- A purged journey leaves the top list (the page shows journeys that
-- exist); the totals keep its cost.
CREATE TRIGGER spend_journeys_delete AFTER DELETE ON journeys
WHEN OLD.cost_micros > 0
BEGIN
	DELETE FROM top_journeys WHERE tenant_id = OLD.tenant_id AND day = substr(OLD.created_at, 1, 10) || 'T00:00:00.000000000Z'
		AND journey_id = OLD.id;
END;

-- Actions count once charged outside any journey (an action a journey
-- proposed is part of its journey's cost). A charge is written after the
-- action, so an update takes the old row's part out and puts the new
-- one's in.
CREATE TRIGGER spend_actions_insert AFTER INSERT ON actions
WHEN NEW.journey_id = '' AND NEW.charged_at IS NOT NULL
BEGIN
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
	VALUES (NEW.tenant_id, substr(NEW.charged_at, 1, 10) || 'T00:00:00.000000000Z', 'action', NEW.key_id, NEW.cost_micros, 1)
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
END;

CREATE TRIGGER spend_actions_update AFTER UPDATE OF cost_micros, charged_at, journey_id ON actions
BEGIN
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
	SELECT OLD.tenant_id, substr(OLD.charged_at, 1, 10) || 'T00:00:00.000000000Z', 'action', OLD.key_id, -OLD.cost_micros, -1
	WHERE OLD.journey_id = '' AND OLD.charged_at IS NOT NULL
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
	SELECT NEW.tenant_id, substr(NEW.charged_at, 1, 10) || 'T00:00:00.000000000Z', 'action', NEW.key_id, NEW.cost_micros, 1
	WHERE NEW.journey_id = '' AND NEW.charged_at IS NOT NULL
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
END;

-- Model calls: every call counts, whatever it cost.
CREATE TRIGGER spend_model_calls_insert AFTER INSERT ON model_calls
BEGIN
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
	VALUES (NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', 'model', NEW.key_id, NEW.cost_micros, 1)
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
END;

CREATE TRIGGER spend_model_calls_update AFTER UPDATE OF cost_micros ON model_calls
WHEN NEW.cost_micros IS NOT OLD.cost_micros
BEGIN
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
	VALUES (NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', 'model', NEW.key_id, NEW.cost_micros - OLD.cost_micros, 0)
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
END;

-- What was spent before this migration, from the rows still kept.
INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
SELECT tenant_id, substr(created_at, 1, 10) || 'T00:00:00.000000000Z', 'journey', key_id, SUM(cost_micros), COUNT(*)
FROM journeys WHERE cost_micros > 0
GROUP BY tenant_id, substr(created_at, 1, 10), key_id;

INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
SELECT tenant_id, substr(charged_at, 1, 10) || 'T00:00:00.000000000Z', 'action', key_id, SUM(cost_micros), COUNT(*)
FROM actions WHERE journey_id = '' AND charged_at IS NOT NULL
GROUP BY tenant_id, substr(charged_at, 1, 10), key_id;

INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items)
SELECT tenant_id, substr(created_at, 1, 10) || 'T00:00:00.000000000Z', 'model', key_id, SUM(cost_micros), COUNT(*)
FROM model_calls
GROUP BY tenant_id, substr(created_at, 1, 10), key_id;

INSERT INTO top_journeys (tenant_id, day, journey_id, micros)
SELECT tenant_id, day, id, cost_micros FROM (
	SELECT tenant_id, substr(created_at, 1, 10) || 'T00:00:00.000000000Z' AS day, id, cost_micros,
		row_number() OVER (PARTITION BY tenant_id, substr(created_at, 1, 10) ORDER BY cost_micros DESC, id DESC) AS rank
	FROM journeys WHERE cost_micros > 0
) ranked WHERE rank <= 5;

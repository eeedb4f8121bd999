-- PostgreSQL translation of ../0037_spend_totals.sql (same number, same tables).
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
-- upsert on the bucket's row (INSERT … ON CONFLICT DO UPDATE takes the
-- row's lock, so concurrent increments take turns and none is lost).
-- Deleting a row (trace retention) leaves the totals alone: a purged
-- journey still cost what it cost this month. Journeys' and model calls'
-- tenant, key and creation time never change after insert.
CREATE TABLE spend_totals (
	tenant_id TEXT NOT NULL,
	day       TEXT NOT NULL,    -- the UTC day's start, in store.FormatTime's form
	kind      TEXT NOT NULL,    -- journey, action or model
	key_id    TEXT NOT NULL,    -- the virtual key ('' when none)
	micros    BIGINT NOT NULL DEFAULT 0,
	items     BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (tenant_id, day, kind, key_id)
);

CREATE TABLE top_journeys (
	tenant_id  TEXT NOT NULL,
	day        TEXT NOT NULL,
	journey_id TEXT NOT NULL,
	micros     BIGINT NOT NULL,
	PRIMARY KEY (tenant_id, day, journey_id)
);
CREATE INDEX top_journeys_rank ON top_journeys (tenant_id, day, micros DESC, journey_id DESC);

-- spend_add adds micros and items to a bucket (the SQLite triggers' upsert).
CREATE FUNCTION spend_add(t TEXT, d TEXT, k TEXT, key TEXT, m BIGINT, n BIGINT) RETURNS void LANGUAGE sql AS $$
	INSERT INTO spend_totals (tenant_id, day, kind, key_id, micros, items) VALUES (t, d, k, key, m, n)
	ON CONFLICT (tenant_id, day, kind, key_id) DO UPDATE SET
		micros = spend_totals.micros + excluded.micros, items = spend_totals.items + excluded.items;
$$;

-- Journeys: one costs from its first micro-unit on; its cost may grow
-- (an approved step resumed), so an update adds the difference. A purged
-- journey leaves the top list (the page shows journeys that exist); the
-- totals keep its cost.
CREATE FUNCTION spend_journeys() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	d TEXT;
BEGIN
	IF TG_OP = 'DELETE' THEN
		DELETE FROM top_journeys WHERE tenant_id = OLD.tenant_id
			AND day = substr(OLD.created_at, 1, 10) || 'T00:00:00.000000000Z' AND journey_id = OLD.id;
		RETURN NULL;
	END IF;
	d := substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z';
	IF TG_OP = 'INSERT' THEN
		PERFORM spend_add(NEW.tenant_id, d, 'journey', NEW.key_id, NEW.cost_micros, 1);
	ELSE
		PERFORM spend_add(NEW.tenant_id, d, 'journey', NEW.key_id,
			GREATEST(NEW.cost_micros, 0) - GREATEST(OLD.cost_micros, 0),
			(CASE WHEN NEW.cost_micros > 0 THEN 1 ELSE 0 END) - (CASE WHEN OLD.cost_micros > 0 THEN 1 ELSE 0 END));
		IF NEW.cost_micros <= 0 THEN
			DELETE FROM top_journeys WHERE tenant_id = NEW.tenant_id AND day = d AND journey_id = NEW.id;
			RETURN NULL;
		END IF;
	END IF;
	INSERT INTO top_journeys (tenant_id, day, journey_id, micros)
	SELECT NEW.tenant_id, d, NEW.id, NEW.cost_micros
	WHERE (SELECT COUNT(*) FROM top_journeys WHERE tenant_id = NEW.tenant_id AND day = d
		AND (micros > NEW.cost_micros OR (micros = NEW.cost_micros AND journey_id > NEW.id))) < 5
	ON CONFLICT (tenant_id, day, journey_id) DO UPDATE SET micros = excluded.micros;
	DELETE FROM top_journeys WHERE tenant_id = NEW.tenant_id AND day = d
		AND journey_id IN (SELECT journey_id FROM top_journeys WHERE tenant_id = NEW.tenant_id AND day = d
			ORDER BY micros DESC, journey_id DESC OFFSET 5);
	RETURN NULL;
END
$$;

CREATE TRIGGER spend_journeys_insert AFTER INSERT ON journeys
	FOR EACH ROW WHEN (NEW.cost_micros > 0) EXECUTE FUNCTION spend_journeys();
CREATE TRIGGER spend_journeys_update AFTER UPDATE OF cost_micros ON journeys
	FOR EACH ROW WHEN (NEW.cost_micros IS DISTINCT FROM OLD.cost_micros) EXECUTE FUNCTION spend_journeys();
CREATE TRIGGER spend_journeys_delete AFTER DELETE ON journeys
	FOR EACH ROW WHEN (OLD.cost_micros > 0) EXECUTE FUNCTION spend_journeys();

-- Actions count once charged outside any journey (an action a journey
-- proposed is part of its journey's cost). A charge is written after the
-- action, so an update takes the old row's part out and puts the new
-- one's in.
CREATE FUNCTION spend_actions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.journey_id = '' AND OLD.charged_at IS NOT NULL THEN
		PERFORM spend_add(OLD.tenant_id, substr(OLD.charged_at, 1, 10) || 'T00:00:00.000000000Z', 'action', OLD.key_id, -OLD.cost_micros, -1);
	END IF;
	IF NEW.journey_id = '' AND NEW.charged_at IS NOT NULL THEN
		PERFORM spend_add(NEW.tenant_id, substr(NEW.charged_at, 1, 10) || 'T00:00:00.000000000Z', 'action', NEW.key_id, NEW.cost_micros, 1);
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER spend_actions_insert AFTER INSERT ON actions
	FOR EACH ROW WHEN (NEW.journey_id = '' AND NEW.charged_at IS NOT NULL) EXECUTE FUNCTION spend_actions();
CREATE TRIGGER spend_actions_update AFTER UPDATE OF cost_micros, charged_at, journey_id ON actions
	FOR EACH ROW EXECUTE FUNCTION spend_actions();

-- Model calls: every call counts, whatever it cost.
CREATE FUNCTION spend_model_calls() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM spend_add(NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', 'model', NEW.key_id, NEW.cost_micros, 1);
	ELSE
		PERFORM spend_add(NEW.tenant_id, substr(NEW.created_at, 1, 10) || 'T00:00:00.000000000Z', 'model', NEW.key_id, NEW.cost_micros - OLD.cost_micros, 0);
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER spend_model_calls_insert AFTER INSERT ON model_calls
	FOR EACH ROW EXECUTE FUNCTION spend_model_calls();
CREATE TRIGGER spend_model_calls_update AFTER UPDATE OF cost_micros ON model_calls
	FOR EACH ROW WHEN (NEW.cost_micros IS DISTINCT FROM OLD.cost_micros) EXECUTE FUNCTION spend_model_calls();

-- What was spent before this migration, from the rows still kept. The
-- triggers above exist already and lock their tables until this commits,
-- so a row another process writes meanwhile is counted once.
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

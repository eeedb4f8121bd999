-- Fewer index entries written per journey (docs/performance.md). Every
-- journey is inserted as 'running' and most end 'completed': the indexes
-- below that serve status filters leave both statuses out, so the insert
-- and the final update of an ordinary journey touch two indexes fewer.
--
-- The costliest journeys of a budget period come from top_journeys since
-- 0037: nothing reads journeys by cost any more.
DROP INDEX journeys_tenant_cost;
-- The traces page filtered by a rare status (failed, refused, awaiting
-- approval, ...), of one tenant or of all: the query repeats this WHERE
-- (journeys.ListJourneys). Completed journeys, the bulk, fill a page from
-- journeys_tenant_id or the primary key without an index of their own.
DROP INDEX journeys_tenant_status_id;
DROP INDEX journeys_status_id;
CREATE INDEX journeys_tenant_status_id ON journeys (tenant_id, status, id) WHERE status <> 'running' AND status <> 'completed';
CREATE INDEX journeys_status_id ON journeys (status, id) WHERE status <> 'running' AND status <> 'completed';
-- The journeys running now (a few per replica): the sweeps and the
-- traces page filtered by 'running' (the status column lets SQLite's
-- planner prefer this index to journeys_created for the sweeps).
CREATE INDEX journeys_running ON journeys (status, id) WHERE status = 'running';

-- Routes that name people or a group (docs/notifications.md): a route's
-- recipients are principals by e-mail or subject, identity-provider groups
-- ("group:payments"), or "assignee" and "owner" (the approver who took an
-- action, the owner of the key that proposed it). Their messages go by
-- e-mail through the route's e-mail channel. A principal's groups are
-- kept from the groups claim at each sign-in, to find a group's members.
ALTER TABLE notify_routes ADD COLUMN recipients TEXT NOT NULL DEFAULT '';
ALTER TABLE principals ADD COLUMN idp_groups TEXT NOT NULL DEFAULT '[]';

-- Lanes of the job queue: notification deliveries run in a lane of their
-- own ('notify'), with their own workers, so they never wait behind or
-- hold up the execution of approved actions.
ALTER TABLE jobs ADD COLUMN queue TEXT NOT NULL DEFAULT 'default';
DROP INDEX jobs_ready;
CREATE INDEX jobs_ready ON jobs (queue, state, run_at);

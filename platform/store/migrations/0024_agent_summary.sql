-- An action's summary is the headline approvers read, and Warden writes
-- it from the call (tool, declared target, amount). What an agent said
-- about its call through /v1/actions is kept apart, in agent_summary, and
-- shown attributed to the agent, never as the headline.
ALTER TABLE actions ADD COLUMN agent_summary TEXT NOT NULL DEFAULT '';

-- Proposals of tools other than the three with sentences of their own
-- kept the agent's words as their summary. They become the agent's
-- summary, and the headline Warden's sentence; without the amount, which
-- SQL cannot format as people read it (it stays beside the headline).
UPDATE actions SET agent_summary = summary,
	summary = 'Call ' || tool || CASE WHEN target_label != '' THEN ' on ' || target_label ELSE '' END
WHERE journey_id = '' AND requested_by = '' AND key_id != '' AND compensates = ''
	AND tool NOT IN ('issue_refund', 'reverse_refund', 'send_customer_email');

-- A reversal's headline is "Reverse: " and the headline of what it reverses.
UPDATE actions SET summary = 'Reverse: ' || (SELECT o.summary FROM actions o WHERE o.id = actions.compensates)
WHERE compensates IN (SELECT id FROM actions WHERE agent_summary != '');

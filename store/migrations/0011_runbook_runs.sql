-- Reserved for runbook runs.
SELECT 1;

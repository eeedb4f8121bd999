-- Reserved for canary releases.
SELECT 1;

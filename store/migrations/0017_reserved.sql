-- Reserved for the migration being built on another branch (issue 13,
-- the other half); replaced by it on merge.
SELECT 1;

-- Reserved for release bundles.
SELECT 1;

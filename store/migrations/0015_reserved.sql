-- Reserved for the server-side sessions migration being built on another
-- branch; replaced by it on merge.
SELECT 1;

-- PostgreSQL translation of ../0007_pii_at_rest.sql (same number, same tables).
-- Personal data at rest (security review, finding 5).
--
-- An Idempotency-Key is now stored only as the SHA-256 of the key bound to
-- its owner (agent/idempotency). The raw keys kept so far cannot be hashed
-- in SQL, and the responses kept with them echo the raw X-Correlation-Id:
-- both go. The rows only serve a client's retries, so the cost is that a
-- retry of a request first sent before the upgrade runs afresh instead of
-- replaying the first answer.
DELETE FROM idempotency;

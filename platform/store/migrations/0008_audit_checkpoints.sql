-- Signed checkpoints of the audit chain (docs/audit-format.md, section 7).
--
-- A checkpoint is the chain's head at one moment, signed with the
-- installation's Ed25519 key: once the head is signed, cutting events from
-- the end of the chain, or rewriting and rehashing it from some seq on, no
-- longer passes verification. One checkpoint per head: seq is the key.
CREATE TABLE audit_checkpoints (
	seq       INTEGER PRIMARY KEY, -- the head's seq; 0 for the empty chain
	hash      TEXT NOT NULL,       -- the head's hash, 64 lowercase hex digits
	time      TEXT NOT NULL,       -- when it was signed, in the audit time format
	signature TEXT NOT NULL,       -- Ed25519 signature, standard base64
	key       TEXT NOT NULL        -- the public key that signed, "ed25519:<base64>"
);

CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
BEGIN
	SELECT RAISE(ABORT, 'audit checkpoints are append-only');
END;

CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
BEGIN
	SELECT RAISE(ABORT, 'audit checkpoints are append-only');
END;

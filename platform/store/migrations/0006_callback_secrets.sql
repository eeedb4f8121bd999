-- Each key signs its callbacks with its own secret ("whsec_…"), shown once
-- with the key. It is kept only sealed with the installation's key
-- (sealing.key in the data directory; associated data: the key's id), so a
-- copy of this database alone cannot forge callbacks. Before this change
-- callbacks were keyed by secret_hash, which the database holds in the
-- clear: keys created earlier have no callback secret and get no callbacks
-- until an admin generates one on the key's page.
--
-- A rotation keeps the secret it replaced, sealed, until
-- callback_secret_prev_until: meanwhile callbacks carry a signature by each.
ALTER TABLE virtual_keys ADD COLUMN callback_secret_sealed TEXT;
ALTER TABLE virtual_keys ADD COLUMN callback_secret_set_at TEXT;
ALTER TABLE virtual_keys ADD COLUMN callback_secret_prev_sealed TEXT;
ALTER TABLE virtual_keys ADD COLUMN callback_secret_prev_until TEXT;

-- An approved action Warden executes reserves its cost on the tenant's
-- budget in the approval's transaction; execution settles it.
ALTER TABLE actions ADD COLUMN reserved_micros INTEGER NOT NULL DEFAULT 0;

-- Published buttons of runbooks from the runbook directory
-- (docs/runbooks.md): a button runs only when its definition's digest
-- (label, tool and arguments) is the one published here, by a second admin
-- approving a runbook.publish change (docs/changes.md). One row per button:
-- publishing again replaces it, and a button whose file changed is held
-- until then. The embedded runbooks' buttons need no row. Owned by the
-- runbooks package.
CREATE TABLE runbook_buttons (
	runbook          TEXT NOT NULL,
	action           TEXT NOT NULL,
	digest           TEXT NOT NULL,
	label            TEXT NOT NULL,
	tool             TEXT NOT NULL,
	args_json        TEXT NOT NULL,
	change_id        TEXT NOT NULL DEFAULT '',  -- '' when applied by break glass
	approved_by      TEXT NOT NULL,             -- principal id
	approved_by_name TEXT NOT NULL DEFAULT '',
	approved_at      TEXT NOT NULL,
	PRIMARY KEY (runbook, action)
);

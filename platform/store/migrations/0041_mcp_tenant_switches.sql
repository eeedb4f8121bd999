-- A tool switched off for one tenant may be an MCP server's tool, named as
-- the runtime names it (SERVER__TOOL), not only a catalog tool: the switch
-- no longer references tools (name). catalog.SwitchForTenant checks that
-- the name is a catalog tool or a listed MCP tool. SQLite cannot drop a
-- foreign key, so the table is rebuilt.
CREATE TABLE tool_tenant_switches_new (
	tool        TEXT NOT NULL,
	tenant_id   TEXT NOT NULL REFERENCES tenants (id),
	reason      TEXT NOT NULL DEFAULT '',
	switched_by TEXT NOT NULL DEFAULT '',
	switched_at TEXT NOT NULL,
	PRIMARY KEY (tool, tenant_id)
);

INSERT INTO tool_tenant_switches_new (tool, tenant_id, reason, switched_by, switched_at)
	SELECT tool, tenant_id, reason, switched_by, switched_at FROM tool_tenant_switches;
DROP TABLE tool_tenant_switches;
ALTER TABLE tool_tenant_switches_new RENAME TO tool_tenant_switches;

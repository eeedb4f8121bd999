-- A tool switched off for one tenant may be an MCP server's tool, named as
-- the runtime names it (SERVER__TOOL), not only a catalog tool: the switch
-- no longer references tools (name). catalog.SwitchForTenant checks that
-- the name is a catalog tool or a listed MCP tool.
ALTER TABLE tool_tenant_switches DROP CONSTRAINT tool_tenant_switches_tool_fkey;

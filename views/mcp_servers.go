package views

import (
	"github.com/a-h/templ"

	"github.com/wardenhq/warden/mcpservers"
)

// MCPServersView is the MCP servers page: the upstream servers with their
// tools and classes, and the form that adds a server.
type MCPServersView struct {
	Servers []MCPServerRow
	CanEdit bool // all-tenant admins change servers
	Form    MCPServerForm
	Errors  FieldErrors
	Notice  string
	Failed  bool // Notice says the last action failed (a discovery)
}

// MCPServerRow is one server and the tools its discoveries found.
type MCPServerRow struct {
	Server mcpservers.Server
	Tools  []mcpservers.Tool
}

// MCPServerForm is what the add form posts, as typed.
type MCPServerForm struct {
	Name, URL, Timeout, Owner string
}

func mcpServerURL(name, action string) templ.SafeURL {
	return templ.SafeURL("/mcp-servers/" + name + "/" + action)
}

func mcpSwitchAction(enabled bool) string {
	if enabled {
		return "disable"
	}
	return "enable"
}

// mcpClass is a tool's class as the page shows it.
func mcpClass(t mcpservers.Tool) string {
	switch {
	case !t.Classified():
		return "unclassified"
	case t.Reversible:
		return t.Impact + " impact, reversible"
	default:
		return t.Impact + " impact, irreversible"
	}
}

package views

import (
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/mcpservers"
)

// MCPServersView is the MCP servers page: the upstream servers with their
// state, activity and tools, and the form that adds a server.
type MCPServersView struct {
	Servers []MCPServerRow
	CanEdit bool // all-tenant admins change servers
	Form    MCPServerForm
	Errors  FieldErrors
	Notice  string
	Failed  bool // Notice says the last action failed (a discovery)
	// Classify is the classification form that was refused, as typed,
	// with its errors: shown again at its tool.
	Classify *MCPClassifyForm
}

// MCPServerRow is one server, what it did in the last hour, and the tools
// its discoveries found.
type MCPServerRow struct {
	Server mcpservers.Server
	Tools  []mcpservers.Tool
	// HeaderNames are the names of its extra headers (their values are
	// never shown); HeaderError says why they could not be read.
	HeaderNames []string
	HeaderError string
	// LastHour counts its calls through /mcp in the last hour (from the
	// audit trail); Capped: at least that many, the count stopped.
	LastHour mcpservers.Calls
	Capped   bool
	// OffReason is why it was switched off, when it is off.
	OffReason string
	// Breaker is the state of the guard in front of the upstream ("closed",
	// "open", "half-open"), filled from the door's guard health; "" when
	// there is none to show, and then nothing is shown.
	Breaker string
}

// MCPServerForm is what the add and edit forms post, as typed (never the
// token or the headers: they are not shown again).
type MCPServerForm struct {
	Name, URL, Timeout, Owner string
}

// MCPServerEditView is the page that changes a server's settings and
// replaces its secrets.
type MCPServerEditView struct {
	Name        string
	Form        MCPServerForm
	HasToken    bool
	HeaderNames []string
	Errors      FieldErrors
}

// MCPClassifyForm is a tool's classification as typed.
type MCPClassifyForm struct {
	Server, Tool                                string
	Impact                                      string
	Reversible                                  bool
	AmountArg, CurrencyArg, TargetArg, UnitCost string
	Errors                                      FieldErrors
}

// classifyFormFor is the classification form of a tool: as typed when it
// was just refused, else as stored.
func (v MCPServersView) classifyFormFor(t mcpservers.Tool) MCPClassifyForm {
	if c := v.Classify; c != nil && c.Server == t.Server && c.Tool == t.Name {
		return *c
	}
	return MCPClassifyForm{Server: t.Server, Tool: t.Name, Impact: t.Impact, Reversible: t.Reversible, AmountArg: t.AmountArg,
		CurrencyArg: t.CurrencyArg, TargetArg: t.TargetArg, UnitCost: MoneyInput(t.UnitCostMicros)}
}

func mcpServerURL(name, action string) templ.SafeURL {
	return templ.SafeURL("/mcp-servers/" + name + "/" + action)
}

// MCPClass is a tool's class as the pages show it.
func MCPClass(t mcpservers.Tool) string {
	switch {
	case !t.Classified():
		return "unclassified"
	case t.Reversible:
		return t.Impact + " impact, reversible"
	default:
		return t.Impact + " impact, irreversible"
	}
}

// mcpMoney says which arguments a classified tool's money is in.
func mcpMoney(t mcpservers.Tool) string {
	var parts []string
	if t.AmountArg != "" {
		parts = append(parts, "amount "+t.AmountArg+" ("+t.CurrencyArg+")")
	}
	if t.TargetArg != "" {
		parts = append(parts, "target "+t.TargetArg)
	}
	if t.UnitCostMicros > 0 {
		parts = append(parts, "costs "+Money(t.UnitCostMicros)+" a call")
	}
	return strings.Join(parts, "; ")
}

// fid is a form field's id, unique on a page with one form per tool.
func fid(f MCPClassifyForm, name string) string { return "c-" + f.Server + "-" + f.Tool + "-" + name }

func tokenHelp(has bool) string {
	if has {
		return "A token is set and is not shown. Leave this empty to keep it."
	}
	return "None is set. Optional; stored sealed and never shown again."
}

func headersHelp(names []string) string {
	h := "One a line as Name: value, sent with every request to the server; stored sealed, and only their names are shown again. Authorization (use the token), Host, Content-Type, Mcp-Session-Id and the like are Warden's. "
	if len(names) == 0 {
		return h + "None are set."
	}
	return h + "Set now: " + strings.Join(names, ", ") + ". Leave this empty to keep them; what you type replaces them all (type them again after an error)."
}

// callsPerMinute is an hour's count as calls a minute, one decimal.
func callsPerMinute(n int) string {
	return strconv.FormatFloat(float64(n)/60, 'f', 1, 64)
}

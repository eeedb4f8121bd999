package views

import (
	"github.com/a-h/templ"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

// ToolsView lists the tool catalog.
type ToolsView struct {
	Tools []tools.Tool
	// Switches say why a tool that is off was switched off, by name.
	Switches map[string]catalog.SwitchState
	CanEdit  bool // the admin may change the catalog (all-tenant scope)
	Notice   string
	Owners   map[string]string // tool name → owner (owners.Of); none when absent
}

// ToolForm is what the tool form posts, as typed.
type ToolForm struct {
	Name             string
	Description      string
	Impact           string
	Reversibility    string
	CompensatingTool string
	Provider         string
	WebhookURL       string
	Timeout          string // milliseconds
	MaxAttempts      string
	ArgsSchema       string
	ApprovalTTL      string // seconds
	UnitCost         string // currency units
	AmountArg        string
	CurrencyArg      string
	TargetArg        string
	TotalArg         string
	TotalResult      string // a lookup's result member holding its target's total
	TotalCurrency    string // and the one holding that total's currency
	Enabled          bool   // new tools only; the switch has its own buttons
}

// ToolFormView is the create or edit form.
type ToolFormView struct {
	New       bool
	Form      ToolForm
	Enabled   bool     // the stored switch, when editing
	ToolNames []string // for the compensating tool
	// Pending are the changes to this tool waiting for a second admin.
	Pending []changes.Change
	Errors  FieldErrors
	// Owner is who owns the tool; OwnerPending the owner changes waiting.
	Owner        string
	OwnerPending []changes.Change
	OwnerForm    OwnerForm // the owner form as typed, when it was refused
}

// ToolSwitchView asks before switching a tool off.
type ToolSwitchView struct {
	Tool   tools.Tool
	Reason string      // what was typed, when the page comes back with an error
	Errors FieldErrors // the reason's error
}

var (
	toolImpacts = []struct{ Value, Label string }{
		{string(risk.ImpactLow), "low (reads)"},
		{string(risk.ImpactMedium), "medium (internal writes)"},
		{string(risk.ImpactHigh), "high (needs approval)"},
	}
	toolReversibilities = []string{string(risk.Reversible), string(risk.Compensatable), string(risk.Irreversible)}
	toolProviders       = []struct{ Value, Label string }{
		{tools.ProviderBuiltin, "builtin"},
		{tools.ProviderHTTP, "http webhook"},
		{tools.ProviderExternal, "external"},
	}
)

// schemaMarks are the fields schema declares personal; a schema that
// cannot be read marks none here (the form says what is wrong with it).
func schemaMarks(schema string) []redact.Mark {
	d, _ := redact.DeclaredIn([]byte(schema))
	return d.Marks()
}

func toolFormAction(v ToolFormView) templ.SafeURL {
	if v.New {
		return "/tools"
	}
	return templ.SafeURL("/tools/" + v.Form.Name)
}

func (v ToolSwitchView) confirm() ConfirmView {
	name := v.Tool.Name
	c := ConfirmView{
		Title:  toolDisableTitle(name),
		Effect: toolDisableEffect(name),
		Action: templ.SafeURL("/tools/" + name + "/disable"),
		Submit: "Switch off " + name,
		Danger: true,
		Cancel: "/tools",
		Fields: reasonField("tool-off-reason", "Say why, e.g. the incident: it is shown on the Tools page and on every action the switch stops.", v.Reason, v.Errors),
	}
	if !v.Tool.Enabled {
		c.Warning = text(name + " is already off. Confirming changes nothing.")
	}
	return c
}

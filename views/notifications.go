package views

import (
	"net/url"
	"strings"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/money"
)

// NotificationsView is the Notifications page: channels with their health,
// routes, the quiet time, and the forms that add or change them.
type NotificationsView struct {
	Notice   string
	Failed   bool // the notice reports a failure (a test that did not get through)
	Channels []ChannelRow
	Routes   []notify.Route
	Tenants  []TenantOption
	Quiet    string // seconds
	Escalate string // percent of an action's lifetime
	Remind   string // minutes; 0 never
	Claim    string // minutes an approver's Take holds
	// Form is the channel form: adding one, or editing Form.Existing.
	Form      ChannelForm
	Errors    FieldErrors
	RouteForm RouteForm
	RouteErrs FieldErrors
	QuietErrs FieldErrors
}

// ChannelRow is one channel with its breaker state ("" before any send
// since start).
type ChannelRow struct {
	notify.Channel
	Breaker string
}

// TenantOption is a tenant a route can name.
type TenantOption struct{ ID, Slug string }

// ChannelForm is the channel form as typed (secrets are never filled in).
type ChannelForm struct {
	Existing  string // the channel being edited; "" adds one
	Name      string
	Kind      string
	Host      string
	Port      string
	TLS       string
	Auth      string
	Username  string
	From      string
	To        string
	HasSecret bool
}

// RouteForm is the route form as typed.
type RouteForm struct {
	Event, TenantID, ChannelID, MinAmount, Tools, MinSeverity, Recipients string
}

// Destination says where a channel sends, without secrets.
func (r ChannelRow) Destination() string {
	if r.Kind == notify.Email {
		return r.Config.Host + ":" + itoa(int64(r.Config.Port)) + " → " + strings.Join(r.Config.To, ", ")
	}
	return r.Config.URLShown
}

// Status is "failing", "healthy" or "untested".
func (r ChannelRow) Status() string {
	switch {
	case r.Failing() || r.Breaker == "open":
		return "failing"
	case r.LastOK.IsZero():
		return "untested"
	}
	return "healthy"
}

func channelURL(name, action string) templ.SafeURL {
	return templ.SafeURL("/notifications/channels/" + url.PathEscape(name) + "/" + action)
}

func routeDeleteURL(id string) templ.SafeURL {
	return templ.SafeURL("/notifications/routes/" + url.PathEscape(id) + "/delete")
}

// tenantLabel names a route's tenant.
func (v NotificationsView) tenantLabel(id string) string {
	if id == "" {
		return "All tenants"
	}
	for _, t := range v.Tenants {
		if t.ID == id {
			return t.Slug
		}
	}
	return id
}

// routeFilters says what narrows a route.
func routeFilters(r notify.Route) string {
	var parts []string
	if r.MinAmountMinor != nil {
		parts = append(parts, "from "+money.Decimal(money.Amount{Minor: *r.MinAmountMinor, Currency: money.Currency{Code: "", Exponent: 2}}, true))
	}
	if len(r.Tools) > 0 {
		parts = append(parts, "tools "+strings.Join(r.Tools, ", "))
	}
	if r.MinSeverity != "" {
		parts = append(parts, r.MinSeverity+" and above")
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// routeRecipients says whom a route's messages go to: the channel's own
// recipients, or the people and groups it names.
func routeRecipients(r notify.Route) string {
	if len(r.Recipients) == 0 {
		return "the channel's recipients"
	}
	return strings.Join(r.Recipients, ", ")
}

// RouteDeleteView asks before removing a route: who stops hearing of what.
type RouteDeleteView struct {
	Route  notify.Route
	Tenant string // the route's tenant's slug; "" for all tenants
}

func (v RouteDeleteView) confirm() ConfirmView {
	tenant := v.Tenant
	if tenant == "" {
		tenant = "All tenants"
	}
	summary := notify.EventLabel(v.Route.Event) + " · " + tenant + " · channel " + v.Route.ChannelName + " · to " + routeRecipients(v.Route)
	if f := routeFilters(v.Route); f != "" {
		summary += " · only " + f
	}
	return ConfirmView{
		Back: "/notifications", BackLabel: "Notifications",
		Title:   text("Remove this route?"),
		Summary: summary,
		Effect: text("Its channel is no longer told of these events: if no other route covers them, nobody hears of them. " +
			"The removal is recorded in the audit trail; add the route again to undo it."),
		Action: routeDeleteURL(v.Route.ID), Submit: "Remove route", Danger: true, Cancel: "/notifications",
	}
}

// ChannelDeleteView asks before deleting a channel.
type ChannelDeleteView struct {
	Channel notify.Channel
	Routes  int
}

func (v ChannelDeleteView) confirm() ConfirmView {
	return ConfirmView{
		Back: "/notifications", BackLabel: "Notifications",
		Title:   text("Delete channel " + v.Channel.Name + "?"),
		Summary: notify.KindLabel(v.Channel.Kind),
		Effect: text("Its " + itoa(int64(v.Routes)) + " routes and the messages still waiting for it are deleted with it; " +
			"nothing more is sent there. Pages it opened stay open at the receiver. The deletion is recorded in the audit trail."),
		Action: channelURL(v.Channel.Name, "delete"), Submit: "Delete channel", Danger: true, Cancel: "/notifications",
	}
}

func channelFormAction(existing string) templ.SafeURL {
	if existing == "" {
		return "/notifications/channels"
	}
	return channelURL(existing, "edit")
}

// secretHelp is a secret field's help: on an edit, blank keeps it.
func secretHelp(has bool, help string) string {
	if has {
		if help != "" {
			help += " "
		}
		return help + "Stored sealed; leave blank to keep the current one."
	}
	return help
}

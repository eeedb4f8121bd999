package runbooks

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// TestShippedRunbooksNameRealAlertKinds: every alert kind a shipped
// runbook lists is one /alerts shows, and every kind of alert has a
// runbook that handles it — so an alert never links to nothing, and a
// runbook header never names an alert that cannot fire.
func TestShippedRunbooksNameRealAlertKinds(t *testing.T) {
	set, problems := Load(nil)
	if len(problems) != 0 {
		t.Fatalf("defaults: %v", problems)
	}
	handled := map[string]bool{}
	for _, rb := range set.All() {
		for _, k := range rb.Alerts {
			if !slices.Contains(alerts.Kinds, k) {
				t.Errorf("runbook %s lists alert %q, which is not a kind of alert (%v)", rb.ID, k, alerts.Kinds)
			}
			handled[k] = true
		}
	}
	for _, k := range alerts.Kinds {
		if !handled[k] {
			t.Errorf("no shipped runbook handles alerts of kind %s", k)
		}
		if _, ok := set.Get(alerts.Runbook(k)); !ok {
			t.Errorf("alerts.Runbook(%s) = %q, which is not a shipped runbook", k, alerts.Runbook(k))
		}
	}
}

// TestForChoosesByWhatFailed: the runbook proposed for an alert depends
// on its kind, whose doing the failures are, and its subject.
func TestForChoosesByWhatFailed(t *testing.T) {
	set, _ := Load(nil)
	for _, tc := range []struct{ kind, subject, fault, want string }{
		{alerts.FailureRate, "order_status", alerts.FaultAgent, "agent-requests-failing"},
		{alerts.FailureRate, "order_status", alerts.FaultWarden, "tool-provider-outage"},
		{alerts.FailureRate, "order_status", "", ""},
		{alerts.P99Latency, "order_status", "", "slow-journeys"},
		{alerts.P99Latency, "order_status", alerts.FaultWarden, "slow-journeys"},
		{alerts.BudgetBurn, "t1", "", "runaway-spend"},
		{alerts.ModelOverrun, "gpt", "", "runaway-spend"},
		{"no_such_kind", "x", "", ""},
	} {
		rb, ok := set.For(tc.kind, tc.subject, tc.fault)
		if rb.ID != tc.want || ok != (tc.want != "") {
			t.Errorf("For(%s, %s, %q) = %q, %v; want %q", tc.kind, tc.subject, tc.fault, rb.ID, ok, tc.want)
		}
	}
	// A runbook naming the subject wins over one naming the fault.
	own := strings.Replace(valid, "alerts: [p99_latency]", "alerts: [failure_rate]\nsubjects: [refunds]\ncauses: [warden]", 1)
	own = strings.Replace(own, "id: disk-full", "id: refunds-down", 1)
	set, problems := Load(fstest.MapFS{"refunds-down.md": {Data: []byte(own)}})
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	for _, tc := range []struct{ subject, fault, want string }{
		{"refunds", alerts.FaultWarden, "refunds-down"},
		{"refunds", alerts.FaultAgent, "agent-requests-failing"},
		{"order_status", alerts.FaultWarden, "tool-provider-outage"},
	} {
		if rb, _ := set.For(alerts.FailureRate, tc.subject, tc.fault); rb.ID != tc.want {
			t.Errorf("For(failure_rate, %s, %s) = %q, want %q", tc.subject, tc.fault, rb.ID, tc.want)
		}
	}
}

// TestValidationRunbookHasNoStopButton: the runbook for the agent's own
// bad requests offers nothing that stops service.
func TestValidationRunbookHasNoStopButton(t *testing.T) {
	set, _ := Load(nil)
	rb, ok := set.Get("agent-requests-failing")
	if !ok {
		t.Fatal("no agent-requests-failing runbook")
	}
	if len(rb.Actions) != 0 {
		t.Errorf("agent-requests-failing offers %d buttons, want none", len(rb.Actions))
	}
	if !strings.Contains(rb.HTML, "owner") {
		t.Error("agent-requests-failing does not tell on-call to contact the agent's owner")
	}
}

func TestFillParameters(t *testing.T) {
	set, _ := Load(nil)
	rb, _ := set.Get("tool-provider-outage")
	a := rb.Action("switch-off-tool")
	if got := a.Needs(); !slices.Equal(got, []string{"tenant", "tool"}) {
		t.Errorf("Needs() = %v, want tenant and tool", got)
	}
	filled, missing := a.Fill(map[string]string{"tool": "lookup_order", "tenant": "acme", "skill": "order_status"})
	if len(missing) != 0 {
		t.Fatalf("missing = %v", missing)
	}
	if filled.Args["name"] != "lookup_order" || filled.Args["tenant"] != "acme" || filled.Args["state"] != "off" {
		t.Errorf("filled args = %v", filled.Args)
	}
	if filled.Label != "Switch off lookup_order for tenant acme" {
		t.Errorf("filled label = %q", filled.Label)
	}
	if a.Args["name"] != "$tool" {
		t.Errorf("Fill changed the runbook's own action: %v", a.Args)
	}
	_, missing = a.Fill(map[string]string{"tool": "lookup_order"})
	if !slices.Equal(missing, []string{"tenant"}) {
		t.Errorf("missing = %v, want tenant", missing)
	}
}

// TestSwitchOffForTheAlertsTenant: the provider runbook's switch, filled
// from an alert, switches the failing tool off for the alert's tenant
// alone: the tool stays on for every other tenant, an on-call scoped to
// that tenant may press it, one scoped elsewhere may not, and without the
// alert's parameters nothing changes.
func TestSwitchOffForTheAlertsTenant(t *testing.T) {
	d, ctx := setup(t)
	set, _ := Load(nil)
	d.Runbooks = set
	var acme, beta tenants.Tenant
	err := d.DB.Transact(ctx, func(tx *store.Tx) (err error) {
		if acme, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		beta, err = tenants.Insert(ctx, tx, "beta", "Beta")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"tool": "issue_refund", "tenant": "acme", "skill": "refunds", "alert": "al_1"}

	if _, err := RunWith(ctx, d, carol, "tool-provider-outage", "switch-off-tool", map[string]string{"tool": "issue_refund"}, "provider down", "tok-0"); httpStatus(err) != 422 {
		t.Errorf("press without the tenant = %v, want 422", err)
	}
	other := &identity.Principal{ID: "p-olga", Name: "Olga", Roles: []string{identity.RoleOncall}, Tenants: []string{"beta"}}
	if _, err := RunWith(ctx, d, other, "tool-provider-outage", "switch-off-tool", params, "provider down", "tok-1"); httpStatus(err) != 403 {
		t.Errorf("press by on-call of another tenant = %v, want 403", err)
	}
	scoped := &identity.Principal{ID: "p-sam", Name: "Sam", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	run, err := RunWith(ctx, d, scoped, "tool-provider-outage", "switch-off-tool", params, "provider down for acme", "tok-2")
	if err != nil || run.Status != StatusDone {
		t.Fatalf("press = %+v, %v", run, err)
	}
	if !strings.Contains(run.Outcome, "for tenant acme") {
		t.Errorf("outcome = %q, want it to name the tenant", run.Outcome)
	}
	if off, _ := catalog.OffForTenant(ctx, d.DB.Read(), "issue_refund", acme.ID); !off {
		t.Error("issue_refund is not off for acme")
	}
	if off, _ := catalog.OffForTenant(ctx, d.DB.Read(), "issue_refund", beta.ID); off {
		t.Error("issue_refund is off for beta too")
	}
	tl, _ := catalog.Get(ctx, d.DB.Read(), "issue_refund")
	if !tl.Enabled {
		t.Error("issue_refund was switched off for every tenant")
	}
	for _, tc := range []struct {
		tenant string
		on     bool
	}{{acme.ID, false}, {beta.ID, true}} {
		x := tl
		if err := catalog.ForTenant(ctx, d.DB.Read(), &x, tc.tenant); err != nil || x.Enabled != tc.on {
			t.Errorf("ForTenant(%s).Enabled = %v (%v), want %v", tc.tenant, x.Enabled, err, tc.on)
		}
	}
	evs, _ := audit.List(ctx, d.DB.Read(), audit.Filter{Limit: audit.MaxLimit})
	var sawRun, sawSwitch bool
	for _, e := range evs {
		switch e.Verb {
		case "runbook.action":
			args, _ := e.Details["args"].(map[string]any)
			sawRun = e.Tenant == "acme" && e.Details["alert"] == "al_1" && args["name"] == "issue_refund" && args["tenant"] == "acme"
		case "tool.disable":
			sawSwitch = e.Tenant == "acme" && e.Details["tenant_only"] == true
		}
	}
	if !sawRun || !sawSwitch {
		t.Errorf("events: runbook.action with the filled args and alert %v, tool.disable for acme only %v", sawRun, sawSwitch)
	}
	// Back on for acme loosens: the press asks for it as a pending
	// change for a second admin, and nothing changes yet.
	run, err = RunWith(ctx, d, scoped, "tool-provider-outage", "switch-on-tool", params, "provider back", "tok-3")
	if err != nil || run.Status != StatusDone || !strings.HasPrefix(run.Outcome, WaitsPrefix) {
		t.Fatalf("switch back on = %+v, %v; want it to wait for a second admin", run, err)
	}
	if off, _ := catalog.OffForTenant(ctx, d.DB.Read(), "issue_refund", acme.ID); !off {
		t.Error("issue_refund is back on for acme before a second admin approved")
	}
	if cs, _ := changes.PendingOn(ctx, d.DB.Read(), "issue_refund", time.Now(), changes.ToolTenantSwitch); len(cs) != 1 || cs[0].TenantSlug != "acme" || cs[0].Reason != "provider back" {
		t.Errorf("pending changes on issue_refund = %+v, want one for acme with the reason", cs)
	}
}

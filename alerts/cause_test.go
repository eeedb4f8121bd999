package alerts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// failed inserts n failed journeys of skill in tenant, sent with key,
// ending in code, each with a failed step of tool when tool is not "".
func (r *rig) failed(t *testing.T, tenantID, skill, key, code, tool string, n int, ago time.Duration) {
	t.Helper()
	err := r.db.Transact(context.Background(), func(tx *store.Tx) error {
		for range n {
			r.n++
			id := fmt.Sprintf("j%05d", r.n)
			_, err := tx.Exec(`INSERT INTO journeys (id, tenant_id, key_id, request_id, correlation_id, skill, release_digest, status, error_code, latency_ms, created_at)
				VALUES (?, ?, ?, 'req', 'cor', ?, 'sha256:test', 'failed', ?, 100, ?)`,
				id, tenantID, key, skill, code, store.FormatTime(clock.Add(-ago)))
			if err != nil {
				return err
			}
			if tool != "" {
				_, err = tx.Exec(`INSERT INTO journey_steps (journey_id, n, kind, tool, status, error, latency_ms, started_at) VALUES (?, 1, 'route', '', 'ok', '', 1, ?), (?, 2, 'tool', ?, 'failed', 'down', 900, ?)`,
					id, store.FormatTime(clock.Add(-ago)), id, tool, store.FormatTime(clock.Add(-ago)))
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) key(t *testing.T, tenantID, id, name, by string) {
	t.Helper()
	err := r.db.Transact(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(`INSERT INTO virtual_keys (id, tenant_id, name, prefix, secret_hash, created_by, created_at) VALUES (?, ?, ?, ?, 'h', ?, ?)`,
			id, tenantID, name, "pfx"+id, by, store.FormatTime(clock))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) fireOne(t *testing.T, kind, subject string) Alert {
	t.Helper()
	for _, a := range r.evaluate(t, clock).Fired {
		if a.Kind == kind && a.Subject == subject {
			return a
		}
	}
	t.Fatalf("no %s alert fired for %s; firing: %v", kind, subject, describe(r.firing(t)))
	return Alert{}
}

// TestCauseOfAgentFailures: eight good and fourteen requests missing the
// order id make order_status's failure-rate alert fire; its cause is
// incomplete_request, the agent's doing, from the key that sent them,
// with its creator; journeys outside the window or of another skill do
// not count, and a viewer scoped to another tenant sees none of them.
func TestCauseOfAgentFailures(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	var beta tenants.Tenant
	if err := r.db.Transact(ctx, func(tx *store.Tx) (err error) { beta, err = tenants.Insert(ctx, tx, "beta", "Beta"); return err }); err != nil {
		t.Fatal(err)
	}
	r.key(t, r.tenant.ID, "key_shop", "shop assistant", "p-erin")
	r.journeys(t, "order_status", journeys.StatusCompleted, 8, 100*time.Millisecond, time.Minute)
	r.failed(t, r.tenant.ID, "order_status", "key_shop", "incomplete_request", "", 14, time.Minute)
	r.failed(t, r.tenant.ID, "order_status", "key_shop", "tool_unavailable", "lookup_order", 1, 2*time.Minute)
	r.failed(t, r.tenant.ID, "order_status", "key_shop", "tool_unavailable", "lookup_order", 9, time.Hour) // before the window
	r.failed(t, r.tenant.ID, "refunds", "key_shop", "tool_unavailable", "issue_refund", 3, time.Minute)    // another skill

	a := r.fireOne(t, FailureRate, "order_status")
	c, err := CauseOf(ctx, r.db.Read(), a, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	if c.Journeys != 23 || c.Failures != 15 {
		t.Errorf("journeys, failures = %d, %d; want 23, 15", c.Journeys, c.Failures)
	}
	wantCodes := []CodeCount{
		{"incomplete_request", 14, "The agent sent a request missing a required field, such as the order id.", FaultAgent},
		{"tool_unavailable", 1, "A tool's provider failed (timed out or answered errors) after every retry.", FaultWarden},
	}
	if !slices.Equal(c.Codes, wantCodes) {
		t.Errorf("codes = %+v, want %+v", c.Codes, wantCodes)
	}
	if c.Fault != FaultAgent || c.AgentShare() != 93 {
		t.Errorf("fault = %q (%d%% the agent's), want the agent's, 93%%", c.Fault, c.AgentShare())
	}
	if !slices.Equal(c.Tools, []Count{{"lookup_order", 1}}) || !slices.Equal(c.Tenants, []Count{{"acme", 15}}) {
		t.Errorf("tools = %v, tenants = %v", c.Tools, c.Tenants)
	}
	if want := []KeyCount{{ID: "key_shop", Name: "shop assistant", Tenant: "acme", CreatedBy: "p-erin", Count: 15}}; !slices.Equal(c.Keys, want) {
		t.Errorf("keys = %+v, want %+v", c.Keys, want)
	}
	if !c.Since.Equal(clock.Add(-15*time.Minute)) || !c.Until.Equal(clock) {
		t.Errorf("window = %v – %v, want the rule's 15 minutes before now", c.Since, c.Until)
	}
	p := c.Params(a)
	if p["skill"] != "order_status" || p["tool"] != "lookup_order" || p["tenant"] != "acme" || p["key"] != "key_shop" || p["alert"] != a.ID {
		t.Errorf("params = %v", p)
	}
	// Scoped to beta: nothing of acme's.
	scoped, err := CauseOf(ctx, r.db.Read(), a, []string{beta.ID}, clock)
	if err != nil || scoped.Failures != 0 || len(scoped.Codes) != 0 || len(scoped.Keys) != 0 {
		t.Errorf("cause for a beta viewer = %+v, %v; want nothing", scoped, err)
	}
	// The fired event keeps the cause.
	evs, _ := audit.List(ctx, r.db.Read(), audit.Filter{Limit: audit.MaxLimit})
	for _, e := range evs {
		if e.Verb == "alert.fired" && e.Subject.ID == a.ID {
			if e.Details["codes"] != "incomplete_request 14, tool_unavailable 1" || e.Details["fault"] != "the agent's requests" {
				t.Errorf("alert.fired details = %v", e.Details)
			}
		}
	}
}

// TestCauseOfProviderFailures: a provider failing for one tenant is
// Warden's side, and the parameters name the failing tool and tenant.
func TestCauseOfProviderFailures(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.journeys(t, "order_status", journeys.StatusCompleted, 10, 100*time.Millisecond, time.Minute)
	r.failed(t, r.tenant.ID, "order_status", "", "tool_unavailable", "lookup_order", 6, time.Minute)
	r.failed(t, r.tenant.ID, "order_status", "", "dependency_unavailable", "lookup_order", 4, time.Minute)
	r.failed(t, r.tenant.ID, "order_status", "", "incomplete_request", "", 2, time.Minute)
	a := r.fireOne(t, FailureRate, "order_status")
	c, err := CauseOf(ctx, r.db.Read(), a, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fault != FaultWarden || len(c.Codes) != 3 || c.Codes[0].Code != "tool_unavailable" || c.Codes[1].Code != "dependency_unavailable" {
		t.Errorf("cause = %+v, want Warden's side, tool_unavailable first", c)
	}
	if p := c.Params(a); p["tool"] != "lookup_order" || p["tenant"] != "acme" || p["key"] != "" {
		t.Errorf("params = %v", p)
	}
	// A budget alert has no journeys to count; its tenant is its parameter.
	b := Alert{ID: "al_b", Kind: BudgetBurn, Subject: r.tenant.ID, Tenant: "acme"}
	bc, err := CauseOf(ctx, r.db.Read(), b, nil, clock)
	if err != nil || bc.Failures != 0 || bc.Params(b)["tenant"] != "acme" {
		t.Errorf("budget cause = %+v, %v; params %v", bc, err, bc.Params(b))
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct{ code, fault, starts string }{
		{"incomplete_request", FaultAgent, "The agent sent a request missing"},
		{"no_route", FaultAgent, "The agent asked for something"},
		{"invalid_arguments", FaultAgent, "A tool call's arguments"},
		{"tool_unavailable", FaultWarden, "A tool's provider failed"},
		{"dependency_unavailable", FaultWarden, "Warden did not call a tool: its breaker is open"},
		{"internal", FaultWarden, "Warden failed internally"},
		{"something_new", FaultWarden, "Something new."},
		{"", FaultWarden, "The journey failed without an error code."},
	} {
		s, f := Explain(tc.code)
		if f != tc.fault || !strings.HasPrefix(s, tc.starts) {
			t.Errorf("Explain(%q) = %q, %q; want %q…, %q", tc.code, s, f, tc.starts, tc.fault)
		}
	}
}

// TestAcknowledge: on-call acknowledges a firing alert once, with a note,
// recorded in the audit chain; a second press (or a race of two) records
// nothing more; approvers may not; a budget alert of a tenant outside
// the presser's scope is not theirs to acknowledge; and unacknowledged
// alerts come first on people's lists.
func TestAcknowledge(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.journeys(t, "order_status", journeys.StatusFailed, 20, 100*time.Millisecond, time.Minute)
	r.journeys(t, "refunds", journeys.StatusFailed, 20, 100*time.Millisecond, time.Minute)
	r.evaluate(t, clock)
	firing := r.firing(t)
	if len(firing) != 2 {
		t.Fatalf("firing = %v", describe(firing))
	}
	first, second := firing[0], firing[1]
	carol := &identity.Principal{ID: "p-carol", Name: "Carol On-call", Roles: []string{identity.RoleOncall}, Tenants: []string{identity.AllTenants}}
	erin := &identity.Principal{ID: "p-erin", Name: "Erin Admin", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	alice := &identity.Principal{ID: "p-alice", Name: "Alice", Roles: []string{identity.RoleApprover}, Tenants: []string{identity.AllTenants}}

	if _, err := Acknowledge(ctx, r.db, alice, first.ID, "", clock); !isStatus(err, 403) {
		t.Errorf("approver acknowledges: %v, want 403", err)
	}
	if _, err := Acknowledge(ctx, r.db, carol, first.ID, strings.Repeat("x", MaxAckNote+1), clock); !isStatus(err, 422) {
		t.Errorf("too long a note: %v, want 422", err)
	}
	if _, err := Acknowledge(ctx, r.db, carol, "al_nope", "", clock); !isStatus(err, 404) {
		t.Errorf("unknown alert: %v, want 404", err)
	}
	var wg sync.WaitGroup
	changed := make([]bool, 2)
	errs := make([]error, 2)
	for i, p := range []*identity.Principal{carol, erin} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			changed[i], errs[i] = Acknowledge(ctx, r.db, p, first.ID, "  looking at it  ", clock.Add(time.Minute))
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || changed[0] == changed[1] {
		t.Fatalf("two acknowledgements = %v %v, %v %v; want exactly one to change", changed[0], errs[0], changed[1], errs[1])
	}
	got, err := Get(ctx, r.db.Read(), first.ID)
	if err != nil || got.Ack == nil || got.Ack.Note != "looking at it" || !got.Ack.At.Equal(clock.Add(time.Minute)) {
		t.Fatalf("acknowledged alert = %+v, %v", got.Ack, err)
	}
	if who := got.Ack.By; who != "p-carol" && who != "p-erin" {
		t.Errorf("acknowledged by %q", who)
	}
	if got.Ack.ByName != "Carol On-call" && got.Ack.ByName != "Erin Admin" {
		t.Errorf("acknowledged by name %q", got.Ack.ByName)
	}
	acks := 0
	evs, _ := audit.List(ctx, r.db.Read(), audit.Filter{Limit: audit.MaxLimit})
	for _, e := range evs {
		if e.Verb == "alert.acknowledged" {
			acks++
			if e.Subject.ID != first.ID || e.Details["note"] != "looking at it" || e.Actor.ID != got.Ack.By {
				t.Errorf("event = %+v", e)
			}
		}
	}
	if acks != 1 {
		t.Errorf("%d alert.acknowledged events, want 1", acks)
	}
	// The unacknowledged alert now comes first.
	people, err := FiringForPeople(ctx, r.db.Read())
	if err != nil || len(people) != 2 || people[0].ID != second.ID || people[1].ID != first.ID {
		t.Errorf("people's order = %v, %v; want %s (unacknowledged) first", describe(people), err, second.ID)
	}

	// A budget alert of acme is not for on-call scoped to beta.
	err = r.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(`INSERT INTO alerts (id, kind, subject, value, threshold, fired_at) VALUES ('al_budget', 'budget_burn', ?, 90, 80, ?)`,
			r.tenant.ID, store.FormatTime(clock))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	betaOncall := &identity.Principal{ID: "p-bo", Roles: []string{identity.RoleOncall}, Tenants: []string{"beta"}}
	if _, err := Acknowledge(ctx, r.db, betaOncall, "al_budget", "", clock); !isStatus(err, 404) {
		t.Errorf("acknowledging another tenant's budget alert: %v, want 404", err)
	}
}

func isStatus(err error, status int) bool {
	var p *problem.Error
	return errors.As(err, &p) && p.Status() == status
}

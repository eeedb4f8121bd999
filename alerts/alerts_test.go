package alerts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// clock is the fixed "now" of every evaluation here.
var clock = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

type rig struct {
	db     *store.DB
	tenant tenants.Tenant
	n      int
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	r := &rig{db: db}
	err := db.Transact(ctx, func(tx *store.Tx) (err error) {
		r.tenant, err = tenants.Insert(ctx, tx, "acme", "Acme")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// journeys inserts n ended journeys of skill, ago before the clock.
func (r *rig) journeys(t *testing.T, skill, status string, n int, latency, ago time.Duration) {
	t.Helper()
	err := r.db.Transact(context.Background(), func(tx *store.Tx) error {
		for range n {
			r.n++
			_, err := tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, skill, release_digest, status, latency_ms, created_at)
				VALUES (?, ?, ?, ?, ?, 'sha256:test', ?, ?, ?)`,
				fmt.Sprintf("j%05d", r.n), r.tenant.ID, "req", "cor", skill, status, latency.Milliseconds(), store.FormatTime(clock.Add(-ago)))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) evaluate(t *testing.T, at time.Time) Report {
	t.Helper()
	rep, err := Evaluate(context.Background(), r.db, at)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func (r *rig) firing(t *testing.T) []Alert {
	t.Helper()
	as, err := Firing(context.Background(), r.db.Read())
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// alertEvents are the alert.* audit events, oldest first, as
// "verb kind subject value/threshold".
func (r *rig) alertEvents(t *testing.T) []string {
	t.Helper()
	evs, err := audit.List(context.Background(), r.db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range slices.Backward(evs) {
		if strings.HasPrefix(e.Verb, "alert.") {
			out = append(out, fmt.Sprintf("%s %v %v %v/%v by %s", e.Verb, e.Details["kind"], e.Details["subject"], e.Details["value"], e.Details["threshold"], e.Actor.Type))
		}
	}
	return out
}

func describe(as []Alert) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, fmt.Sprintf("%s %s %d/%d %s", a.Kind, a.Subject, a.Value, a.Threshold, a.Runbook()))
	}
	return out
}

func TestEvaluateSkillRules(t *testing.T) {
	const minute = time.Minute
	for _, tt := range []struct {
		name   string
		seed   func(t *testing.T, r *rig)
		firing []string
	}{
		{"nothing ran", func(t *testing.T, r *rig) {}, []string{}},
		{"healthy", func(t *testing.T, r *rig) {
			r.journeys(t, "refunds", journeys.StatusCompleted, 30, 200*time.Millisecond, minute)
		}, []string{}},
		{"failure rate at the threshold fires", func(t *testing.T, r *rig) {
			r.journeys(t, "refunds", journeys.StatusCompleted, 16, 200*time.Millisecond, minute)
			r.journeys(t, "refunds", journeys.StatusFailed, 4, 200*time.Millisecond, minute)
		}, []string{"failure_rate refunds 20/20 tool-provider-outage"}},
		{"failure rate just below does not", func(t *testing.T, r *rig) {
			r.journeys(t, "refunds", journeys.StatusCompleted, 17, 200*time.Millisecond, minute)
			r.journeys(t, "refunds", journeys.StatusFailed, 3, 200*time.Millisecond, minute)
		}, []string{}},
		{"too few journeys fire nothing", func(t *testing.T, r *rig) {
			r.journeys(t, "refunds", journeys.StatusFailed, 19, 30*time.Second, minute)
		}, []string{}},
		{"journeys before the window do not count", func(t *testing.T, r *rig) {
			r.journeys(t, "refunds", journeys.StatusFailed, 30, 200*time.Millisecond, 16*minute)
		}, []string{}},
		{"running and rejected journeys do not count", func(t *testing.T, r *rig) {
			r.journeys(t, "refunds", journeys.StatusRunning, 30, 0, minute)
			r.journeys(t, "refunds", journeys.StatusRejected, 30, 0, minute)
			r.journeys(t, "refunds", journeys.StatusFailed, 5, 0, minute)
		}, []string{}},
		{"p99 latency fires", func(t *testing.T, r *rig) {
			r.journeys(t, "orders", journeys.StatusCompleted, 98, 100*time.Millisecond, minute)
			r.journeys(t, "orders", journeys.StatusCompleted, 2, 12*time.Second, minute)
		}, []string{"p99_latency orders 12000/10000 slow-journeys"}},
		{"one slow journey in a hundred is the 99th percentile's tail", func(t *testing.T, r *rig) {
			r.journeys(t, "orders", journeys.StatusCompleted, 99, 100*time.Millisecond, minute)
			r.journeys(t, "orders", journeys.StatusCompleted, 1, 12*time.Second, minute)
		}, []string{}},
		{"both kinds on two skills", func(t *testing.T, r *rig) {
			r.journeys(t, "refunds", journeys.StatusFailed, 20, 11*time.Second, minute)
			r.journeys(t, "orders", journeys.StatusFailed, 10, 100*time.Millisecond, minute)
			r.journeys(t, "orders", journeys.StatusCompleted, 10, 100*time.Millisecond, minute)
		}, []string{"failure_rate orders 50/20 tool-provider-outage", "failure_rate refunds 100/20 tool-provider-outage", "p99_latency refunds 11000/10000 slow-journeys"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tt.seed(t, r)
			rep := r.evaluate(t, clock)
			if got := describe(r.firing(t)); !slices.Equal(got, tt.firing) {
				t.Errorf("firing = %q, want %q", got, tt.firing)
			}
			if got := describe(rep.Fired); !slices.Equal(got, tt.firing) || len(rep.Resolved) != 0 {
				t.Errorf("report fired %q, resolved %d; want fired %q, none resolved", got, len(rep.Resolved), tt.firing)
			}
			if got := len(r.alertEvents(t)); got != len(tt.firing) {
				t.Errorf("%d alert events, want %d", got, len(tt.firing))
			}
		})
	}
}

func TestFiringTwiceDoesNotDuplicate(t *testing.T) {
	r := newRig(t)
	r.journeys(t, "refunds", journeys.StatusFailed, 25, time.Second, time.Minute)
	first := r.evaluate(t, clock)
	again := r.evaluate(t, clock.Add(time.Minute))
	if len(first.Fired) != 1 || len(again.Fired) != 0 || len(again.Resolved) != 0 {
		t.Fatalf("fired %d then %d (resolved %d); want 1 then 0", len(first.Fired), len(again.Fired), len(again.Resolved))
	}
	if got := len(r.firing(t)); got != 1 {
		t.Errorf("%d alerts firing, want 1", got)
	}
	want := []string{"alert.fired failure_rate refunds 100/20 by system"}
	if got := r.alertEvents(t); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// Replicas evaluate on their own schedules, so evaluations meet: on
// PostgreSQL two of them both saw the alert not firing yet and the second
// insert broke the one-firing-alert index ("duplicate key ... alerts_firing",
// seen in TestBrowserAlertDrillAgentRequests). Evaluations now queue: each
// succeeds, one alert fires and one event records it, and the same for the
// resolution.
func TestConcurrentEvaluationsFireAndResolveOnce(t *testing.T) {
	r := newRig(t)
	r.journeys(t, "refunds", journeys.StatusFailed, 25, time.Second, time.Minute)
	const n = 8
	run := func(at time.Time) (fired, resolved int) {
		t.Helper()
		reps := make(chan Report, n)
		errs := make(chan error, n)
		start := make(chan struct{})
		for range n {
			go func() {
				<-start
				rep, err := Evaluate(context.Background(), r.db, at)
				reps <- rep
				errs <- err
			}()
		}
		close(start)
		for range n {
			if err := <-errs; err != nil {
				t.Errorf("evaluate: %v", err)
			}
			rep := <-reps
			fired += len(rep.Fired)
			resolved += len(rep.Resolved)
		}
		return fired, resolved
	}
	if fired, _ := run(clock); fired != 1 {
		t.Fatalf("%d evaluations at once fired %d alerts, want 1", n, fired)
	}
	// An hour later the window holds no journey: the alert resolves once.
	if _, resolved := run(clock.Add(2 * time.Hour)); resolved != 1 {
		t.Fatalf("%d evaluations at once resolved %d alerts, want 1", n, resolved)
	}
	want := []string{"alert.fired failure_rate refunds 100/20 by system", "alert.resolved failure_rate refunds 100/20 by system"}
	if got := r.alertEvents(t); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

func TestAlertResolvesWhenTheConditionClears(t *testing.T) {
	r := newRig(t)
	r.journeys(t, "refunds", journeys.StatusFailed, 25, time.Second, time.Minute)
	fired := r.evaluate(t, clock).Fired
	// 15 minutes later the failures have left the window.
	later := clock.Add(15 * time.Minute)
	rep := r.evaluate(t, later)
	if len(rep.Resolved) != 1 || rep.Resolved[0].ID != fired[0].ID || len(rep.Fired) != 0 {
		t.Fatalf("resolved %v, fired %v; want %s resolved", describe(rep.Resolved), describe(rep.Fired), fired[0].ID)
	}
	if got := r.firing(t); len(got) != 0 {
		t.Errorf("still firing: %v", describe(got))
	}
	res, err := Resolved(context.Background(), r.db.Read(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Resolved == nil || !res[0].Resolved.Equal(later) || !res[0].FiredAt.Equal(clock) {
		t.Errorf("resolved = %+v, want fired at %v and resolved at %v", res, clock, later)
	}
	want := []string{"alert.fired failure_rate refunds 100/20 by system", "alert.resolved failure_rate refunds 100/20 by system"}
	if got := r.alertEvents(t); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	// It fires again, as a new alert, when the condition comes back.
	r.journeys(t, "refunds", journeys.StatusFailed, 25, time.Second, -15*time.Minute)
	if again := r.evaluate(t, later.Add(time.Minute)).Fired; len(again) != 1 || again[0].ID == fired[0].ID {
		t.Errorf("fired again %v, want one new alert", describe(again))
	}
}

func TestBudgetBurn(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name            string
		limit           int64
		alertPct        int
		spent, reserved int64
		firing          []string
	}{
		{"below 80 percent", 100_000_000, 80, 70_000_000, 9_000_000, []string{}},
		{"spent and reserved reach 80 percent", 100_000_000, 80, 70_000_000, 10_000_000, []string{"budget_burn T 80/80 runaway-spend"}},
		{"the tenant's own threshold", 100_000_000, 50, 50_000_000, 0, []string{"budget_burn T 50/50 runaway-spend"}},
		{"zero limit", 0, 80, 0, 0, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			err := r.db.Transact(ctx, func(tx *store.Tx) error {
				if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: budgets.Total, LimitMicros: tt.limit, AlertPercent: tt.alertPct}, clock); err != nil {
					return err
				}
				if tt.spent+tt.reserved == 0 {
					return nil
				}
				if err := budgets.Reserve(ctx, tx, r.tenant.ID, tt.spent+tt.reserved, clock); err != nil {
					return err
				}
				return budgets.Settle(ctx, tx, r.tenant.ID, tt.spent, tt.spent)
			})
			if err != nil {
				t.Fatal(err)
			}
			r.evaluate(t, clock)
			want := []string{}
			for _, w := range tt.firing {
				want = append(want, strings.Replace(w, " T ", " "+r.tenant.ID+" ", 1))
			}
			got := r.firing(t)
			if d := describe(got); !slices.Equal(d, want) {
				t.Fatalf("firing = %q, want %q", d, want)
			}
			if len(got) == 1 && (got[0].Tenant != "acme" || got[0].What() != "Budget of tenant acme") {
				t.Errorf("tenant %q, what %q; want acme", got[0].Tenant, got[0].What())
			}
		})
	}
}

func TestSetRule(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	erin := audit.Actor{Type: audit.ActorPrincipal, ID: "p-erin"}
	strict := Rule{Skill: "refunds", FailurePercent: 5, P99Latency: 2 * time.Second, Window: 10 * time.Minute, MinJourneys: 5}
	changed, err := SetRule(ctx, r.db, erin, strict, clock)
	if err != nil || !changed {
		t.Fatalf("SetRule = %v, %v; want changed", changed, err)
	}
	if changed, err = SetRule(ctx, r.db, erin, strict, clock); err != nil || changed {
		t.Errorf("SetRule again = %v, %v; want unchanged", changed, err)
	}
	rules, err := Rules(ctx, r.db.Read())
	if err != nil {
		t.Fatal(err)
	}
	strict.Custom = true
	if got := RuleFor(rules, "refunds"); got != strict {
		t.Errorf("rule = %+v, want %+v", got, strict)
	}
	if got := RuleFor(rules, "orders"); got != DefaultRule("orders") {
		t.Errorf("orders rule = %+v, want the default", got)
	}
	evs, _ := audit.List(ctx, r.db.Read(), audit.Filter{Limit: 10})
	if len(evs) == 0 || evs[0].Verb != "alert.rule_set" || evs[0].Actor != erin || evs[0].Subject.ID != "refunds" ||
		fmt.Sprintf("%v %v", evs[0].Details["failure_percent"], evs[0].Details["previous_failure_percent"]) != "5 20" {
		t.Errorf("last event = %+v, want alert.rule_set by erin, 20%% → 5%%", evs)
	}
	// The stricter rule fires where the default would not (10 journeys,
	// 1 failed, within 10 minutes).
	r.journeys(t, "refunds", journeys.StatusCompleted, 9, time.Second, time.Minute)
	r.journeys(t, "refunds", journeys.StatusFailed, 1, time.Second, time.Minute)
	if got := describe(r.evaluate(t, clock).Fired); !slices.Equal(got, []string{"failure_rate refunds 10/5 tool-provider-outage"}) {
		t.Errorf("fired %q under the custom rule", got)
	}

	bad := []struct {
		rule  Rule
		field string
	}{
		{Rule{Skill: "refunds", FailurePercent: 0, P99Latency: time.Second, Window: time.Minute, MinJourneys: 1}, "failure_percent"},
		{Rule{Skill: "refunds", FailurePercent: 101, P99Latency: time.Second, Window: time.Minute, MinJourneys: 1}, "failure_percent"},
		{Rule{Skill: "refunds", FailurePercent: 5, P99Latency: 0, Window: time.Minute, MinJourneys: 1}, "p99_ms"},
		{Rule{Skill: "refunds", FailurePercent: 5, P99Latency: time.Second, Window: 0, MinJourneys: 1}, "window_minutes"},
		{Rule{Skill: "refunds", FailurePercent: 5, P99Latency: time.Second, Window: 25 * time.Hour, MinJourneys: 1}, "window_minutes"},
		{Rule{Skill: "refunds", FailurePercent: 5, P99Latency: time.Second, Window: time.Minute, MinJourneys: 0}, "min_journeys"},
	}
	before, _ := audit.Count(ctx, r.db.Read())
	for _, b := range bad {
		_, err := SetRule(ctx, r.db, erin, b.rule, clock)
		var inv *store.ValidationError
		if !errors.As(err, &inv) || len(inv.Fields) != 1 || inv.Fields[b.field] == "" {
			t.Errorf("SetRule(%+v) = %v, want a validation error on %s only", b.rule, err, b.field)
		}
	}
	if after, _ := audit.Count(ctx, r.db.Read()); after != before {
		t.Errorf("refused rules were recorded: %d events, want %d", after, before)
	}
	if rules, _ := Rules(ctx, r.db.Read()); rules["refunds"] != strict {
		t.Errorf("refused rules changed the rule to %+v", rules["refunds"])
	}
}

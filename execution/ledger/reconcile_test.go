package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

// answering is a provider whose Lookup gives a fixed answer.
type answering struct {
	*spy
	status tools.LookupStatus
	err    error
}

func (a answering) Lookup(ctx context.Context, t tools.Tool, key string) (tools.Result, tools.LookupStatus, error) {
	a.see(key)
	a.mu.Lock()
	a.lookups++
	a.mu.Unlock()
	return tools.Result{}, a.status, a.err
}

// notLooker hides the spy's Lookup.
type notLooker struct{ tools.Provider }

// crashAfterCommit leaves key RESERVED with its effect committed at the
// provider: the process dies between the commit and the record.
func crashAfterCommit(f *fixture, key, args string) {
	f.t.Helper()
	f.sim.SetFaults(sim.Faults{AfterCommit: func(string, string) { panic(errCrash) }})
	defer f.sim.SetFaults(sim.Faults{})
	if !crashes(func() { _, _ = f.execute(key, args) }) {
		f.t.Fatal("Execute did not crash")
	}
	f.restart()
}

// failTransiently leaves key RESERVED with nothing at the provider, and
// the next n-1 provider calls failing transiently as well.
func failTransiently(n int) func(f *fixture, key, args string) {
	return func(f *fixture, key, args string) {
		f.t.Helper()
		f.sim.SetFaults(sim.Faults{FailNext: n})
		if _, err := f.execute(key, args); !tools.IsTransient(err) {
			f.t.Fatalf("Execute = %v, want a transient failure", err)
		}
	}
}

func reportOf(rep Report) map[string][]string {
	return map[string][]string{
		"recorded": rep.Recorded, "reexecuted": rep.Reexecuted, "failed": rep.Failed,
		"retry": rep.Retry, "review": rep.Review, "busy": rep.Busy,
	}
}

func TestReconcile(t *testing.T) {
	const key = "wdn_reconcile"
	spyOf := func(f *fixture) tools.Provider { return f.spy }
	tests := []struct {
		name     string
		args     string
		setup    func(f *fixture, key, args string) // leaves key RESERVED
		provider func(f *fixture) tools.Provider
		resolver func(f *fixture, p tools.Provider) Resolver // nil: the original call through p

		wantOutcome  string
		wantState    State
		wantReview   bool
		wantError    string // in the stored Error
		wantEffects  int
		wantExecutes int // provider calls during Reconcile
		wantLookups  int
	}{
		{
			name: "committed is recorded without executing", args: refundArgs,
			setup: crashAfterCommit, provider: spyOf,
			wantOutcome: "recorded", wantState: Recorded, wantReview: false, wantError: "",
			wantEffects: 1, wantExecutes: 0, wantLookups: 1,
		},
		{
			name: "not found is executed again with the same key", args: refundArgs,
			setup: failTransiently(1), provider: spyOf,
			wantOutcome: "reexecuted", wantState: Recorded, wantReview: false, wantError: "",
			wantEffects: 1, wantExecutes: 1, wantLookups: 1,
		},
		{
			name: "not found and refused again fails", args: refusedArgs,
			setup: failTransiently(1), provider: spyOf,
			wantOutcome: "failed", wantState: Failed, wantReview: false, wantError: "more than the $2,400.00 paid",
			wantEffects: 0, wantExecutes: 1, wantLookups: 1,
		},
		{
			name: "not found and failing transiently again stays reserved", args: refundArgs,
			setup: failTransiently(2), provider: spyOf,
			wantOutcome: "retry", wantState: Reserved, wantReview: false, wantError: "transient: ",
			wantEffects: 0, wantExecutes: 1, wantLookups: 1,
		},
		{
			name: "unknown goes to review", args: refundArgs,
			setup:       crashAfterCommit,
			provider:    func(f *fixture) tools.Provider { return answering{spy: f.spy, status: tools.LookupUnknown} },
			wantOutcome: "review", wantState: Reserved, wantReview: true, wantError: `answered "unknown"`,
			wantEffects: 1, wantExecutes: 0, wantLookups: 1,
		},
		{
			name: "lookup error goes to review", args: refundArgs,
			setup: failTransiently(1),
			provider: func(f *fixture) tools.Provider {
				return answering{spy: f.spy, status: tools.LookupUnknown, err: &tools.Error{Kind: tools.Transient, Reason: "lookup endpoint down"}}
			},
			wantOutcome: "review", wantState: Reserved, wantReview: true, wantError: "lookup endpoint down",
			wantEffects: 0, wantExecutes: 0, wantLookups: 1,
		},
		{
			name: "a provider that cannot look up goes to review", args: refundArgs,
			setup:       failTransiently(1),
			provider:    func(f *fixture) tools.Provider { return notLooker{f.spy} },
			wantOutcome: "review", wantState: Reserved, wantReview: true, wantError: "cannot look up",
			wantEffects: 0, wantExecutes: 0, wantLookups: 0,
		},
		{
			name: "a resolver offering another key goes to review", args: refundArgs,
			setup: failTransiently(1), provider: spyOf,
			resolver: func(f *fixture, p tools.Provider) Resolver {
				return func(ctx context.Context, e Entry) (Resolved, error) {
					return Resolved{Tool: f.tool, Provider: p, Call: f.call("wdn_fresh", refundArgs), Digest: digestOf(refundArgs)}, nil
				}
			},
			wantOutcome: "review", wantState: Reserved, wantReview: true, wantError: "another idempotency key",
			wantEffects: 0, wantExecutes: 0, wantLookups: 0,
		},
		{
			name: "a resolver offering other arguments goes to review", args: refundArgs,
			setup: failTransiently(1), provider: spyOf,
			resolver:    func(f *fixture, p tools.Provider) Resolver { return f.resolver(p, refusedArgs) },
			wantOutcome: "review", wantState: Reserved, wantReview: true, wantError: "digest differs",
			wantEffects: 0, wantExecutes: 0, wantLookups: 0,
		},
		{
			name: "a resolver that fails goes to review", args: refundArgs,
			setup: failTransiently(1), provider: spyOf,
			resolver: func(f *fixture, p tools.Provider) Resolver {
				return func(context.Context, Entry) (Resolved, error) { return Resolved{}, errors.New("action not found") }
			},
			wantOutcome: "review", wantState: Reserved, wantReview: true, wantError: "action not found",
			wantEffects: 0, wantExecutes: 0, wantLookups: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.mustIntend(key, tt.args)
			tt.setup(f, key, tt.args)
			if e := f.get(key); e.State != Reserved {
				t.Fatalf("after setup: %s, want reserved", e.State)
			}
			p := tt.provider(f)
			resolve := f.resolver(p, tt.args)
			if tt.resolver != nil {
				resolve = tt.resolver(f, p)
			}
			execBefore, lookBefore := f.spy.counts()

			rep, err := Reconcile(f.ctx, f.db, resolve, ReconcileOptions{})
			f.sim.SetFaults(sim.Faults{})
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			for name, keys := range reportOf(rep) {
				want := []string(nil)
				if name == tt.wantOutcome {
					want = []string{key}
				}
				if !slices.Equal(keys, want) {
					t.Errorf("report %s = %v, want %v", name, keys, want)
				}
			}
			e := f.get(key)
			if e.State != tt.wantState || e.NeedsReview != tt.wantReview {
				t.Errorf("record %s, review %v; want %s, %v", e.State, e.NeedsReview, tt.wantState, tt.wantReview)
			}
			if (tt.wantError == "") != (e.Error == "") || !strings.Contains(e.Error, tt.wantError) {
				t.Errorf("stored error = %q, want it to say %q", e.Error, tt.wantError)
			}
			effs := f.effects()
			if len(effs) != tt.wantEffects {
				t.Fatalf("provider effects = %d, want %d", len(effs), tt.wantEffects)
			}
			if e.State == Recorded && !bytes.Equal(e.Receipt, effs[0].Receipt) {
				t.Errorf("receipt = %s, want the provider's %s", e.Receipt, effs[0].Receipt)
			}
			execAfter, lookAfter := f.spy.counts()
			if execAfter-execBefore != tt.wantExecutes || lookAfter-lookBefore != tt.wantLookups {
				t.Errorf("Reconcile made %d executes and %d lookups, want %d and %d",
					execAfter-execBefore, lookAfter-lookBefore, tt.wantExecutes, tt.wantLookups)
			}
			if other := f.spy.otherKeys(key); other != nil {
				t.Errorf("the provider saw other keys %v, want only %s", other, key)
			}
			for _, eff := range effs {
				if eff.IdempotencyKey != key {
					t.Errorf("the provider committed an effect under key %s, want only %s", eff.IdempotencyKey, key)
				}
			}
			// What reconciliation found out on its own is in the trail.
			wantAudit := map[string]string{"recorded": "found_committed", "review": "needs_review"}[tt.wantOutcome]
			evs, err := audit.List(f.ctx, f.db.Read(), audit.Filter{Limit: audit.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				if ev.Verb == "effect.reconciled" {
					got = append(got, fmt.Sprint(ev.Details["outcome"]))
				}
			}
			if (wantAudit == "" && len(got) != 0) || (wantAudit != "" && !slices.Equal(got, []string{wantAudit})) {
				t.Errorf("effect.reconciled events = %v, want %q", got, wantAudit)
			}
		})
	}
}

// TestReconcileLeavesOthersAlone: records that are INTENDED, RECORDED or
// FAILED, or RESERVED within the grace, are not touched.
func TestReconcileLeavesOthersAlone(t *testing.T) {
	f := newFixture(t)
	f.mustIntend("wdn_intended", refundArgs)
	f.mustIntend("wdn_recorded", refundArgs)
	if _, err := f.execute("wdn_recorded", refundArgs); err != nil {
		t.Fatal(err)
	}
	f.mustIntend("wdn_failed", refusedArgs)
	if _, err := f.execute("wdn_failed", refusedArgs); !errors.Is(err, ErrFailed) {
		t.Fatal(err)
	}
	f.mustIntend("wdn_reserved", refundArgs)
	failTransiently(1)(f, "wdn_reserved", refundArgs)
	want := map[string]Entry{}
	for _, k := range []string{"wdn_intended", "wdn_recorded", "wdn_failed", "wdn_reserved"} {
		want[k] = f.get(k)
	}
	_, lookBefore := f.spy.counts()

	rep, err := Reconcile(f.ctx, f.db, f.resolver(f.spy, refundArgs), ReconcileOptions{Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for name, keys := range reportOf(rep) {
		if keys != nil {
			t.Errorf("report %s = %v within the grace, want none", name, keys)
		}
	}
	for k, w := range want {
		if got := f.get(k); got.State != w.State || got.Attempts != w.Attempts || !got.UpdatedAt.Equal(w.UpdatedAt) {
			t.Errorf("%s: %s (attempts %d) after Reconcile, want %s (%d) untouched", k, got.State, got.Attempts, w.State, w.Attempts)
		}
	}
	if _, look := f.spy.counts(); look != lookBefore {
		t.Errorf("Reconcile looked up %d keys within the grace, want 0", look-lookBefore)
	}

	rep, err = Reconcile(f.ctx, f.db, f.resolver(f.spy, refundArgs), ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Reexecuted, []string{"wdn_reserved"}) || len(rep.Recorded)+len(rep.Failed)+len(rep.Review)+len(rep.Retry) != 0 {
		t.Errorf("report without grace = %+v, want only wdn_reserved re-executed", rep)
	}
	for _, k := range []string{"wdn_intended", "wdn_recorded", "wdn_failed"} {
		if got := f.get(k); got.State != want[k].State || !got.UpdatedAt.Equal(want[k].UpdatedAt) {
			t.Errorf("%s: %s after Reconcile, want %s untouched", k, got.State, want[k].State)
		}
	}
}

// TestReconcileClearsReview: a record sent to review is looked at again
// on the next run and settled once the provider answers.
func TestReconcileClearsReview(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_review"
	f.mustIntend(key, refundArgs)
	crashAfterCommit(f, key, refundArgs)
	unknown := answering{spy: f.spy, status: tools.LookupUnknown}
	if rep, err := Reconcile(f.ctx, f.db, f.resolver(unknown, refundArgs), ReconcileOptions{}); err != nil || len(rep.Review) != 1 {
		t.Fatalf("first Reconcile = %+v, %v; want the key in review", rep, err)
	}
	rep, err := Reconcile(f.ctx, f.db, f.resolver(f.spy, refundArgs), ReconcileOptions{})
	if err != nil || !slices.Equal(rep.Recorded, []string{key}) {
		t.Fatalf("second Reconcile = %+v, %v; want the key recorded", rep, err)
	}
	if e := f.get(key); e.State != Recorded || e.NeedsReview || e.Error != "" {
		t.Errorf("record = %s, review %v, error %q; want recorded, cleared", e.State, e.NeedsReview, e.Error)
	}
	if n := len(f.effects()); n != 1 {
		t.Errorf("provider effects = %d, want 1", n)
	}
}

// TestReconcileSkipsAKeyInFlight: a record RESERVED by an Execute whose
// provider call is merely slow is left to that Execute.
func TestReconcileSkipsAKeyInFlight(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_inflight"
	f.mustIntend(key, refundArgs)
	f.sim.SetFaults(sim.Faults{Delay: 500 * time.Millisecond})
	done := make(chan error)
	go func() {
		_, err := f.execute(key, refundArgs)
		done <- err
	}()
	wait.Until(t, 10*time.Second, "the effect to be reserved", func() bool { return f.get(key).State == Reserved })

	rep, err := Reconcile(f.ctx, f.db, f.resolver(f.spy, refundArgs), ReconcileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Busy, []string{key}) || len(rep.Reexecuted)+len(rep.Recorded)+len(rep.Review)+len(rep.Retry) != 0 {
		t.Errorf("report = %+v, want the key busy and nothing else", rep)
	}
	if err := <-done; err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if executes, lookups := f.spy.counts(); executes != 1 || lookups != 0 {
		t.Errorf("provider saw %d executes and %d lookups, want 1 and 0", executes, lookups)
	}
	if e := f.get(key); e.State != Recorded || e.Attempts != 1 {
		t.Errorf("record = %s, attempts %d; want recorded after 1", e.State, e.Attempts)
	}
}

package ledger

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

// What can happen to the process and the provider between approval and
// the record. A crash step arms a crash that happens at its next chance;
// the crashes a case starts with are armed the same way.
type step string

const (
	stepExecute   step = "execute"   // the job runs Execute
	stepReconcile step = "reconcile" // the reconciler runs (grace 0)
	stepRestart   step = "restart"   // the process restarts: only the database survives

	stepCrashAtCommit   step = "crash at commit"    // the process dies right after the provider commits a new effect
	stepCrashAfterReply step = "crash after reply"  // the process dies after the provider answered, before recording
	stepCrashAfterFound step = "crash after lookup" // the process dies after a lookup answered committed, before recording
	stepProviderFaults  step = "provider faults"    // the next calls fail transiently / lose their reply (sim FailNext, LoseNext)
)

const maxCrashes = 5

// TestCrashWindow generates schedules of executions, reconciler runs,
// restarts, crashes in the window between the provider's commit and the
// record, lost replies and transient failures, then lets the system settle
// with the faults off. Whatever the schedule: the provider has exactly one
// effect, under the original key, and the record is RECORDED with the
// provider's receipt. Along the way the record only makes legal moves, the
// provider never has two effects, and a recorded receipt never changes.
//
// A crash is a panic (errCrash) raised inside the provider call, after the
// provider's own transaction committed: it unwinds Execute or Reconcile
// before they write anything, so whatever they held in memory is lost. The
// test recovers it and then restarts — closes and reopens Warden's
// database — so the next step starts from what is on disk, as a new
// process would. The provider is another system and keeps running.
func TestCrashWindow(t *testing.T) {
	if storetest.Postgres() {
		t.Skip("crashes are simulated by copying SQLite files")
	}
	root := t.TempDir()
	ctx := context.Background()
	steps := []step{stepExecute, stepReconcile, stepCrashAtCommit, stepCrashAfterReply, stepCrashAfterFound,
		stepProviderFaults, stepRestart}
	crashSteps := []step{stepCrashAtCommit, stepCrashAfterReply, stepCrashAfterFound}

	// Each case starts from copies of freshly opened databases: opening
	// one (migrations, the simulator's seed) costs more than a case.
	tmpl := newFixture(t)
	tmpl.db.Close()
	tmpl.sim.Close()

	// How often the schedules reached the interesting places, for -v.
	var cases, crashed, crashedCases, settledReserved int
	defer func() {
		t.Logf("%d cases, %d crashes in %d of them, %d left reserved for the settling reconcile",
			cases, crashed, crashedCases, settledReserved)
	}()

	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp(root, "case")
		if err != nil {
			rt.Fatal(err)
		}
		path := filepath.Join(dir, "warden.db")
		if err := copyFile(tmpl.path, path); err != nil {
			rt.Fatal(err)
		}
		if err := copyFile(tmpl.sim.Path(), filepath.Join(dir, "sim.db")); err != nil {
			rt.Fatal(err)
		}
		db, err := store.Open(ctx, path)
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { db.Close() }()
		provider, err := sim.Open(ctx, filepath.Join(dir, "sim.db"))
		if err != nil {
			rt.Fatal(err)
		}
		defer provider.Close()

		var tool tools.Tool
		for _, tl := range sim.Catalog() {
			if tl.Name == sim.ToolIssueRefund {
				tool = tl
			}
		}
		// With the production wrapper a lost reply or a transient failure
		// is retried inside one Execute; without it, by the next step.
		var inner tools.Provider = provider
		if rapid.Bool().Draw(rt, "with retry") {
			tool.MaxAttempts = rapid.IntRange(1, 3).Draw(rt, "max attempts")
			inner = tools.WithRetry(provider, tools.RetryOptions{InitialInterval: time.Microsecond, MaxInterval: time.Millisecond})
		}
		s := &spy{p: inner}
		crashAtCommit := 0
		hook := func(string, string) {
			if crashAtCommit > 0 {
				crashAtCommit--
				panic(errCrash)
			}
		}
		provider.SetFaults(sim.Faults{AfterCommit: hook})

		const key = "wdn_crash"
		digest := digestOf(refundArgs)
		call := tools.Call{Tool: sim.ToolIssueRefund, Args: []byte(refundArgs), IdempotencyKey: key, Tenant: tenant}
		resolve := func(context.Context, Entry) (Resolved, error) {
			return Resolved{Tool: tool, Provider: s, Call: call, Digest: digest}, nil
		}
		restart := func() {
			db.Close()
			if db, err = store.Open(ctx, path); err != nil {
				rt.Fatal(err)
			}
		}

		if err := db.Transact(ctx, func(tx *store.Tx) error {
			return Intend(ctx, tx, Entry{Key: key, Digest: digest, Tool: sim.ToolIssueRefund, Tenant: tenant, ActionID: "act-1"})
		}); err != nil {
			rt.Fatal(err)
		}

		prev := Intended
		var recorded []byte
		check := func(when string) {
			e, err := Get(ctx, db.Read(), key)
			if err != nil {
				rt.Fatalf("%s: Get: %v", when, err)
			}
			if e.State != prev && !reachable(prev, e.State) {
				rt.Fatalf("%s: the record moved %s → %s", when, prev, e.State)
			}
			prev = e.State
			effs, err := provider.Effects(ctx)
			if err != nil {
				rt.Fatal(err)
			}
			if len(effs) > 1 {
				rt.Fatalf("%s: the provider has %d effects", when, len(effs))
			}
			if e.State == Recorded {
				if len(effs) != 1 || !bytes.Equal(e.Receipt, effs[0].Receipt) {
					rt.Fatalf("%s: recorded receipt %s, but the provider has %d effects (%s)", when, e.Receipt, len(effs), receipts(effs))
				}
				if recorded != nil && !bytes.Equal(recorded, e.Receipt) {
					rt.Fatalf("%s: the recorded receipt changed from %s to %s", when, recorded, e.Receipt)
				}
				recorded = e.Receipt
			}
		}

		cases++
		caseCrashed := false
		crashesLeft := maxCrashes
		arm := func(n *int) {
			if crashesLeft > 0 {
				crashesLeft--
				*n++
			}
		}
		// Most crashes are armed before anything runs: a crash matters only
		// until the receipt is recorded, and the first Execute usually
		// records it.
		armed := rapid.SliceOfN(rapid.SampledFrom(crashSteps), 0, maxCrashes).Draw(rt, "crashes armed first")
		schedule := rapid.SliceOfN(rapid.SampledFrom(steps), 1, 16).Draw(rt, "schedule")
		for i, st := range append(armed, schedule...) {
			switch st {
			case stepExecute, stepReconcile:
				died := crashes(func() {
					if st == stepExecute {
						// The job's own errors are transient here: it will run again.
						if _, err := Execute(ctx, db, s, tool, call, digest); err != nil && !tools.IsTransient(err) {
							rt.Fatalf("step %d: Execute: %v", i, err)
						}
						return
					}
					if _, err := Reconcile(ctx, db, resolve, ReconcileOptions{}); err != nil {
						rt.Fatalf("step %d: Reconcile: %v", i, err)
					}
				})
				if died {
					crashed++
					caseCrashed = true
					restart()
				}
			case stepRestart:
				restart()
			case stepCrashAtCommit:
				arm(&crashAtCommit)
			case stepCrashAfterReply:
				arm(&s.crashAfterReply)
			case stepCrashAfterFound:
				arm(&s.crashAfterLookup)
			case stepProviderFaults:
				provider.SetFaults(sim.Faults{
					FailNext:    rapid.IntRange(0, 2).Draw(rt, "fail next"),
					LoseNext:    rapid.IntRange(0, 2).Draw(rt, "lose next"),
					AfterCommit: hook,
				})
			}
			check(fmt.Sprintf("step %d (%s)", i, st))
		}

		// Settle: the faults stop. The reconciler alone settles whatever a
		// crash left reserved; the job then finds the record settled.
		crashAtCommit, s.crashAfterReply, s.crashAfterLookup = 0, 0, 0
		provider.SetFaults(sim.Faults{})
		wasReserved := prev == Reserved
		if wasReserved {
			settledReserved++
		}
		if caseCrashed {
			crashedCases++
		}
		if _, err := Reconcile(ctx, db, resolve, ReconcileOptions{}); err != nil {
			rt.Fatalf("settling Reconcile: %v", err)
		}
		check("settling Reconcile")
		if wasReserved && prev != Recorded {
			rt.Fatalf("Reconcile left a reserved record %s", prev)
		}
		e, err := Execute(ctx, db, s, tool, call, digest)
		if err != nil || e.State != Recorded {
			rt.Fatalf("settling Execute = %s, %v; want recorded", e.State, err)
		}
		check("settling Execute")

		effs, err := provider.Effects(ctx)
		if err != nil {
			rt.Fatal(err)
		}
		if len(effs) != 1 || effs[0].IdempotencyKey != key {
			rt.Fatalf("provider effects %s, want exactly one under %s", receipts(effs), key)
		}
		if !bytes.Equal(e.Receipt, effs[0].Receipt) || e.NeedsReview {
			rt.Fatalf("record receipt %s (review %v), want the provider's %s", e.Receipt, e.NeedsReview, effs[0].Receipt)
		}
		if n, err := provider.EffectCount(ctx, ""); err != nil || n != 1 {
			rt.Fatalf("EffectCount = %d, %v; want 1", n, err)
		}
		if other := s.otherKeys(key); other != nil {
			rt.Fatalf("the provider saw other keys %v", other)
		}
	})
}

// reachable reports whether the state machine leads from one state to
// another in one or more moves.
func reachable(from, to State) bool {
	seen := map[State]bool{}
	next := []State{from}
	for len(next) > 0 {
		s := next[0]
		next = next[1:]
		for _, n := range moves[s] {
			if n == to {
				return true
			}
			if !seen[n] {
				seen[n] = true
				next = append(next, n)
			}
		}
	}
	return false
}

// copyFile copies a closed SQLite database (its WAL already folded in).
func copyFile(from, to string) error {
	if _, err := os.Stat(from + "-wal"); err == nil {
		return fmt.Errorf("%s still has a write-ahead log", from)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

func receipts(effs []sim.Effect) string {
	var out []string
	for _, e := range effs {
		out = append(out, e.IdempotencyKey+": "+string(e.Receipt))
	}
	return strings.Join(out, "; ")
}

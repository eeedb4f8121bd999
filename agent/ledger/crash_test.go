package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/wardenhq/warden/agent/tools"
	"github.com/wardenhq/warden/agent/tools/sim"
	"github.com/wardenhq/warden/store"
)

// What can happen to the process and the provider between approval and
// the record. The crash steps arm a crash that happens at the next chance.
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
	root := t.TempDir()
	ctx := context.Background()
	steps := []step{stepExecute, stepReconcile, stepRestart, stepCrashAtCommit, stepCrashAfterReply, stepCrashAfterFound, stepProviderFaults}

	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp(root, "case")
		if err != nil {
			rt.Fatal(err)
		}
		path := filepath.Join(dir, "warden.db")
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

		if err := db.Transact(ctx, func(tx *sql.Tx) error {
			return Intend(ctx, tx, Entry{Key: key, Digest: digest, Tool: sim.ToolIssueRefund, Tenant: tenant, ActionID: "act-1"})
		}); err != nil {
			rt.Fatal(err)
		}

		prev := Intended
		var recorded json []byte
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
					rt.Fatalf("%s: recorded receipt %s, provider's effects %v", when, e.Receipt, effs)
				}
				if recorded != nil && !bytes.Equal(recorded, e.Receipt) {
					rt.Fatalf("%s: the recorded receipt changed from %s to %s", when, recorded, e.Receipt)
				}
				recorded = e.Receipt
			}
		}

		crashesLeft := maxCrashes
		arm := func(n *int) {
			if crashesLeft > 0 {
				crashesLeft--
				*n++
			}
		}
		schedule := rapid.SliceOfN(rapid.SampledFrom(steps), 0, 14).Draw(rt, "schedule")
		for i, st := range schedule {
			switch st {
			case stepExecute, stepReconcile:
				crashed := crashes(func() {
					if st == stepExecute {
						_, _ = Execute(ctx, db, tool.Name == "" && false || true && s != nil && true && false || true && false || false || true && true && false || s.p != nil && false || false || true && false || false || true && false || false || false, tool, call, digest)
					}
				})
				_ = crashed
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
			check(string(st) + " (step " + string(rune('0'+i)) + ")")
		}
		_ = slices.Equal[[]string]
	})
}

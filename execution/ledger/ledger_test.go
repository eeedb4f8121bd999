package ledger

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

func TestMoves(t *testing.T) {
	allowed := map[[2]State]bool{
		{Intended, Reserved}: true,
		{Reserved, Reserved}: true,
		{Reserved, Executed}: true,
		{Reserved, Failed}:   true,
		{Executed, Recorded}: true,
	}
	all := []State{Intended, Reserved, Executed, Recorded, Failed}
	for _, from := range all {
		for _, to := range all {
			if got, want := canMove(from, to), allowed[[2]State{from, to}]; got != want {
				t.Errorf("canMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

// TestExecuteStateMachine runs Execute once with the provider misbehaving
// in one way, then again with it behaving, and checks the record after each.
func TestExecuteStateMachine(t *testing.T) {
	tests := []struct {
		name   string
		faults sim.Faults
		args   string

		// the first Execute
		wantKind     string
		wantState    State
		wantAttempts int
		wantReceipt  bool
		wantError    string // in the stored Error
		wantEffects  int

		// a second Execute, with the faults off
		thenKind     string
		thenState    State
		thenAttempts int
		thenCalls    int // provider calls the second Execute made
		thenEffects  int
	}{
		{
			name: "success is recorded", args: refundArgs,
			wantKind: "", wantState: Recorded, wantAttempts: 1, wantReceipt: true, wantError: "", wantEffects: 1,
			thenKind: "", thenState: Recorded, thenAttempts: 1, thenCalls: 0, thenEffects: 1,
		},
		{
			name: "transient failure stays reserved", faults: sim.Faults{FailNext: 1}, args: refundArgs,
			wantKind: "transient", wantState: Reserved, wantAttempts: 1, wantReceipt: false, wantError: "transient: ", wantEffects: 0,
			thenKind: "", thenState: Recorded, thenAttempts: 2, thenCalls: 1, thenEffects: 1,
		},
		{
			name: "lost reply stays reserved", faults: sim.Faults{LoseNext: 1}, args: refundArgs,
			wantKind: "transient", wantState: Reserved, wantAttempts: 1, wantReceipt: false, wantError: "transient: reply lost", wantEffects: 1,
			thenKind: "", thenState: Recorded, thenAttempts: 2, thenCalls: 1, thenEffects: 1,
		},
		{
			name: "terminal refusal fails", args: refusedArgs,
			wantKind: "failed", wantState: Failed, wantAttempts: 1, wantReceipt: false, wantError: "a refund of $999,999.99 is more than the $2,400.00 paid", wantEffects: 0,
			thenKind: "failed", thenState: Failed, thenAttempts: 1, thenCalls: 0, thenEffects: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			const key = "wdn_state"
			f.mustIntend(key, tt.args)
			if e := f.get(key); e.State != Intended || e.Attempts != 0 {
				t.Fatalf("after Intend: state %s, attempts %d; want intended, 0", e.State, e.Attempts)
			}

			f.sim.SetFaults(tt.faults)
			got, err := f.execute(key, tt.args)
			f.sim.SetFaults(sim.Faults{})
			stored := f.get(key)
			if k := kindOf(err); k != tt.wantKind {
				t.Errorf("Execute error = %v (%s), want %q", err, k, tt.wantKind)
			}
			if got.State != tt.wantState || stored.State != tt.wantState {
				t.Errorf("state returned %s, stored %s; want %s", got.State, stored.State, tt.wantState)
			}
			if stored.Attempts != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", stored.Attempts, tt.wantAttempts)
			}
			if (stored.Receipt != nil) != tt.wantReceipt || !bytes.Equal(got.Receipt, stored.Receipt) {
				t.Errorf("receipt returned %s, stored %s; want one: %v", got.Receipt, stored.Receipt, tt.wantReceipt)
			}
			if (tt.wantError == "") != (stored.Error == "") || !strings.Contains(stored.Error, tt.wantError) {
				t.Errorf("stored error = %q, want it to say %q", stored.Error, tt.wantError)
			}
			if n := len(f.effects()); n != tt.wantEffects {
				t.Errorf("provider effects = %d, want %d", n, tt.wantEffects)
			}
			if stored.Key != key || stored.Digest != digestOf(tt.args) || stored.Tool != sim.ToolIssueRefund ||
				stored.Tenant != tenant || stored.ActionID != "act-"+key || stored.NeedsReview {
				t.Errorf("stored binding = %+v, want key, digest, tool, tenant and action kept, no review", stored)
			}

			before, _ := f.spy.counts()
			again, err := f.execute(key, tt.args)
			after, _ := f.spy.counts()
			if k := kindOf(err); k != tt.thenKind {
				t.Errorf("second Execute error = %v (%s), want %q", err, k, tt.thenKind)
			}
			if again.State != tt.thenState {
				t.Errorf("second Execute state = %s, want %s", again.State, tt.thenState)
			}
			if again.Attempts != tt.thenAttempts {
				t.Errorf("second Execute attempts = %d, want %d", again.Attempts, tt.thenAttempts)
			}
			if after-before != tt.thenCalls {
				t.Errorf("second Execute called the provider %d times, want %d", after-before, tt.thenCalls)
			}
			effs := f.effects()
			if len(effs) != tt.thenEffects {
				t.Fatalf("provider effects = %d, want %d", len(effs), tt.thenEffects)
			}
			if tt.thenState == Recorded {
				if !bytes.Equal(again.Receipt, effs[0].Receipt) {
					t.Errorf("receipt = %s, want the provider's %s", again.Receipt, effs[0].Receipt)
				}
				if tt.wantReceipt && !bytes.Equal(again.Receipt, got.Receipt) {
					t.Errorf("second receipt %s differs from the first %s", again.Receipt, got.Receipt)
				}
			}
			if tt.thenKind == "failed" && (tools.IsTransient(err) || !strings.Contains(err.Error(), "more than the $2,400.00 paid")) {
				t.Errorf("stored failure = %v, want a Terminal error giving the reason", err)
			}
			if other := f.spy.otherKeys(key); other != nil {
				t.Errorf("the provider saw other keys %v, want only %s", other, key)
			}
		})
	}
}

func TestIntendBindsTheKey(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_bind"
	f.mustIntend(key, refundArgs)
	if err := f.intend(key, refundArgs); err != nil {
		t.Fatalf("Intend of the same payload again = %v, want nil", err)
	}

	other := []struct {
		name string
		e    Entry
	}{
		{"other digest", Entry{Key: key, Digest: digestOf(refusedArgs), Tool: sim.ToolIssueRefund, Tenant: tenant, ActionID: "act-" + key}},
		{"other tool", Entry{Key: key, Digest: digestOf(refundArgs), Tool: sim.ToolReverseRefund, Tenant: tenant, ActionID: "act-" + key}},
		{"other tenant", Entry{Key: key, Digest: digestOf(refundArgs), Tool: sim.ToolIssueRefund, Tenant: "globex", ActionID: "act-" + key}},
		{"other action", Entry{Key: key, Digest: digestOf(refundArgs), Tool: sim.ToolIssueRefund, Tenant: tenant, ActionID: "act-other"}},
	}
	for _, tt := range other {
		err := f.db.Transact(f.ctx, func(tx *store.Tx) error { return Intend(f.ctx, tx, tt.e) })
		if !errors.Is(err, ErrDigestMismatch) {
			t.Errorf("%s: Intend = %v, want ErrDigestMismatch", tt.name, err)
		}
	}
	e := f.get(key)
	if e.Digest != digestOf(refundArgs) || e.Tool != sim.ToolIssueRefund || e.Tenant != tenant ||
		e.ActionID != "act-"+key || e.State != Intended || e.Attempts != 0 {
		t.Errorf("record after refused Intends = %+v, want the first one unchanged", e)
	}

	if _, err := f.execute(key, refundArgs); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if err := f.intend(key, refundArgs); err != nil {
		t.Fatalf("Intend after Execute = %v, want nil", err)
	}
	if e := f.get(key); e.State != Recorded || e.Attempts != 1 {
		t.Errorf("Intend again moved the record to %s (attempts %d), want recorded left alone", e.State, e.Attempts)
	}
}

func TestIntendRefusesBadInput(t *testing.T) {
	f := newFixture(t)
	good := Entry{Key: "wdn_ok", Digest: digestOf(refundArgs), Tool: sim.ToolIssueRefund, Tenant: tenant}
	tests := []struct {
		name string
		edit func(*Entry)
	}{
		{"no key", func(e *Entry) { e.Key = "" }},
		{"key too long", func(e *Entry) { e.Key = strings.Repeat("k", 256) }},
		{"no digest", func(e *Entry) { e.Digest = "" }},
		{"digest upper case", func(e *Entry) { e.Digest = strings.ToUpper(e.Digest) }},
		{"digest too short", func(e *Entry) { e.Digest = e.Digest[:63] }},
		{"no tool", func(e *Entry) { e.Tool = "" }},
	}
	for _, tt := range tests {
		e := good
		tt.edit(&e)
		err := f.db.Transact(f.ctx, func(tx *store.Tx) error { return Intend(f.ctx, tx, e) })
		if err == nil {
			t.Errorf("%s: Intend = nil, want an error", tt.name)
		}
		if _, err := Get(f.ctx, f.db.Read(), e.Key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: Get = %v, want nothing written", tt.name, err)
		}
	}
}

func TestExecuteRefusesWhatWasNotIntended(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_refuse"
	f.mustIntend(key, refundArgs)
	tests := []struct {
		name     string
		call     tools.Call
		digest   string
		wantKind string
	}{
		{"other digest", f.call(key, refusedArgs), digestOf(refusedArgs), "mismatch"},
		{"right digest, other tenant", tools.Call{Tool: sim.ToolIssueRefund, Args: []byte(refundArgs), IdempotencyKey: key, Tenant: "globex"}, digestOf(refundArgs), "mismatch"},
		{"never intended", f.call("wdn_unknown", refundArgs), digestOf(refundArgs), "not intended"},
		{"no key", f.call("", refundArgs), digestOf(refundArgs), "other: execute effect: the call has no idempotency key"},
	}
	for _, tt := range tests {
		_, err := Execute(f.ctx, f.db, f.spy, f.tool, tt.call, tt.digest)
		if k := kindOf(err); k != tt.wantKind {
			t.Errorf("%s: Execute error = %v (%s), want %q", tt.name, err, k, tt.wantKind)
		}
	}
	if !errors.Is(ErrNotIntended, store.ErrNotFound) {
		t.Errorf("ErrNotIntended does not wrap store.ErrNotFound")
	}
	if n, _ := f.spy.counts(); n != 0 {
		t.Errorf("the provider was called %d times, want 0", n)
	}
	if e := f.get(key); e.State != Intended || e.Attempts != 0 || e.Digest != digestOf(refundArgs) {
		t.Errorf("record after refusals = %+v, want it intended and untouched", e)
	}
}

// TestExecuteRecordsAfterTheCallerGaveUp: the caller's context ends just
// after the provider committed. The receipt is recorded anyway; without
// that the record would stay reserved for Reconcile.
func TestExecuteRecordsAfterTheCallerGaveUp(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_gaveup"
	f.mustIntend(key, refundArgs)
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	f.sim.SetFaults(sim.Faults{AfterCommit: func(string, string) { cancel() }})
	e, err := Execute(ctx, f.db, f.spy, f.tool, f.call(key, refundArgs), digestOf(refundArgs))
	if err != nil || e.State != Recorded {
		t.Fatalf("Execute = %s, %v; want recorded", e.State, err)
	}
	if got := f.get(key); got.State != Recorded || !bytes.Equal(got.Receipt, f.effects()[0].Receipt) {
		t.Errorf("stored %s with receipt %s, want recorded with the provider's", got.State, got.Receipt)
	}
}

// TestExecuteReturnsExecutedWhenTheRecordFails: the provider commits and
// then Warden's database goes away. Execute says EXECUTED, with the
// receipt; the row stays RESERVED; after a restart Execute records the
// same receipt without a second effect.
func TestExecuteReturnsExecutedWhenTheRecordFails(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_executed"
	f.mustIntend(key, refundArgs)
	f.sim.SetFaults(sim.Faults{AfterCommit: func(string, string) { f.db.Close() }})
	e, err := f.execute(key, refundArgs)
	f.sim.SetFaults(sim.Faults{})
	if err == nil || e.State != Executed || e.Receipt == nil {
		t.Fatalf("Execute = %s, receipt %s, %v; want executed with a receipt and an error", e.State, e.Receipt, err)
	}
	f.restart()
	if got := f.get(key); got.State != Reserved || got.Receipt != nil {
		t.Fatalf("stored after the failed record: %s, receipt %s; want reserved, none", got.State, got.Receipt)
	}
	again, err := f.execute(key, refundArgs)
	if err != nil || again.State != Recorded || !bytes.Equal(again.Receipt, e.Receipt) {
		t.Errorf("Execute after restart = %s, %s, %v; want recorded with %s", again.State, again.Receipt, err, e.Receipt)
	}
	if n := len(f.effects()); n != 1 {
		t.Errorf("provider effects = %d, want 1", n)
	}
}

// TestConcurrentExecuteOneEffect: several workers execute the same key at
// once. One provider call, one effect, one receipt for all.
func TestConcurrentExecuteOneEffect(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_concurrent"
	f.mustIntend(key, refundArgs)
	f.sim.SetFaults(sim.Faults{Delay: 30 * time.Millisecond}) // keep the first call in flight

	const workers = 6
	var (
		wg       sync.WaitGroup
		entries  [workers]Entry
		errs     [workers]error
		start    = make(chan struct{})
		receipts = map[string]bool{}
	)
	for i := range workers {
		wg.Go(func() {
			<-start
			entries[i], errs[i] = f.execute(key, refundArgs)
		})
	}
	close(start)
	wg.Wait()
	for i := range workers {
		if errs[i] != nil || entries[i].State != Recorded {
			t.Errorf("worker %d: %s, %v; want recorded", i, entries[i].State, errs[i])
		}
		receipts[string(entries[i].Receipt)] = true
	}
	if len(receipts) != 1 {
		t.Errorf("workers got %d different receipts, want 1", len(receipts))
	}
	if n, _ := f.spy.counts(); n != 1 {
		t.Errorf("provider called %d times, want 1", n)
	}
	if e := f.get(key); e.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", e.Attempts)
	}
	if n := len(f.effects()); n != 1 {
		t.Errorf("provider effects = %d, want 1", n)
	}
}

// TestExecuteWaitStopsWithTheContext: a worker waiting for a key in
// flight gives up when its context does, without touching the record.
func TestExecuteWaitStopsWithTheContext(t *testing.T) {
	f := newFixture(t)
	const key = "wdn_wait"
	f.mustIntend(key, refundArgs)
	unlock, err := inflight.lock(f.ctx, lockKey(f.db, key))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(f.ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := Execute(ctx, f.db, f.spy, f.tool, f.call(key, refundArgs), digestOf(refundArgs)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Execute while the key is held = %v, want the context's deadline", err)
	}
	if e := f.get(key); e.State != Intended || e.Attempts != 0 {
		t.Errorf("record = %s, attempts %d; want intended, 0", e.State, e.Attempts)
	}
}

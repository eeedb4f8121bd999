package ledger

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tools"
)

// gated holds every provider call until open is closed, counting them.
type gated struct {
	p       tools.Provider
	calls   atomic.Int32
	entered chan struct{}
	open    chan struct{}
}

func (g *gated) Execute(ctx context.Context, t tools.Tool, call tools.Call) (tools.Result, error) {
	g.calls.Add(1)
	g.entered <- struct{}{}
	<-g.open
	return g.p.Execute(ctx, t, call)
}

// TestExecuteAcrossReplicasCallsTheProviderOnce: two replicas (two
// handles on one PostgreSQL database, each with its own in-process locks,
// as two processes have) execute the same approved effect at once. The
// second waits on the key's database lock while the first calls the
// provider, then finds the receipt: the provider is called once.
func TestExecuteAcrossReplicasCallsTheProviderOnce(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("replicas share a database on PostgreSQL only; set " + storetest.EnvPostgres)
	}
	f := newFixture(t)
	other, err := store.OpenURL(f.ctx, f.path, store.Options{DataDir: filepath.Join(t.TempDir(), "replica-b")})
	if err != nil {
		t.Fatal(err)
	}
	storetest.NoConflicts(t, other)
	defer other.Close()
	if lockKey(other, "k") == lockKey(f.db, "k") {
		t.Fatal("the second replica shares the first one's in-process locks; the test would prove nothing")
	}
	const key = "wdn_two_replicas"
	f.mustIntend(key, refundArgs)
	g := &gated{p: f.sim, entered: make(chan struct{}, 2), open: make(chan struct{})}

	var wg sync.WaitGroup
	results := make([]Entry, 2)
	errs := make([]error, 2)
	run := func(i int, db *store.DB) {
		defer wg.Done()
		results[i], errs[i] = Execute(f.ctx, db, g, f.tool, f.call(key, refundArgs), digestOf(refundArgs))
	}
	wg.Add(1)
	go run(0, f.db)
	<-g.entered // replica A is inside the provider call
	wg.Add(1)
	go run(1, other)

	// Replica B either waits on the key's advisory lock, or (without the
	// database lock) reaches the provider too.
	deadline := time.Now().Add(30 * time.Second)
	secondCall := false
	for !secondCall {
		var waiting int
		if err := f.db.Read().QueryRowContext(f.ctx,
			`SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case <-g.entered:
			secondCall = true
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("replica B neither waited on the key's lock nor called the provider")
		}
	}
	close(g.open)
	wg.Wait()
	if n := g.calls.Load(); n != 1 {
		t.Fatalf("provider called %d times for one key across two replicas, want 1", n)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: Execute: %v", i, err)
		} else if results[i].State != Recorded {
			t.Errorf("replica %d: state %s, want recorded", i, results[i].State)
		}
	}
	if n := len(f.effects()); n != 1 {
		t.Errorf("provider effects = %d, want 1", n)
	}
}

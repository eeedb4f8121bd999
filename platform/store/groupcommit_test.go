package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// gcTable makes the table these tests write: one row per caller.
func gcTable(t *testing.T, db *DB) {
	t.Helper()
	err := db.TransactAlone(context.Background(), func(tx *Tx) error {
		_, err := tx.ExecContext(context.Background(), `CREATE TABLE gc_rows (name TEXT PRIMARY KEY, v INTEGER NOT NULL)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func gcInsert(ctx context.Context, tx *Tx, name string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (name, v) VALUES (?, 1)`, name)
	return err
}

// gcCommitted reports whether name's row is visible to a reader: committed.
func gcCommitted(t *testing.T, db *DB, name string) bool {
	t.Helper()
	var n int
	if err := db.Read().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM gc_rows WHERE name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// holdTurn starts a transaction whose function waits until release is
// closed, so that the callers started meanwhile queue behind it.
func holdTurn(t *testing.T, db *DB) (release func(), done <-chan error) {
	t.Helper()
	started, hold := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	var once sync.Once // the function runs again when its batch fails
	go func() {
		errc <- db.Transact(context.Background(), func(tx *Tx) error {
			once.Do(func() { close(started) })
			<-hold
			return gcInsert(context.Background(), tx, "holder")
		})
	}()
	<-started
	return func() { close(hold) }, errc
}

// queue starts fn in a goroutine of its own and returns once it waits for
// its turn, so that callers queue in the order queue is called.
func queue(t *testing.T, db *DB, fn func()) {
	t.Helper()
	db.gc.mu.Lock()
	before := len(db.gc.waiters)
	db.gc.mu.Unlock()
	go fn()
	deadline := time.Now().Add(10 * time.Second)
	for {
		db.gc.mu.Lock()
		n := len(db.gc.waiters)
		db.gc.mu.Unlock()
		if n > before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the caller did not queue")
		}
		runtime.Gosched()
	}
}

// TestGroupCommitOneCommitForMany: callers that arrive while a transaction
// runs are committed together, once; each is answered only when its write
// is visible to readers; a caller whose function fails or panics loses its
// own writes and nobody else's.
func TestGroupCommitOneCommitForMany(t *testing.T) {
	db, _ := openTemp(t)
	gcTable(t, db)
	ctx := context.Background()
	boom := errors.New("boom")

	release, holderDone := holdTurn(t, db)
	const n = 20
	type result struct {
		name      string
		err       error
		panicked  any
		committed bool // the row was visible when Transact returned
	}
	results := make(chan result, n)
	for i := range n {
		name := fmt.Sprintf("caller-%02d", i)
		queue(t, db, func() {
			r := result{name: name}
			defer func() {
				r.panicked = recover()
				results <- r
			}()
			r.err = db.Transact(ctx, func(tx *Tx) error {
				if err := gcInsert(ctx, tx, name); err != nil {
					return err
				}
				switch i {
				case 5:
					return boom
				case 11:
					panic("crash in " + name)
				}
				return nil
			})
			r.committed = gcCommitted(t, db, name)
		})
	}
	if got := db.gc.commits.Load(); got != 0 {
		t.Fatalf("%d commits before the holder finished, want 0", got)
	}
	release()
	if err := <-holderDone; err != nil {
		t.Fatalf("holder: %v", err)
	}
	for range n {
		r := <-results
		switch r.name {
		case "caller-05":
			if !errors.Is(r.err, boom) || r.committed {
				t.Errorf("%s (fails): err %v, committed %v; want boom and nothing committed", r.name, r.err, r.committed)
			}
		case "caller-11":
			if r.panicked == nil || gcCommitted(t, db, r.name) {
				t.Errorf("%s (panics): panic %v, committed %v; want the panic re-raised and nothing committed", r.name, r.panicked, gcCommitted(t, db, r.name))
			}
		default:
			if r.err != nil || r.panicked != nil || !r.committed {
				t.Errorf("%s: err %v, panic %v, visible when answered %v; want nil, none, true", r.name, r.err, r.panicked, r.committed)
			}
		}
	}
	if !gcCommitted(t, db, "holder") {
		t.Error("the holder's write is missing")
	}
	// The holder and the 20 callers shared one commit; the panicking
	// caller left the batch before it committed.
	if c, g := db.gc.commits.Load(), db.gc.grouped.Load(); c != 1 || g != n {
		t.Errorf("%d commits carrying %d transactions; want 1 carrying %d", c, g, n)
	}
	// The write path is free again.
	if err := db.Transact(ctx, func(tx *Tx) error { return gcInsert(ctx, tx, "after") }); err != nil || !gcCommitted(t, db, "after") {
		t.Errorf("a write after the batch: %v", err)
	}
}

// TestGroupCommitCancelledNeighbour: a caller whose context is cancelled
// while its statement runs makes SQLite roll the whole shared transaction
// back; the callers batched before and after it still commit.
func TestGroupCommitCancelledNeighbour(t *testing.T) {
	db, _ := openTemp(t)
	gcTable(t, db)
	ctx := context.Background()

	release, holderDone := holdTurn(t, db)
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	call := func(name string, fn func(tx *Tx) error) {
		wg.Add(1)
		queue(t, db, func() {
			defer wg.Done()
			err := db.Transact(ctx, fn)
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	call("before", func(tx *Tx) error { return gcInsert(ctx, tx, "before") })
	call("cancelled", func(tx *Tx) error {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if err := gcInsert(cctx, tx, "cancelled"); err != nil {
			return err
		}
		// A write that never ends by itself, interrupted by the cancel.
		stop := time.AfterFunc(20*time.Millisecond, cancel)
		defer stop.Stop()
		_, err := tx.ExecContext(cctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
			INSERT INTO gc_rows (name, v) SELECT 'endless', COUNT(*) FROM c`)
		return err
	})
	call("after", func(tx *Tx) error { return gcInsert(ctx, tx, "after") })
	release()
	if err := <-holderDone; err != nil {
		t.Fatalf("holder: %v", err)
	}
	wg.Wait()
	if errs["before"] != nil || errs["after"] != nil || !gcCommitted(t, db, "before") || !gcCommitted(t, db, "after") || !gcCommitted(t, db, "holder") {
		t.Errorf("neighbours: before %v %v, after %v %v, holder %v; want both committed",
			errs["before"], gcCommitted(t, db, "before"), errs["after"], gcCommitted(t, db, "after"), gcCommitted(t, db, "holder"))
	}
	if errs["cancelled"] == nil || gcCommitted(t, db, "cancelled") || gcCommitted(t, db, "endless") {
		t.Errorf("cancelled caller: err %v, committed %v; want an error and nothing committed", errs["cancelled"], gcCommitted(t, db, "cancelled"))
	}
}

// TestGroupCommitGoexit: a function that ends its goroutine (t.FailNow in
// a test) hands the turn on; the next writer is not stuck behind it.
func TestGroupCommitGoexit(t *testing.T) {
	db, _ := openTemp(t)
	gcTable(t, db)
	ctx := context.Background()
	var done chan struct{}
	done = make(chan struct{})
	go func() {
		defer close(done)
		_ = db.Transact(ctx, func(tx *Tx) error {
			_ = gcInsert(ctx, tx, "goexit")
			runtime.Goexit()
			return nil
		})
	}()
	<-done
	// The same alone, in a transaction of its own.
	done = make(chan struct{})
	go func() {
		defer close(done)
		_ = db.TransactAlone(ctx, func(tx *Tx) error {
			_ = gcInsert(ctx, tx, "goexit")
			runtime.Goexit()
			return nil
		})
	}()
	<-done
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.Transact(wctx, func(tx *Tx) error { return gcInsert(ctx, tx, "next") }); err != nil {
		t.Fatalf("write after a Goexit: %v", err)
	}
	if gcCommitted(t, db, "goexit") || !gcCommitted(t, db, "next") {
		t.Errorf("goexit committed %v, next %v; want false, true", gcCommitted(t, db, "goexit"), gcCommitted(t, db, "next"))
	}
}

// TestGroupCommitAloneAndCancelledWaiter: TransactAlone waits for the
// batch in progress and runs in a transaction of its own; a caller whose
// context ends while it waits for its turn returns without running.
func TestGroupCommitAloneAndCancelledWaiter(t *testing.T) {
	db, _ := openTemp(t)
	gcTable(t, db)
	ctx := context.Background()

	release, holderDone := holdTurn(t, db)
	cctx, cancel := context.WithCancel(ctx)
	ran := false
	waitErr := make(chan error, 1)
	queue(t, db, func() {
		waitErr <- db.Transact(cctx, func(tx *Tx) error { ran = true; return nil })
	})
	aloneErr := make(chan error, 1)
	queue(t, db, func() {
		aloneErr <- db.TransactAlone(ctx, func(tx *Tx) error {
			// The holder's batch committed before this began.
			var n int
			if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM gc_rows WHERE name = 'holder'`).Scan(&n); err != nil {
				return err
			}
			if n != 1 {
				return errors.New("the batch before TransactAlone is not committed")
			}
			return gcInsert(ctx, tx, "alone")
		})
	})
	cancel()
	if err := <-waitErr; !errors.Is(err, context.Canceled) || ran {
		t.Errorf("cancelled waiter: %v, ran %v; want context.Canceled without running", err, ran)
	}
	release()
	if err := <-holderDone; err != nil {
		t.Fatal(err)
	}
	if err := <-aloneErr; err != nil || !gcCommitted(t, db, "alone") {
		t.Errorf("TransactAlone: %v", err)
	}
}

// TestConcurrentTransactions, on both engines: many concurrent writers,
// some failing; exactly the successful ones' writes are committed.
func TestConcurrentTransactions(t *testing.T) {
	db, _ := openAny(t)
	ctx := context.Background()
	gcTable(t, db)
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Transact(ctx, func(tx *Tx) error {
				if err := gcInsert(ctx, tx, fmt.Sprint(i)); err != nil {
					return err
				}
				if i%7 == 3 {
					return boom
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		want := i%7 != 3
		if got := gcCommitted(t, db, fmt.Sprint(i)); got != want || (err == nil) != want {
			t.Errorf("writer %d: err %v, committed %v; want committed %v", i, err, got, want)
		}
	}
}

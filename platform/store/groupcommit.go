package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Group commit on SQLite.
//
// SQLite has one writer. Before group commit every Transact began, ran and
// committed a transaction of its own while the others queued for the write
// connection, so N concurrent requests cost N commits, each writing its
// pages to the write-ahead log and taking and dropping the write lock. Now
// the requests that queue while one transaction runs share the next one:
// each caller's function runs, in the caller's own goroutine and in turn,
// inside a SAVEPOINT of one shared BEGIN IMMEDIATE transaction, and the last
// caller of the turn commits once for all of them. Nobody is answered before
// that commit returned: every Transact that returns nil returns after its
// own writes are committed, exactly as before.
//
// A function that fails (error, panic, runtime.Goexit) is rolled back to its
// savepoint and touches nobody else's writes; it is answered once the batch
// it ran in committed, so that an error it drew from a neighbour's
// uncommitted write is never reported for a write that then did not commit.
// When the shared transaction itself fails (the commit, a savepoint, or
// SQLite rolling the whole transaction back, as it does when a statement is
// interrupted by its caller's cancelled context or hits a full disk), every
// function of the batch is run again, each in a transaction of its own
// (Transact's contract already allows a function to run more than once).
//
// The turn passes in the order callers arrived. A batch ends when nobody
// waits, when it holds maxGroup functions, or before a caller that asked to
// run alone (TransactAlone: migrations, long jobs), which gets a plain
// transaction of its own between batches.
type groupCommit struct {
	mu      sync.Mutex
	held    bool        // a caller has the turn
	waiters []*gcMember // callers waiting for the turn, in arrival order
	tx      *sql.Tx     // the batch's open transaction; nil between batches
	batch   []*gcMember // callers whose function ran in tx, waiting for its commit

	// commits and grouped count committed batches and the functions they
	// carried (tests and benchmarks read them).
	commits atomic.Int64
	grouped atomic.Int64
}

// maxGroup bounds a batch, so that the first caller of a long stream of
// arrivals is not kept waiting for its commit.
const maxGroup = 64

type gcMember struct {
	alone bool
	turn  chan struct{} // receives the turn
	done  chan bool     // receives the batch's outcome: true committed, false run again
	fnErr error         // what the function returned, answered once the batch committed
}

// errBatchFailed is what a member learns when its batch did not commit:
// its function runs again, alone.
var errBatchFailed = errors.New("group commit failed")

// transactGrouped is Transact's SQLite path.
func (db *DB) transactGrouped(ctx context.Context, fn func(tx *Tx) error, alone bool) error {
	for {
		err := db.gc.run(ctx, db, fn, alone)
		if err != errBatchFailed {
			return err
		}
		alone = true
	}
}

func (g *groupCommit) run(ctx context.Context, db *DB, fn func(tx *Tx) error, alone bool) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	m := &gcMember{alone: alone, turn: make(chan struct{}, 1), done: make(chan bool, 1)}
	if err := g.await(ctx, db, m); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if alone {
		// pass is deferred so that a panic or Goexit in fn hands the
		// turn on too; transact has rolled back by then.
		defer g.pass(db, nil, false)
		return db.transact(ctx, fn)
	}

	if g.tx == nil {
		// The batch's transaction belongs to no one caller: a caller's
		// cancelled context must not roll the others back.
		raw, err := db.write.BeginTx(context.WithoutCancel(ctx), nil)
		if err != nil {
			g.pass(db, nil, false)
			return fmt.Errorf("begin transaction: %w", err)
		}
		g.tx = raw
	}
	tx := &Tx{Tx: g.tx, dialect: db.dialect}
	bg := context.WithoutCancel(ctx)
	if _, err := tx.ExecContext(bg, `SAVEPOINT warden_group`); err != nil {
		g.pass(db, nil, true)
		return errBatchFailed
	}

	returned := false
	defer func() {
		if returned {
			return
		}
		// fn panicked or called runtime.Goexit: undo its writes, hand
		// the turn on, and let the panic go on in this goroutine.
		g.pass(db, nil, !endSavepoint(bg, tx, false))
	}()
	m.fnErr = fn(tx)
	returned = true

	if !endSavepoint(bg, tx, m.fnErr == nil) {
		// The transaction is gone (SQLite rolled it back: an interrupted
		// write, a full disk) or unusable: the batch so far runs again.
		g.pass(db, nil, true)
		if m.fnErr != nil {
			return m.fnErr
		}
		return errBatchFailed
	}
	g.pass(db, m, false)
	if <-m.done {
		return m.fnErr
	}
	return errBatchFailed
}

// endSavepoint releases the caller's savepoint, undoing its writes first
// unless keep. It reports whether the shared transaction is still whole.
func endSavepoint(ctx context.Context, tx *Tx, keep bool) bool {
	if !keep {
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO warden_group`); err != nil {
			return false
		}
	}
	_, err := tx.ExecContext(ctx, `RELEASE warden_group`)
	return err == nil
}

// await returns once m has the turn, or with ctx's error while it waits.
func (g *groupCommit) await(ctx context.Context, db *DB, m *gcMember) error {
	g.mu.Lock()
	if !g.held {
		g.held = true
		g.mu.Unlock()
		return nil
	}
	g.waiters = append(g.waiters, m)
	g.mu.Unlock()
	select {
	case <-m.turn:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	for i, w := range g.waiters {
		if w == m {
			g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
			g.mu.Unlock()
			return ctx.Err()
		}
	}
	g.mu.Unlock()
	// The turn reached m as ctx ended: hand it on.
	<-m.turn
	g.pass(db, nil, false)
	return ctx.Err()
}

// pass ends the turn of the caller holding it. m, when not nil, joins the
// batch (its function ran and its savepoint was released). broken says the
// batch's transaction failed: it is rolled back and its members run again.
// Then the turn goes to the next waiter, within the batch when the batch
// can take it, or else after the batch is committed.
func (g *groupCommit) pass(db *DB, m *gcMember, broken bool) {
	if broken {
		g.endBatch(false)
	}
	g.mu.Lock()
	if m != nil {
		g.batch = append(g.batch, m)
	}
	if g.tx != nil && len(g.waiters) == 0 {
		// Before committing, let the goroutines that are ready to run
		// (requests about to write) queue: they join this commit
		// instead of waiting for it. Idle, this returns at once.
		g.mu.Unlock()
		runtime.Gosched()
		g.mu.Lock()
	}
	if g.tx != nil && len(g.waiters) > 0 && !g.waiters[0].alone && len(g.batch) < maxGroup {
		next := g.waiters[0]
		g.waiters = g.waiters[1:]
		g.mu.Unlock()
		next.turn <- struct{}{}
		return
	}
	wrote := false
	for _, b := range g.batch {
		wrote = wrote || b.fnErr == nil
	}
	g.mu.Unlock()
	if g.tx != nil {
		// Arrivals queue meanwhile (mu is free); the turn is still held.
		if wrote {
			g.endBatch(g.tx.Commit() == nil)
		} else {
			// Every member failed and undid its writes: nothing to
			// commit. Their answers are their own errors, final.
			_ = g.tx.Rollback()
			g.tx = nil
			g.endBatch(true)
		}
	}
	g.mu.Lock()
	if len(g.waiters) > 0 {
		next := g.waiters[0]
		g.waiters = g.waiters[1:]
		g.mu.Unlock()
		next.turn <- struct{}{}
		return
	}
	g.held = false
	g.mu.Unlock()
}

// endBatch closes the batch after its commit (committed) or failure, and
// tells its members. Only the holder of the turn calls it.
func (g *groupCommit) endBatch(committed bool) {
	if g.tx != nil && !committed {
		_ = g.tx.Rollback()
	}
	g.tx = nil
	g.mu.Lock()
	batch := g.batch
	g.batch = nil
	g.mu.Unlock()
	if committed && len(batch) > 0 {
		g.commits.Add(1)
		g.grouped.Add(int64(len(batch)))
	}
	for _, b := range batch {
		b.done <- committed
	}
}

package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"time"
)

// LockKey holds a lock on name across every process sharing this
// PostgreSQL database, for work that must not run twice at once and that
// cannot stay inside one transaction (a provider's call, say): a session
// advisory lock on a connection set aside until the returned unlock. If
// the process dies, the connection closes and PostgreSQL releases the
// lock, so a replica's kill -9 never leaves a key locked. It waits until
// the lock is free or ctx ends.
//
// On SQLite it returns at once: one process serves the file, and callers
// keep their own in-process lock.
//
// At most half the pool's connections are set aside for such locks at
// once, so that the holders always find a connection for their own
// transactions; further callers wait for a slot.
func (db *DB) LockKey(ctx context.Context, space, name string) (unlock func(), err error) {
	return db.lockKey(ctx, space, name, false)
}

// TryLockKey is LockKey that does not wait: ok is false when another
// holder (in any process) has the key, or no slot is free.
func (db *DB) TryLockKey(ctx context.Context, space, name string) (unlock func(), ok bool, err error) {
	unlock, err = db.lockKey(ctx, space, name, true)
	if err == errKeyBusy {
		return nil, false, nil
	}
	return unlock, err == nil, err
}

var errKeyBusy = fmt.Errorf("key busy")

var keyLockSlots sync.Map // *DB → chan struct{}

func (db *DB) slots() chan struct{} {
	if s, ok := keyLockSlots.Load(db); ok {
		return s.(chan struct{})
	}
	n := max(1, db.write.Stats().MaxOpenConnections/2)
	s, _ := keyLockSlots.LoadOrStore(db, make(chan struct{}, n))
	return s.(chan struct{})
}

func (db *DB) lockKey(ctx context.Context, space, name string, try bool) (func(), error) {
	if db.dialect != Postgres {
		return func() {}, nil
	}
	slots := db.slots()
	if try {
		select {
		case slots <- struct{}{}:
		default:
			return nil, errKeyBusy
		}
	} else {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		<-slots
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	// A connection whose lock state is in doubt (the wait was cancelled,
	// the unlock failed) is discarded rather than returned to the pool
	// holding a lock.
	discard := func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		<-slots
	}
	q := `SELECT pg_advisory_lock(hashtext(?), hashtext(?))`
	if try {
		q = `SELECT pg_try_advisory_lock(hashtext(?), hashtext(?))`
	}
	var got bool
	if try {
		err = conn.QueryRowContext(ctx, q, space, name).Scan(&got)
	} else {
		_, err = conn.ExecContext(ctx, q, space, name)
		got = err == nil
	}
	if err != nil {
		discard()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if !got {
		_ = conn.Close()
		<-slots
		return nil, errKeyBusy
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var ok bool
		if err := conn.QueryRowContext(uctx, `SELECT pg_advisory_unlock(hashtext(?), hashtext(?))`, space, name).Scan(&ok); err != nil || !ok {
			discard()
			return
		}
		_ = conn.Close()
		<-slots
	}, nil
}

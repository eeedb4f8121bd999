package ledger

import (
	"context"
	"sync"

	"github.com/wardenhq/warden/platform/store"
)

// The work on one key is serialised: Execute waits its turn, Reconcile
// skips a key that is busy. So a duplicate Execute finds the first one's
// record instead of calling the provider again, and Reconcile never races
// a call that is merely slow.
//
// Within this process inflight does it. On PostgreSQL, where several
// replicas share the ledger, the holder of the in-process lock also takes
// the key's database lock (store.DB.LockKey: a session advisory lock,
// released by PostgreSQL if the replica dies), so two replicas never call
// the provider at once for one key. On SQLite one process serves the file
// and the in-process lock is the whole of it.

// effectLockSpace names the ledger's keys among the database locks.
const effectLockSpace = "warden.effect"

// lockEffect waits until key is free here and in every replica.
func lockEffect(ctx context.Context, db *store.DB, key string) (func(), error) {
	unlock, err := inflight.lock(ctx, lockKey(db, key))
	if err != nil {
		return nil, err
	}
	unlockDB, err := db.LockKey(ctx, effectLockSpace, key)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() { unlockDB(); unlock() }, nil
}

// tryLockEffect takes key when it is free here and in every replica.
func tryLockEffect(ctx context.Context, db *store.DB, key string) (func(), bool, error) {
	unlock, ok := inflight.tryLock(lockKey(db, key))
	if !ok {
		return nil, false, nil
	}
	unlockDB, ok, err := db.TryLockKey(ctx, effectLockSpace, key)
	if err != nil || !ok {
		unlock()
		return nil, false, err
	}
	return func() { unlockDB(); unlock() }, true, nil
}

var inflight = keyLocks{m: map[string]*keyLock{}}

// lockKey names key in db: two handles on one database file share locks.
func lockKey(db *store.DB, key string) string { return db.Path() + "\x00" + key }

type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	held chan struct{} // one slot: full while the key is held
	refs int           // holders and waiters; the entry goes at zero
}

func (l *keyLocks) ref(k string) *keyLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	kl := l.m[k]
	if kl == nil {
		kl = &keyLock{held: make(chan struct{}, 1)}
		l.m[k] = kl
	}
	kl.refs++
	return kl
}

func (l *keyLocks) unref(k string, kl *keyLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kl.refs--; kl.refs == 0 {
		delete(l.m, k)
	}
}

// lock waits until k is free or ctx is done, and returns the unlock.
func (l *keyLocks) lock(ctx context.Context, k string) (func(), error) {
	kl := l.ref(k)
	select {
	case kl.held <- struct{}{}:
		return func() { <-kl.held; l.unref(k, kl) }, nil
	case <-ctx.Done():
		l.unref(k, kl)
		return nil, context.Cause(ctx)
	}
}

// tryLock takes k when it is free.
func (l *keyLocks) tryLock(k string) (func(), bool) {
	kl := l.ref(k)
	select {
	case kl.held <- struct{}{}:
		return func() { <-kl.held; l.unref(k, kl) }, true
	default:
		l.unref(k, kl)
		return nil, false
	}
}

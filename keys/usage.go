package keys

import (
	"context"
	"sync"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// UsageFlushEvery is how far behind a key's stored last use (LastUsedAt,
// the console's "last used") may be: checking a key on a request writes
// nothing; the uses noted since the last flush are written together, in
// one transaction, every UsageFlushEvery and when the server stops.
const UsageFlushEvery = 30 * time.Second

// Usage notes the keys requests used, in memory, and writes their last
// use in batches (Flush, Run): verifying a key on a request is a read.
// A process killed at once (kill -9) loses at most UsageFlushEvery of
// last-use times; nothing else depends on them.
type Usage struct {
	db *store.DB

	mu      sync.Mutex
	pending map[string]time.Time // key id → latest use not yet written
}

// NewUsage makes a recorder writing to db.
func NewUsage(db *store.DB) *Usage {
	return &Usage{db: db, pending: map[string]time.Time{}}
}

// Note records that key id was used at at. It writes nothing.
func (u *Usage) Note(id string, at time.Time) {
	if u == nil || id == "" {
		return
	}
	u.mu.Lock()
	if at.After(u.pending[id]) {
		u.pending[id] = at
	}
	u.mu.Unlock()
}

// Flush writes the uses noted since the last flush, in one transaction.
// A stored time later than the noted one (another replica's) is kept.
// What it could not write is noted again for the next flush.
func (u *Usage) Flush(ctx context.Context) error {
	u.mu.Lock()
	batch := u.pending
	u.pending = map[string]time.Time{}
	u.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := u.db.Transact(ctx, func(tx *store.Tx) error {
		for id, at := range batch {
			s := store.FormatTime(at)
			if _, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET last_used_at = ?
				WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, s, id, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		u.mu.Lock()
		for id, at := range batch {
			if at.After(u.pending[id]) {
				u.pending[id] = at
			}
		}
		u.mu.Unlock()
	}
	return err
}

// Pending is the number of keys whose use is not written yet.
func (u *Usage) Pending() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.pending)
}

// Run flushes every interval (UsageFlushEvery when 0) until ctx ends,
// then once more, so a clean shutdown loses no use. onErr hears of a
// flush that failed (the uses are kept for the next).
func (u *Usage) Run(ctx context.Context, interval time.Duration, onErr func(error)) {
	if interval <= 0 {
		interval = UsageFlushEvery
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := u.Flush(ctx); err != nil && ctx.Err() == nil && onErr != nil {
				onErr(err)
			}
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err := u.Flush(fctx)
			cancel()
			if err != nil && onErr != nil {
				onErr(err)
			}
			return
		}
	}
}

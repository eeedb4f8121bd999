package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// EnqueueMany adds each job once, in the caller's transaction, on River
// as Enqueue does: a key already queued adds nothing, a later RunAt waits.
func TestRiverEnqueueMany(t *testing.T) {
	db := riverSetup(t)
	put(t, db, "test_job", "first", Options{UniqueKey: "a"})
	ctx := context.Background()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		return EnqueueMany(ctx, tx, []Item{
			{Kind: "test_job", Payload: map[string]string{"k": "dup"}, Options: Options{UniqueKey: "a"}},
			{Kind: "test_job", Payload: map[string]string{"k": "b"}, Options: Options{UniqueKey: "b"}},
			{Kind: "test_job", Payload: map[string]string{"k": "c"}, Options: Options{UniqueKey: "c"}},
			{Kind: "test_job", Payload: map[string]string{"k": "later"}, Options: Options{UniqueKey: "later", RunAt: time.Now().Add(time.Hour)}},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := CountPending(ctx, db); err != nil || n != 3 {
		t.Fatalf("CountPending = %d, %v; want first, b and c (dup not added, later scheduled)", n, err)
	}
	var r runs
	riverQueue(t, db, func(q *Queue) { q.Register("test_job", r.handler(nil)) })
	waitFor(t, "the batch", func() bool {
		s := riverStates(t, db)
		return s["first"] == "completed/1" && s["b"] == "completed/1" && s["c"] == "completed/1"
	})
	if r.of("dup") != 0 || r.of("later") != 0 {
		t.Fatalf("runs = %v", r.n)
	}
}

package jobs

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// TestLanesDoNotStarveEachOther (either engine): jobs of the notify lane
// whose handlers hang take only that lane's workers; a job of the default
// lane enqueued after them still runs at once, and the hung ones run
// when released.
func TestLanesDoNotStarveEachOther(t *testing.T) {
	db := storetest.Open(t)
	q := New(db, slog.New(slog.NewTextHandler(io.Discard, nil)), 1)
	q.poll = 50 * time.Millisecond
	q.Lane(QueueNotify, 2, 5*time.Millisecond)
	release := make(chan struct{})
	var hung, sent, executed atomic.Int32
	q.Register("deliver", func(ctx context.Context, _ Job) error {
		hung.Add(1)
		<-release
		sent.Add(1)
		return nil
	})
	q.Register("execute", func(context.Context, Job) error {
		executed.Add(1)
		return nil
	})
	ctx := context.Background()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		for _, k := range []string{"a", "b", "c", "d"} {
			if err := Enqueue(ctx, tx, "deliver", nil, Options{UniqueKey: "deliver:" + k, Queue: QueueNotify}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); q.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	defer close(release)

	waitFor(t, "both notify workers hung", func() bool { return hung.Load() == 2 })
	if err := db.Transact(ctx, func(tx *store.Tx) error { return Enqueue(ctx, tx, "execute", nil, Options{UniqueKey: "execute:1"}) }); err != nil {
		t.Fatal(err)
	}
	q.Notify()
	waitFor(t, "the default lane's job, beside the hung lane", func() bool { return executed.Load() == 1 })
	if got := hung.Load(); got != 2 {
		t.Errorf("%d deliveries started, want only the notify lane's 2 workers' worth", got)
	}
	release <- struct{}{}
	release <- struct{}{}
	waitFor(t, "the remaining deliveries", func() bool { return hung.Load() == 4 })
}

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// A PostgreSQL server that stops answering (packets dropped, connections
// left open) fails Ready at the caller's deadline, on the connection the
// pool held and on the new one it opens next: a new connection used to
// wait out connect_timeout (10 s) whatever the deadline. The failure is
// the storage not answering, and Ready recovers once the network does.
func TestReadyHonoursItsDeadlineWhenPostgresStopsAnswering(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	p, u := storetest.NewProxy(t, storetest.URL(t))
	db, err := store.OpenURL(ctx, u, store.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p.BlackHole(true)
	for i := range 3 { // the held connection, then new ones
		c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		start := time.Now()
		err := db.Ready(c)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, store.ErrNotReachable) || !db.NotAnswering(err) {
			t.Errorf("Ready %d with the network black-holed = %v, want ErrNotReachable, the storage not answering", i, err)
		}
		if took > 3*time.Second {
			t.Errorf("Ready %d took %v with a 300ms deadline", i, took)
		}
	}
	p.BlackHole(false)
	if err := db.Ready(ctx); err != nil {
		t.Errorf("Ready after the network is back = %v", err)
	}
}

// What NotAnswering calls the storage's failure and what it does not.
func TestNotAnswering(t *testing.T) {
	db := storetest.Open(t)
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a deadline", context.DeadlineExceeded, true},
		{"the caller gave up", context.Canceled, false},
		{"a write's storage failure", store.ErrStorageUnavailable, true},
		{"a statement's own mistake", errors.New("no such column: x"), false},
	} {
		if got := db.NotAnswering(tt.err); got != tt.want {
			t.Errorf("NotAnswering(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
	msg := "Keys cannot be checked right now."
	err := db.StorageNotAnswering(msg, context.DeadlineExceeded)
	var p *problem.Error
	if !errors.Is(err, store.ErrStorageUnavailable) || !errors.As(err, &p) {
		t.Fatalf("StorageNotAnswering(deadline) = %v, want ErrStorageUnavailable", err)
	}
	if want := store.ErrStorageUnavailable; p.Code != want.Code || p.RetryAfter != want.RetryAfter || p.Message != msg || p.Err != context.DeadlineExceeded {
		t.Errorf("StorageNotAnswering = %s %q (Retry-After %v, cause %v), want %s %q (Retry-After %v, the deadline)",
			p.Code, p.Message, p.RetryAfter, p.Err, want.Code, msg, want.RetryAfter)
	}
	if own := errors.New("no such column: x"); db.StorageNotAnswering(msg, own) != own {
		t.Error("StorageNotAnswering changed a statement's own error")
	}
	db.Close()
	if !db.NotAnswering(errors.New("sql: database is closed")) {
		t.Error("NotAnswering on a closed store = false, want true")
	}
}

package store

import (
	"context"
	"testing"
	"time"
)

// TestReplicasCountTheLiveOnes: on PostgreSQL every registered replica
// whose heartbeat is recent counts, one whose heartbeat stopped does not;
// on SQLite one process serves the file, and Live is 1.
func TestReplicasCountTheLiveOnes(t *testing.T) {
	ctx := context.Background()
	db, _ := openAny(t)
	now := time.Now()
	a, err := RegisterReplica(ctx, db, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterReplica(ctx, db, now.Add(-ReplicaStaleAfter-time.Second)); err != nil {
		t.Fatal(err)
	}
	b, err := RegisterReplica(ctx, db, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Heartbeat(ctx, now); err != nil {
		t.Fatal(err)
	}
	want := 2
	if db.Dialect() != Postgres {
		want = 1
	}
	if got := a.Live(); got != want {
		t.Errorf("replica a counts %d replicas alive, want %d", got, want)
	}
	// b's heartbeat stops: a stops counting it once it is stale.
	if err := a.Heartbeat(ctx, now.Add(ReplicaStaleAfter+time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := a.Live(); got != 1 {
		t.Errorf("after b's heartbeat stopped, a counts %d replicas alive, want 1", got)
	}
	_ = b
}

package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// TestCleanupKeepsJobsAsRiverDoes (the outbox): done jobs go after a
// day, failed ones after a week; waiting jobs stay whatever their age.
func TestCleanupKeepsJobsAsRiverDoes(t *testing.T) {
	db, _ := setup(t)
	now := time.Now()
	rows := []struct {
		key, state string
		age        time.Duration
		kept       bool
	}{
		{"done-old", "done", 25 * time.Hour, false},
		{"done-new", "done", time.Hour, true},
		{"failed-old", "discarded", 8 * 24 * time.Hour, false},
		{"failed-new", "discarded", 2 * 24 * time.Hour, true},
		{"waiting-old", "available", 30 * 24 * time.Hour, true},
	}
	for _, r := range rows {
		enqueue(t, db, "x", Options{UniqueKey: r.key})
		if _, err := db.Read().Exec(`UPDATE jobs SET state = ?, updated_at = ? WHERE unique_key = ?`, r.state, store.FormatTime(now.Add(-r.age)), r.key); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Cleanup(context.Background(), db, now)
	if err != nil || n != 2 {
		t.Fatalf("Cleanup = %d, %v; want 2 deleted", n, err)
	}
	for _, r := range rows {
		var c int
		db.Read().QueryRow(`SELECT COUNT(*) FROM jobs WHERE unique_key = ?`, r.key).Scan(&c)
		if (c == 1) != r.kept {
			t.Errorf("%s: kept = %v, want %v", r.key, c == 1, r.kept)
		}
	}
}

package journeys

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

func TestPercentile(t *testing.T) {
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i + 1)
	}
	for _, tt := range []struct {
		values []int64
		p      int
		want   int64
	}{
		{nil, 99, 0},
		{[]int64{7}, 99, 7},
		{[]int64{1, 2}, 99, 2},
		{[]int64{1, 2}, 50, 1},
		{hundred, 99, 99},
		{hundred, 100, 100},
		{hundred, 50, 50},
	} {
		if got := percentile(tt.values, tt.p); got != tt.want {
			t.Errorf("percentile(%d values, %d) = %d, want %d", len(tt.values), tt.p, got, tt.want)
		}
	}
}

func TestSkillStats(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	since := now.Add(-15 * time.Minute)
	rows := []struct {
		skill, status string
		ms            int64
		at            time.Time
	}{
		{"refunds", StatusCompleted, 300, now},
		{"refunds", StatusFailed, 900, now},
		{"refunds", StatusCompleted, 100, since},
		{"refunds", StatusFailed, 99_000, since.Add(-time.Second)}, // before the window
		{"refunds", StatusRunning, 50_000, now},                    // not ended
		{"refunds", StatusRejected, 50_000, now},                   // a person's decision
		{"orders", StatusCompleted, 40, now},
		{"", StatusFailed, 10, now}, // never routed
	}
	err := db.Transact(ctx, func(tx *store.Tx) error {
		tenant, err := tenants.Insert(ctx, tx, "acme", "Acme")
		if err != nil {
			return err
		}
		for i, r := range rows {
			if _, err := tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, skill, release_digest, status, latency_ms, created_at)
				VALUES (?, ?, 'r', 'c', ?, 'sha256:x', ?, ?, ?)`, fmt.Sprint("j", i), tenant.ID, r.skill, r.status, r.ms, store.FormatTime(r.at)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := SkillStats(ctx, db.Read(), since)
	if err != nil {
		t.Fatal(err)
	}
	want := []SkillStat{
		{Skill: "orders", Journeys: 1, Failures: 0, P99: 40 * time.Millisecond},
		{Skill: "refunds", Journeys: 3, Failures: 1, P99: 900 * time.Millisecond},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("SkillStats = %+v, want %+v", got, want)
	}
	if p := want[1].FailurePercent(); p != 33 {
		t.Errorf("FailurePercent = %d, want 33", p)
	}
}

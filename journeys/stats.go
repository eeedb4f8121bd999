package journeys

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// SkillStat is how a skill's journeys went over a window: those that
// ended (completed or failed; journeys still running or waiting for a
// person, and those people rejected, cancelled or let expire, say nothing
// about the skill's health), how many of them failed, and the 99th
// percentile of their latency.
type SkillStat struct {
	Skill    string
	Journeys int
	Failures int
	P99      time.Duration
}

// FailurePercent is the share of the journeys that failed, rounded down
// (0 without journeys).
func (s SkillStat) FailurePercent() int {
	if s.Journeys == 0 {
		return 0
	}
	return s.Failures * 100 / s.Journeys
}

// SkillStats returns, per skill in name order, how its journeys created
// at or after since went. The 99th percentile is the nearest rank over
// the window's latencies, computed here rather than in SQL so that the
// query stays portable.
func SkillStats(ctx context.Context, q store.Querier, since time.Time) ([]SkillStat, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT skill, status, latency_ms FROM journeys
		WHERE created_at >= ? AND skill != '' AND status IN (?, ?)
		ORDER BY skill, latency_ms`, store.FormatTime(since), StatusCompleted, StatusFailed)
	if err != nil {
		return nil, fmt.Errorf("skill stats: %w", err)
	}
	defer rows.Close()
	var out []SkillStat
	var latencies []int64
	flush := func() {
		if len(out) == 0 {
			return
		}
		s := &out[len(out)-1]
		s.P99 = time.Duration(percentile(latencies, 99)) * time.Millisecond
		latencies = latencies[:0]
	}
	for rows.Next() {
		var skill, status string
		var ms int64
		if err := rows.Scan(&skill, &status, &ms); err != nil {
			return nil, fmt.Errorf("skill stats: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].Skill != skill {
			flush()
			out = append(out, SkillStat{Skill: skill})
		}
		s := &out[len(out)-1]
		s.Journeys++
		if status == StatusFailed {
			s.Failures++
		}
		latencies = append(latencies, ms)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("skill stats: %w", err)
	}
	flush()
	return out, nil
}

// percentile is the nearest-rank p-th percentile of sorted values (0 for
// none): the smallest value at least p% of the values are at or below.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (len(sorted)*p + 99) / 100 // ceil(n·p/100)
	return sorted[max(rank, 1)-1]
}

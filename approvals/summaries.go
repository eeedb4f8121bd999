package approvals

import (
	"context"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/platform/store"
)

// Summaries loads the summaries of the actions in ids, keyed by id
// (unknown ids left out), in one query per 500 ids: what an audit export
// writes beside each event about an action. An action's summary never
// changes, so the sentence it goes into is the same in every export.
func Summaries(ctx context.Context, q store.Querier, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := q.QueryContext(ctx, `SELECT id, summary FROM actions WHERE id IN (?`+strings.Repeat(", ?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("action summaries: %w", err)
		}
		for rows.Next() {
			var id, summary string
			if err := rows.Scan(&id, &summary); err != nil {
				rows.Close()
				return nil, fmt.Errorf("action summaries: %w", err)
			}
			out[id] = summary
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("action summaries: %w", err)
		}
		ids = ids[n:]
	}
	return out, nil
}

package approvals

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/platform/store"
)

// Summaries loads the summaries of the actions in ids, keyed by id
// (unknown ids left out), in one query per 500 ids: what an audit export
// writes beside each event about an action. An action's summary never
// changes, so the sentence it goes into is the same in every export.
func Summaries(ctx context.Context, q store.Querier, ids []string) (map[string]string, error) {
	type summary struct{ id, text string }
	scan := func(s store.Scanner) (summary, error) {
		var v summary
		err := s.Scan(&v.id, &v.text)
		return v, err
	}
	out := make(map[string]string, len(ids))
	err := store.InChunks(ids, func(in string, args []any) error {
		got, err := store.Query(ctx, q, scan, `SELECT id, summary FROM actions WHERE id IN (`+in+`)`, args...)
		for _, v := range got {
			out[v.id] = v.text
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("action summaries: %w", err)
	}
	return out, nil
}

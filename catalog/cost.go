package catalog

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wardenhq/warden/platform/store"
)

// MaxUnitCost is the price of one unit of the dearest tool in the catalog
// (0 when it is empty): what a journey's estimate allows for each step.
func MaxUnitCost(ctx context.Context, q store.Querier) (int64, error) {
	var dearest sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(unit_cost_micros) FROM tools`).Scan(&dearest); err != nil {
		return 0, fmt.Errorf("dearest tool: %w", err)
	}
	return dearest.Int64, nil
}

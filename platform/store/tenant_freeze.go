package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Freeze is why a tenant is frozen, by whom ("principal:<id>") and since
// when; empty when it is not frozen or was frozen before reasons were kept.
type Freeze struct {
	Frozen bool
	Reason string
	By     string
	At     *time.Time
}

// RecordFreeze keeps the reason, who and when of a tenant's last freeze
// or unfreeze, inside tx.
func RecordFreeze(ctx context.Context, tx *Tx, id, reason, by string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE tenants SET frozen_reason = ?, frozen_by = ?, frozen_at = ? WHERE id = ?`,
		reason, by, FormatTime(at), id); err != nil {
		return fmt.Errorf("record freeze of tenant %s: %w", id, err)
	}
	return nil
}

// FreezeOf reads a tenant's freeze, or ErrNotFound.
func FreezeOf(ctx context.Context, q Querier, id string) (Freeze, error) {
	var f Freeze
	var at string
	err := q.QueryRowContext(ctx, `SELECT frozen, frozen_reason, frozen_by, frozen_at FROM tenants WHERE id = ?`, id).
		Scan(&f.Frozen, &f.Reason, &f.By, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Freeze{}, ErrNotFound
	}
	if err != nil {
		return Freeze{}, fmt.Errorf("freeze of tenant %s: %w", id, err)
	}
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil && at != "" {
		f.At = &t
	}
	return f, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// Tenant is an organisation whose agents run through Warden.
type Tenant struct {
	ID, Slug, Name, CreatedAt string
	Frozen                    bool
}

// CreateTenant inserts a tenant inside tx and returns it.
func CreateTenant(ctx context.Context, tx *sql.Tx, slug, name string) (Tenant, error) {
	t := Tenant{ID: NewID(), Slug: slug, Name: name, CreatedAt: Now()}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO tenants (id, slug, name, frozen, created_at) VALUES (?, ?, ?, 0, ?)`,
		t.ID, t.Slug, t.Name, t.CreatedAt)
	if err != nil {
		return Tenant{}, fmt.Errorf("create tenant %s: %w", slug, err)
	}
	return t, nil
}

// TenantBySlug loads a tenant, or ErrNotFound.
func TenantBySlug(ctx context.Context, q Querier, slug string) (Tenant, error) {
	var t Tenant
	err := q.QueryRowContext(ctx,
		`SELECT id, slug, name, frozen, created_at FROM tenants WHERE slug = ?`, slug).
		Scan(&t.ID, &t.Slug, &t.Name, &t.Frozen, &t.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, ErrNotFound
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("load tenant %s: %w", slug, err)
	}
	return t, nil
}

// CountTenants counts the tenants visible to a scope: all of them when
// slugs is nil, otherwise those whose slug is listed.
func (db *DB) CountTenants(ctx context.Context, slugs []string) (int64, error) {
	var n int64
	if slugs == nil {
		err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants`).Scan(&n)
		return n, err
	}
	if len(slugs) == 0 {
		return 0, nil
	}
	args := make([]any, len(slugs))
	ph := make([]byte, 0, 2*len(slugs))
	for i, s := range slugs {
		args[i] = s
		if i > 0 {
			ph = append(ph, ',')
		}
		ph = append(ph, '?')
	}
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants WHERE slug IN (`+string(ph)+`)`, args...).Scan(&n)
	return n, err
}

// Querier is what both *sql.DB and *sql.Tx offer for reads.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ListTenants returns the tenants in a scope (nil for all), by slug.
func (db *DB) ListTenants(ctx context.Context, slugs []string) ([]Tenant, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, slug, name, frozen, created_at FROM tenants ORDER BY slug`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	defer rows.Close()
	var out []Tenant
	for rows.Next() {
		var t Tenant
		if err := rows.Scan(&t.ID, &t.Slug, &t.Name, &t.Frozen, &t.CreatedAt); err != nil {
			return nil, fmt.Errorf("list tenants: %w", err)
		}
		if slugs == nil || slices.Contains(slugs, t.Slug) {
			out = append(out, t)
		}
	}
	return out, rows.Err()
}

package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
)

// seedDemo creates the development-mode demo data when the database has no
// tenant yet: the tenant acme the demo approvers are scoped to. Each
// creation is audited like any other.
func seedDemo(ctx context.Context, db *store.DB) error {
	n, err := db.CountTenants(ctx, nil)
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	return db.Transact(ctx, func(tx *sql.Tx) error {
		t, err := store.CreateTenant(ctx, tx, "acme", "Acme Corporation")
		if err != nil {
			return fmt.Errorf("demo tenant: %w", err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"},
			Tenant:  t.Slug,
			Verb:    "tenant.create",
			Subject: audit.Subject{Type: "tenant", ID: t.ID},
			Details: map[string]any{"slug": t.Slug, "name": t.Name, "reason": "development mode demo data"},
		})
		return err
	})
}

package catalog

import (
	"context"
	"errors"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// GetForTenant is the tool as a tenant's call sees it, in one read: off
// for the tenant it was switched off for, on for another, off for every
// tenant once switched off globally, not found when there is no such tool.
func TestGetForTenant(t *testing.T) {
	ctx := context.Background()
	db := setup(t)
	acme, err := tenants.Create(ctx, db, admin, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	globex, err := tenants.Create(ctx, db, admin, "globex", "Globex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SwitchForTenant(ctx, db, admin, lookup.Name, acme.ID, acme.Slug, false, "acme asked"); err != nil {
		t.Fatal(err)
	}
	check := func(tenantID string, want bool) {
		t.Helper()
		got, err := GetForTenant(ctx, db.Read(), lookup.Name, tenantID)
		if err != nil || got.Name != lookup.Name || got.Enabled != want {
			t.Errorf("GetForTenant(%s, %q) = %s enabled %v, %v; want enabled %v", lookup.Name, tenantID, got.Name, got.Enabled, err, want)
		}
		// The same as Get then ForTenant.
		old, err := Get(ctx, db.Read(), lookup.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := ForTenant(ctx, db.Read(), &old, tenantID); err != nil || old.Enabled != got.Enabled {
			t.Errorf("Get+ForTenant(%q) enabled %v, %v; GetForTenant says %v", tenantID, old.Enabled, err, got.Enabled)
		}
	}
	check(acme.ID, false)
	check(globex.ID, true)
	check("", true)
	if err := db.Transact(ctx, func(tx *store.Tx) error { _, err := SetEnabled(ctx, tx, lookup.Name, false); return err }); err != nil {
		t.Fatal(err)
	}
	check(globex.ID, false)
	if _, err := GetForTenant(ctx, db.Read(), "no_such_tool", globex.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetForTenant(no_such_tool) = %v, want not found", err)
	}
}

package keys

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

var admin = audit.Actor{Type: audit.ActorPrincipal, ID: "admin-1"}

// auditedFixture is a database with tenant acme and no key.
func auditedFixture(t *testing.T) (*store.DB, tenants.Tenant) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	var tenant tenants.Tenant
	err := db.Transact(ctx, func(tx *store.Tx) (err error) {
		tenant, err = tenants.Insert(ctx, tx, "acme", "Acme")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, tenant
}

func allEvents(t *testing.T, db *store.DB) []audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(evs)
	return evs
}

func TestCreateAudited(t *testing.T) {
	expires := time.Date(2099, 1, 31, 0, 0, 0, 0, time.UTC)
	good := NewSpec{Name: " bot ", Scopes: []string{"tool:b", "skill:a", "tool:b"}, RatePerMin: 60, Burst: 5, CreatedBy: "admin-1"}
	withExpiry := good
	withExpiry.ExpiresAt = &expires
	tests := []struct {
		name        string
		spec        NewSpec
		unknown     bool     // for a tenant id no tenant has
		wantErr     error    // errors.Is, or nil
		wantFields  []string // of a *store.ValidationError, or nil
		wantDetails string   // of the key.create event, with PREFIX for the key's prefix; "" for no key
	}{
		{name: "created", spec: good,
			wantDetails: `{"burst":5,"name":"bot","prefix":"PREFIX","rate_per_min":60,"scopes":["skill:a","tool:b"]}`},
		{name: "created with an expiry", spec: withExpiry,
			wantDetails: `{"burst":5,"expires_at":"2099-01-31T00:00:00.000000000Z","name":"bot","prefix":"PREFIX","rate_per_min":60,"scopes":["skill:a","tool:b"]}`},
		{name: "invalid", spec: NewSpec{Name: "bot", RatePerMin: 0, Burst: 5}, wantFields: []string{"rate_per_min", "scopes"}},
		{name: "unknown tenant", spec: good, unknown: true, wantErr: store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, tenant := auditedFixture(t)
			spec := tt.spec
			spec.TenantID = tenant.ID
			if tt.unknown {
				spec.TenantID = store.NewID()
			}
			k, secrets, err := CreateAudited(ctx, db, testSealer(t), admin, spec)
			var inv *store.ValidationError
			var fields []string
			if errors.As(err, &inv) {
				for f := range inv.Fields {
					fields = append(fields, f)
				}
				slices.Sort(fields)
			}
			if !slices.Equal(fields, tt.wantFields) || tt.wantFields == nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v or a *store.ValidationError on %v", err, tt.wantErr, tt.wantFields)
			}
			evs := allEvents(t, db)
			listed, lerr := List(ctx, db.Read(), nil)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if tt.wantDetails == "" {
				if k.ID != "" || secrets != (Secrets{}) || len(evs) != 0 || len(listed) != 0 {
					t.Errorf("CreateAudited = %+v with %d events, %d keys stored; want no key and no event", k, len(evs), len(listed))
				}
				return
			}
			if k.ID == "" || k.TenantSlug != "acme" || k.Name != "bot" || !slices.Equal(k.Scopes, []string{"skill:a", "tool:b"}) {
				t.Errorf("CreateAudited = %+v, want key bot of acme with its scopes sorted and deduplicated", k)
			}
			if got, err := Authenticate(ctx, db.Read(), secrets.Key, time.Now()); err != nil || got.ID != k.ID {
				t.Errorf("Authenticate(the new secret) = %+v, %v; want the key", got, err)
			}
			if len(evs) != 1 {
				t.Fatalf("recorded %d events, want one key.create", len(evs))
			}
			ev := evs[0]
			if ev.Verb != "key.create" || ev.Actor != admin || ev.Tenant != "acme" || ev.Subject != (audit.Subject{Type: "key", ID: k.ID}) {
				t.Errorf("event = %s by %v, tenant %q, subject %v; want key.create by %v, tenant acme, subject key/%s",
					ev.Verb, ev.Actor, ev.Tenant, ev.Subject, admin, k.ID)
			}
			want := strings.ReplaceAll(tt.wantDetails, "PREFIX", k.Prefix)
			if got, _ := json.Marshal(ev.Details); string(got) != want {
				t.Errorf("details = %s, want %s", got, want)
			}
		})
	}
}

func TestRevokeAudited(t *testing.T) {
	tests := []struct {
		name          string
		revokedBefore bool
		unknown       bool // revoke an id no key has
		wantChanged   bool
		wantErr       error
		wantEvent     bool // one key.revoke event
	}{
		{name: "revoked", wantChanged: true, wantEvent: true},
		{name: "revoked again", revokedBefore: true},
		{name: "unknown key", unknown: true, wantErr: store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, tenant := auditedFixture(t)
			k, _, err := CreateAudited(ctx, db, testSealer(t), admin, NewSpec{TenantID: tenant.ID, Name: "bot", Scopes: []string{"skill:a"}, RatePerMin: 60, Burst: 5})
			if err != nil {
				t.Fatal(err)
			}
			if tt.revokedBefore {
				if _, err := RevokeAudited(ctx, db, admin, k.ID); err != nil {
					t.Fatal(err)
				}
			}
			before := len(allEvents(t, db))
			id := k.ID
			if tt.unknown {
				id = store.NewID()
			}
			changed, err := RevokeAudited(ctx, db, admin, id)
			if changed != tt.wantChanged || !errors.Is(err, tt.wantErr) {
				t.Errorf("RevokeAudited = %v, %v; want %v, %v", changed, err, tt.wantChanged, tt.wantErr)
			}
			evs := allEvents(t, db)[before:]
			switch {
			case !tt.wantEvent && len(evs) != 0:
				t.Errorf("recorded %d events (first %s), want none", len(evs), evs[0].Verb)
			case tt.wantEvent && len(evs) != 1:
				t.Errorf("recorded %d events, want one key.revoke", len(evs))
			case tt.wantEvent:
				ev := evs[0]
				want := `{"name":"bot","prefix":"` + k.Prefix + `"}`
				got, _ := json.Marshal(ev.Details)
				if ev.Verb != "key.revoke" || ev.Actor != admin || ev.Tenant != "acme" || ev.Subject != (audit.Subject{Type: "key", ID: k.ID}) || string(got) != want {
					t.Errorf("event = %s by %v, tenant %q, subject %v, details %s; want key.revoke by %v, tenant acme, subject key/%s, details %s",
						ev.Verb, ev.Actor, ev.Tenant, ev.Subject, got, admin, k.ID, want)
				}
			}
			stored, err := ByID(ctx, db.Read(), k.ID)
			if err != nil {
				t.Fatal(err)
			}
			if revoked := stored.RevokedAt != nil; revoked != (tt.revokedBefore || tt.wantChanged) {
				t.Errorf("key revoked = %v, want %v", revoked, tt.revokedBefore || tt.wantChanged)
			}
		})
	}
}

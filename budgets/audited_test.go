package budgets

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

func TestSetAudited(t *testing.T) {
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin-1"}
	month := Spec{Period: Month, LimitMicros: 500_000_000, AlertPercent: 80}
	tests := []struct {
		name        string
		existing    *Spec // the budget before; nil for none
		spec        Spec
		unknown     bool // for a tenant id no tenant has
		wantChanged bool
		wantErr     error    // errors.Is, or nil
		wantFields  []string // of a *store.ValidationError, or nil
		wantDetails string   // of the one budget.set event; "" for none
		wantStored  *Spec    // the budget afterwards; nil for none
	}{
		{name: "first budget", spec: month, wantChanged: true,
			wantDetails: `{"alert_percent":80,"limit_micros":500000000,"period":"month"}`, wantStored: &month},
		{name: "changed, the previous values kept", existing: &Spec{Period: Day, LimitMicros: 7, AlertPercent: 50}, spec: month, wantChanged: true,
			wantDetails: `{"alert_percent":80,"limit_micros":500000000,"period":"month","previous_alert_percent":50,"previous_limit_micros":7,"previous_period":"day"}`,
			wantStored:  &month},
		{name: "saved again", existing: &month, spec: month, wantStored: &month},
		{name: "invalid", existing: &month, spec: Spec{Period: "week", LimitMicros: 1, AlertPercent: 0},
			wantFields: []string{"alert_percent", "period"}, wantStored: &month},
		{name: "unknown tenant", spec: month, unknown: true, wantErr: store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			var tenant tenants.Tenant
			err = db.Transact(ctx, func(tx *store.Tx) error {
				if tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil || tt.existing == nil {
					return err
				}
				s := *tt.existing
				s.TenantID = tenant.ID
				return Set(ctx, tx, s, time.Now())
			})
			if err != nil {
				t.Fatal(err)
			}
			spec := tt.spec
			spec.TenantID = tenant.ID
			if tt.unknown {
				spec.TenantID = store.NewID()
			}
			changed, err := SetAudited(ctx, db, admin, spec, time.Now())
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
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

			evs, err := audit.List(ctx, db.Read(), audit.Filter{Limit: audit.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantDetails == "" && len(evs) != 0:
				t.Errorf("recorded %d events, want none", len(evs))
			case tt.wantDetails != "" && len(evs) != 1:
				t.Errorf("recorded %d events, want one budget.set", len(evs))
			case tt.wantDetails != "":
				ev := evs[0]
				if ev.Verb != "budget.set" || ev.Actor != admin || ev.Tenant != "acme" || ev.Subject != (audit.Subject{Type: "budget", ID: tenant.ID}) {
					t.Errorf("event = %s by %v, tenant %q, subject %v; want budget.set by %v, tenant acme, subject budget/%s",
						ev.Verb, ev.Actor, ev.Tenant, ev.Subject, admin, tenant.ID)
				}
				if got, _ := json.Marshal(ev.Details); string(got) != tt.wantDetails {
					t.Errorf("details = %s, want %s", got, tt.wantDetails)
				}
			}

			b, err := Get(ctx, db.Read(), tenant.ID)
			switch {
			case tt.wantStored == nil:
				if !errors.Is(err, ErrNoBudget) {
					t.Errorf("Get = %+v, %v; want ErrNoBudget", b, err)
				}
			case err != nil || b.Period != tt.wantStored.Period || b.LimitMicros != tt.wantStored.LimitMicros || b.AlertPercent != tt.wantStored.AlertPercent:
				t.Errorf("Get = %+v, %v; want %+v", b, err, *tt.wantStored)
			}
		})
	}
}

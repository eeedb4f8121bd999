package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// A viewer scoped to one tenant sees that tenant's newest calls even when
// another tenant made many more calls since (the list used to read the
// newest calls of all tenants and filter afterwards, finding none).
func TestCallsAreScopedInTheQuery(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	insert := func(id, tenant string, at time.Time) {
		t.Helper()
		if _, err := db.Read().ExecContext(ctx, `INSERT INTO model_calls (id, tenant_id, key_id, alias, status, journey_id, created_at)
			VALUES (?, ?, 'key', 'demo-model', 'ok', ?, ?)`, id, tenant, "jrn_"+id, store.FormatTime(at)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		insert(fmt.Sprintf("a%d", i), "tenant-a", t0.Add(time.Duration(i)*time.Second))
	}
	for i := range 100 {
		insert(fmt.Sprintf("b%03d", i), "tenant-b", t0.Add(time.Hour+time.Duration(i)*time.Second))
	}
	got, err := models.Calls(ctx, db.Read(), []string{"tenant-a"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a2" || got[1].ID != "a1" || got[0].JourneyID != "jrn_a2" {
		t.Fatalf("tenant-a's calls = %+v, want a2 then a1 with their journeys", got)
	}
	if none, err := models.Calls(ctx, db.Read(), []string{}, 5); err != nil || len(none) != 0 {
		t.Fatalf("no tenants in scope = %d calls, %v; want none", len(none), err)
	}
	if all, err := models.Calls(ctx, db.Read(), nil, 5); err != nil || len(all) != 5 || all[0].TenantID != "tenant-b" {
		t.Fatalf("all tenants = %+v, %v", all, err)
	}
}

// The tag filter matches one key=value exactly, case and all, on both
// engines, within the tenants in scope and before the limit.
func TestCallsTagged(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i, c := range []struct{ id, tenant, metadata string }{
		{"c1", "tenant-a", `{"team":"support"}`},
		{"c2", "tenant-a", `{"run":"r-1","team":"Support"}`},
		{"c3", "tenant-a", `{"team":"support-2"}`},
		{"c4", "tenant-a", `{"note":"\"team\":\"support\""}`},
		{"c5", "tenant-b", `{"team":"support"}`},
		{"c6", "tenant-a", ``},
		{"c7", "tenant-a", `{"run":"r-1","team":"support"}`},
	} {
		if _, err := db.Read().ExecContext(ctx, `INSERT INTO model_calls (id, tenant_id, key_id, alias, status, metadata, created_at)
			VALUES (?, ?, 'key', 'chat', 'ok', ?, ?)`, c.id, c.tenant, c.metadata, store.FormatTime(t0.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(cs []models.Call) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.ID)
		}
		return fmt.Sprint(s)
	}
	for _, tt := range []struct {
		name    string
		tenants []string
		tag     models.Tag
		limit   int
		want    string
	}{
		{"one tenant", []string{"tenant-a"}, models.Tag{Key: "team", Value: "support"}, 10, "[c7 c1]"},
		{"every tenant", nil, models.Tag{Key: "team", Value: "support"}, 10, "[c7 c5 c1]"},
		{"the limit counts matches", nil, models.Tag{Key: "team", Value: "support"}, 2, "[c7 c5]"},
		{"case matters", nil, models.Tag{Key: "team", Value: "Support"}, 10, "[c2]"},
		{"another key", []string{"tenant-a"}, models.Tag{Key: "run", Value: "r-1"}, 10, "[c7 c2]"},
		{"no match", nil, models.Tag{Key: "team", Value: "sales"}, 10, "[]"},
		{"no filter", []string{"tenant-a"}, models.Tag{}, 3, "[c7 c6 c4]"},
	} {
		got, err := models.CallsTagged(ctx, db.Read(), tt.tenants, tt.tag, tt.limit)
		if err != nil || ids(got) != tt.want {
			t.Errorf("%s: CallsTagged = %s, %v; want %s", tt.name, ids(got), err, tt.want)
		}
	}
}

package audit_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// appendStory appends events as given, one transaction each, and returns
// them as stored.
func appendStory(t *testing.T, db *store.DB, evs ...audit.Event) []audit.Event {
	t.Helper()
	var out []audit.Event
	for _, ev := range evs {
		err := db.Transact(context.Background(), func(tx *store.Tx) error {
			stored, err := audit.Append(context.Background(), tx, ev)
			out = append(out, stored)
			return err
		})
		if err != nil {
			t.Fatalf("append %s: %v", ev.Verb, err)
		}
	}
	return out
}

// story is a small trail over two tenants and three days.
func story(t *testing.T, db *store.DB) []audit.Event {
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	alice := audit.Actor{Type: audit.ActorPrincipal, ID: "p-alice"}
	bot := audit.Actor{Type: audit.ActorKey, ID: "key_1"}
	act1, act2 := audit.Subject{Type: "action", ID: "act_1"}, audit.Subject{Type: "action", ID: "act_2"}
	return appendStory(t, db,
		audit.Event{Time: day(1, 9), Actor: alice, Verb: "auth.login", Subject: audit.Subject{Type: "principal", ID: "p-alice"}},                           // 1
		audit.Event{Time: day(1, 10), Actor: bot, Tenant: "acme", Verb: "action.requested", Subject: act1},                                                 // 2
		audit.Event{Time: day(2, 10), Actor: bot, Tenant: "globex", Verb: "action.requested", Subject: act2},                                               // 3
		audit.Event{Time: day(2, 11), Actor: alice, Tenant: "acme", Verb: "action.approved", Subject: act1},                                                // 4
		audit.Event{Time: day(2, 23), Actor: audit.Actor{Type: audit.ActorSystem, ID: "executor"}, Tenant: "acme", Verb: "action.executed", Subject: act1}, // 5
		audit.Event{Time: day(3, 8), Actor: alice, Tenant: "globex", Verb: "actions.other", Subject: act2},                                                 // 6
		audit.Event{Time: day(3, 9), Actor: alice, Tenant: "acme", Verb: "tenant.freeze", Subject: audit.Subject{Type: "tenant", ID: "t_acme"}},            // 7
	)
}

func TestPageFilters(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	story(t, db)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name string
		q    audit.Query
		want []int64
	}{
		{"everything", audit.Query{}, []int64{7, 6, 5, 4, 3, 2, 1}},
		{"tenant", audit.Query{Tenant: "acme"}, []int64{7, 5, 4, 2}},
		{"tenants in scope", audit.Query{Tenants: []string{"acme", "globex"}}, []int64{7, 6, 5, 4, 3, 2}},
		{"one tenant in scope", audit.Query{Tenants: []string{"globex"}}, []int64{6, 3}},
		{"empty scope selects nothing", audit.Query{Tenants: []string{}}, nil},
		{"tenant within scope", audit.Query{Tenant: "acme", Tenants: []string{"globex"}}, nil},
		{"actor", audit.Query{ActorID: "key_1"}, []int64{3, 2}},
		{"exact verb", audit.Query{Verb: "action.approved"}, []int64{4}},
		{"verb prefix stops at the dot", audit.Query{Verb: "action."}, []int64{5, 4, 3, 2}},
		{"verb without dot is exact", audit.Query{Verb: "action"}, nil},
		{"subject", audit.Query{SubjectType: "action", SubjectID: "act_1"}, []int64{5, 4, 2}},
		{"subject type", audit.Query{SubjectType: "tenant"}, []int64{7}},
		{"subject id alone", audit.Query{SubjectID: "act_2"}, []int64{6, 3}},
		{"since", audit.Query{Since: day(2)}, []int64{7, 6, 5, 4, 3}},
		{"until is exclusive", audit.Query{Until: day(2)}, []int64{2, 1}},
		{"one day", audit.Query{Since: day(2), Until: day(3)}, []int64{5, 4, 3}},
		{"combined", audit.Query{Tenant: "acme", Verb: "action.", Since: day(2)}, []int64{5, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := store.ParsePage("", "", 50)
			if err != nil {
				t.Fatal(err)
			}
			got, err := audit.Page(ctx, db.Read(), tt.q, page)
			if err != nil {
				t.Fatalf("Page(%+v): %v", tt.q, err)
			}
			var seqs []int64
			for _, ev := range got.Rows {
				seqs = append(seqs, ev.Seq)
			}
			if !reflect.DeepEqual(seqs, tt.want) {
				t.Errorf("Page(%+v) seqs = %v, want %v", tt.q, seqs, tt.want)
			}
		})
	}
}

func TestTrailIsOneSubjectOldestFirst(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	stored := story(t, db)
	got, err := audit.Trail(ctx, db.Read(), "action", "act_1")
	if err != nil {
		t.Fatal(err)
	}
	want := []audit.Event{stored[1], stored[3], stored[4]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Trail(action act_1) = %+v, want %+v", got, want)
	}
	if got, err := audit.Trail(ctx, db.Read(), "action", "act_unknown"); err != nil || len(got) != 0 {
		t.Errorf("Trail(action act_unknown) = %v, %v; want none", got, err)
	}
	if _, err := audit.Trail(ctx, db.Read(), "", "act_1"); err == nil {
		t.Error("Trail without a subject type: no error")
	}
}

func TestStoredHead(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	h, err := audit.StoredHead(ctx, db.Read())
	if err != nil || h != (audit.Head{Seq: 0, Hash: audit.GenesisHash}) {
		t.Errorf("StoredHead(empty) = %+v, %v; want seq 0 and the genesis hash", h, err)
	}
	evs := appendEvents(t, db, 3)
	h, err = audit.StoredHead(ctx, db.Read())
	if err != nil || h != (audit.Head{Seq: 3, Hash: evs[2].Hash}) {
		t.Errorf("StoredHead = %+v, %v; want seq 3 hash %s", h, err, evs[2].Hash)
	}
	verified, err := audit.Verify(ctx, db.Read(), nil)
	if err != nil || verified != h {
		t.Errorf("Verify head = %+v, %v; want StoredHead's %+v", verified, err, h)
	}
}

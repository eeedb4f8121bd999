package tenants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

var admin = audit.Actor{Type: audit.ActorPrincipal, ID: "admin-1"}

// setup opens a fresh database with one tenant, acme, as created with the
// defaults: not frozen, 30 days of traces, a 24-hour window and a USD
// threshold of $1,000.00.
func setup(t *testing.T) (*store.DB, Tenant) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	var tn Tenant
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		tn, err = Insert(ctx, tx, "acme", "Acme")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, tn
}

// state describes everything these writes can change about a tenant.
func state(t *testing.T, db *store.DB, id string) string {
	t.Helper()
	ctx := context.Background()
	tn, err := ByID(ctx, db.Read(), id)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := Thresholds(ctx, db.Read(), id)
	if err != nil {
		t.Fatal(err)
	}
	var th []string
	for _, x := range ths {
		th = append(th, fmt.Sprintf("%s:%d", x.Currency, x.Minor))
	}
	return fmt.Sprintf("name=%q frozen=%v retention=%d window=%v thresholds=[%s]",
		tn.Name, tn.Frozen, tn.RetentionDays, tn.DualControlWindow, strings.Join(th, " "))
}

// events returns the audit trail, oldest first.
func events(t *testing.T, db *store.DB) []audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(evs)
	return evs
}

func detailsJSON(t *testing.T, d map[string]any) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// validationFields returns the sorted fields of a *store.ValidationError
// in err, or nil.
func validationFields(err error) []string {
	var inv *store.ValidationError
	if !errors.As(err, &inv) {
		return nil
	}
	var out []string
	for f, msg := range inv.Fields {
		if msg != "" {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

type op func(ctx context.Context, db *store.DB, id string) (bool, error)

func freeze(frozen bool) op {
	reason := ""
	if frozen {
		reason = "incident INC-1"
	}
	return func(ctx context.Context, db *store.DB, id string) (bool, error) {
		return SetFrozen(ctx, db, admin, id, frozen, reason)
	}
}

func rename(name string) op {
	return func(ctx context.Context, db *store.DB, id string) (bool, error) {
		return Rename(ctx, db, admin, id, name)
	}
}

func retention(days int) op {
	return func(ctx context.Context, db *store.DB, id string) (bool, error) {
		return SetRetention(ctx, db, admin, id, days)
	}
}

func threshold(currency string, minor int64) op {
	return func(ctx context.Context, db *store.DB, id string) (bool, error) {
		return SetThreshold(ctx, db, admin, id, Threshold{Currency: currency, Minor: minor})
	}
}

func remove(currency string) op {
	return func(ctx context.Context, db *store.DB, id string) (bool, error) {
		return RemoveThreshold(ctx, db, admin, id, currency)
	}
}

func window(hours int) op {
	return func(ctx context.Context, db *store.DB, id string) (bool, error) {
		return SetDualControlWindow(ctx, db, admin, id, hours)
	}
}

// initial is acme's state as setup creates it.
const initial = `name="Acme" frozen=false retention=30 window=24h0m0s thresholds=[USD:100000]`

func TestChanges(t *testing.T) {
	tests := []struct {
		name        string
		before      op   // run first, its event not counted; nil for none
		do          op   // the write under test
		unknownID   bool // call do with an id no tenant has
		wantChanged bool
		wantErr     error    // errors.Is, or nil
		wantFields  []string // the fields of a *store.ValidationError, or nil
		wantVerb    string   // the one event do records; "" for none
		wantDetails string   // its details as JSON
		wantState   string   // the tenant afterwards
	}{
		{name: "freeze", do: freeze(true), wantChanged: true,
			wantVerb: "tenant.freeze", wantDetails: `{"frozen":true,"reason":"incident INC-1"}`,
			wantState: `name="Acme" frozen=true retention=30 window=24h0m0s thresholds=[USD:100000]`},
		{name: "freeze a frozen tenant", before: freeze(true), do: freeze(true),
			wantState: `name="Acme" frozen=true retention=30 window=24h0m0s thresholds=[USD:100000]`},
		{name: "unfreeze", before: freeze(true), do: freeze(false), wantChanged: true,
			wantVerb: "tenant.unfreeze", wantDetails: `{"frozen":false}`, wantState: initial},
		{name: "unfreeze a tenant that is not frozen", do: freeze(false), wantState: initial},
		{name: "freeze an unknown tenant", do: freeze(true), unknownID: true, wantErr: store.ErrNotFound, wantState: initial},

		{name: "rename, trimmed", do: rename("  Acme Corp "), wantChanged: true,
			wantVerb: "tenant.rename", wantDetails: `{"from":"Acme","to":"Acme Corp"}`,
			wantState: `name="Acme Corp" frozen=false retention=30 window=24h0m0s thresholds=[USD:100000]`},
		{name: "rename to the current name", do: rename("Acme "), wantState: initial},
		{name: "rename to nothing", do: rename("   "), wantFields: []string{"name"}, wantState: initial},
		{name: "rename with a control character", do: rename("Acme\x07"), wantFields: []string{"name"}, wantState: initial},
		{name: "rename too long", do: rename(strings.Repeat("é", MaxNameChars+1)), wantFields: []string{"name"}, wantState: initial},
		{name: "rename an unknown tenant", do: rename("Globex"), unknownID: true, wantErr: store.ErrNotFound, wantState: initial},

		{name: "retention", do: retention(90), wantChanged: true,
			wantVerb: "tenant.retention", wantDetails: `{"from_days":30,"to_days":90}`,
			wantState: `name="Acme" frozen=false retention=90 window=24h0m0s thresholds=[USD:100000]`},
		{name: "retention unchanged", do: retention(30), wantState: initial},
		{name: "retention of 0 days", do: retention(0), wantFields: []string{"retention_days"}, wantState: initial},
		{name: "retention too long", do: retention(MaxRetentionDays + 1), wantFields: []string{"retention_days"}, wantState: initial},
		{name: "retention of an unknown tenant", do: retention(90), unknownID: true, wantErr: store.ErrNotFound, wantState: initial},

		{name: "threshold replaced", do: threshold("USD", 250_000), wantChanged: true,
			wantVerb: "tenant.dual_control", wantDetails: `{"currency":"USD","from_minor":100000,"to_minor":250000}`,
			wantState: `name="Acme" frozen=false retention=30 window=24h0m0s thresholds=[USD:250000]`},
		{name: "threshold in a new currency", do: threshold("KWD", 1_000_000), wantChanged: true,
			wantVerb: "tenant.dual_control", wantDetails: `{"currency":"KWD","to_minor":1000000}`,
			wantState: `name="Acme" frozen=false retention=30 window=24h0m0s thresholds=[KWD:1000000 USD:100000]`},
		{name: "threshold off", do: threshold("USD", 0), wantChanged: true,
			wantVerb: "tenant.dual_control", wantDetails: `{"currency":"USD","from_minor":100000,"to_minor":0}`,
			wantState: `name="Acme" frozen=false retention=30 window=24h0m0s thresholds=[USD:0]`},
		{name: "threshold unchanged", do: threshold("USD", 100_000), wantState: initial},
		{name: "threshold negative", do: threshold("USD", -1), wantFields: []string{"dual_control"}, wantState: initial},
		{name: "threshold of an unknown tenant", do: threshold("USD", 5), unknownID: true, wantErr: store.ErrNotFound, wantState: initial},

		{name: "threshold removed", do: remove("USD"), wantChanged: true,
			wantVerb: "tenant.dual_control_removed", wantDetails: `{"currency":"USD"}`,
			wantState: `name="Acme" frozen=false retention=30 window=24h0m0s thresholds=[]`},
		{name: "remove a threshold that is not set", do: remove("EUR"), wantState: initial},
		{name: "remove a threshold of an unknown tenant", do: remove("USD"), unknownID: true, wantErr: store.ErrNotFound, wantState: initial},

		{name: "window", do: window(48), wantChanged: true,
			wantVerb: "tenant.dual_control_window", wantDetails: `{"from_hours":24,"to_hours":48}`,
			wantState: `name="Acme" frozen=false retention=30 window=48h0m0s thresholds=[USD:100000]`},
		{name: "window at its limit", do: window(2160), wantChanged: true,
			wantVerb: "tenant.dual_control_window", wantDetails: `{"from_hours":24,"to_hours":2160}`,
			wantState: `name="Acme" frozen=false retention=30 window=2160h0m0s thresholds=[USD:100000]`},
		{name: "window unchanged", do: window(24), wantState: initial},
		{name: "window of 0 hours", do: window(0), wantFields: []string{"window_hours"}, wantState: initial},
		{name: "window past 90 days", do: window(2161), wantFields: []string{"window_hours"}, wantState: initial},
		{name: "window that would overflow a duration", do: window(1 << 40), wantFields: []string{"window_hours"}, wantState: initial},
		{name: "window of an unknown tenant", do: window(48), unknownID: true, wantErr: store.ErrNotFound, wantState: initial},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, tn := setup(t)
			if tt.before != nil {
				if _, err := tt.before(ctx, db, tn.ID); err != nil {
					t.Fatal(err)
				}
			}
			before := len(events(t, db))
			id := tn.ID
			if tt.unknownID {
				id = store.NewID()
			}
			changed, err := tt.do(ctx, db, id)
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.wantFields != nil:
				if got := validationFields(err); !slices.Equal(got, tt.wantFields) {
					t.Errorf("err = %v: a *store.ValidationError on %v, want one on %v", err, got, tt.wantFields)
				}
			case err != nil:
				t.Errorf("err = %v, want nil", err)
			}
			evs := events(t, db)[before:]
			switch {
			case tt.wantVerb == "" && len(evs) != 0:
				t.Errorf("recorded %d events (first %s), want none", len(evs), evs[0].Verb)
			case tt.wantVerb != "" && len(evs) != 1:
				t.Errorf("recorded %d events, want one %s", len(evs), tt.wantVerb)
			case tt.wantVerb != "":
				ev := evs[0]
				if ev.Verb != tt.wantVerb || ev.Actor != admin || ev.Tenant != "acme" || ev.Subject != (audit.Subject{Type: "tenant", ID: tn.ID}) {
					t.Errorf("event = %s by %v, tenant %q, subject %v; want %s by %v, tenant acme, subject tenant/%s",
						ev.Verb, ev.Actor, ev.Tenant, ev.Subject, tt.wantVerb, admin, tn.ID)
				}
				if got := detailsJSON(t, ev.Details); got != tt.wantDetails {
					t.Errorf("details = %s, want %s", got, tt.wantDetails)
				}
			}
			if got := state(t, db, tn.ID); got != tt.wantState {
				t.Errorf("tenant = %s, want %s", got, tt.wantState)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name, slug, typedName string
		wantErr               error    // errors.Is, or nil
		wantFields            []string // the fields of a *store.ValidationError, or nil
		wantName              string   // the stored name when created
	}{
		{name: "created, name trimmed", slug: "globex", typedName: "  Globex Inc ", wantName: "Globex Inc"},
		{name: "slug taken", slug: "acme", typedName: "Acme again", wantErr: ErrDuplicateSlug},
		{name: "bad slug", slug: "Globex!", typedName: "Globex", wantFields: []string{"slug"}},
		{name: "no name", slug: "globex", typedName: " ", wantFields: []string{"name"}},
		{name: "bad slug and no name", slug: "g", typedName: "", wantFields: []string{"name", "slug"}},
		{name: "taken slug and no name", slug: "acme", typedName: "", wantFields: []string{"name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, _ := setup(t)
			before := len(events(t, db))
			tn, err := Create(ctx, db, admin, tt.slug, tt.typedName)
			evs := events(t, db)[before:]
			if tt.wantErr != nil || tt.wantFields != nil {
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
				if got := validationFields(err); !slices.Equal(got, tt.wantFields) {
					t.Errorf("err = %v: a *store.ValidationError on %v, want %v", err, got, tt.wantFields)
				}
				if tn != (Tenant{}) || len(evs) != 0 {
					t.Errorf("Create = %+v with %d events, want no tenant and none", tn, len(evs))
				}
				if n, _ := Count(ctx, db, nil); n != 1 {
					t.Errorf("%d tenants, want only acme", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if tn.ID == "" || tn.Slug != tt.slug || tn.Name != tt.wantName || tn.Frozen || tn.RetentionDays != 30 {
				t.Errorf("Create = %+v, want %s named %q with the defaults", tn, tt.slug, tt.wantName)
			}
			want := fmt.Sprintf(`name=%q frozen=false retention=30 window=24h0m0s thresholds=[USD:100000]`, tt.wantName)
			if got := state(t, db, tn.ID); got != want {
				t.Errorf("stored = %s, want %s", got, want)
			}
			if len(evs) != 1 {
				t.Fatalf("recorded %d events, want one tenant.create", len(evs))
			}
			ev := evs[0]
			if ev.Verb != "tenant.create" || ev.Actor != admin || ev.Tenant != tt.slug || ev.Subject != (audit.Subject{Type: "tenant", ID: tn.ID}) {
				t.Errorf("event = %s by %v, tenant %q, subject %v; want tenant.create by %v, tenant %s, subject tenant/%s",
					ev.Verb, ev.Actor, ev.Tenant, ev.Subject, admin, tt.slug, tn.ID)
			}
			wantDetails := fmt.Sprintf(`{"name":%q,"slug":%q}`, tt.wantName, tt.slug)
			if got := detailsJSON(t, ev.Details); got != wantDetails {
				t.Errorf("details = %s, want %s", got, wantDetails)
			}
		})
	}
}

// Freezing needs a reason; without one nothing changes or is recorded.
func TestFreezeNeedsAReason(t *testing.T) {
	ctx := context.Background()
	db, tn := setup(t)
	id := tn.ID
	for _, reason := range []string{"", "  "} {
		if changed, err := SetFrozen(ctx, db, admin, id, true, reason); changed || !errors.Is(err, ErrFreezeReasonRequired) {
			t.Errorf("SetFrozen(reason %q) = %v, %v; want ErrFreezeReasonRequired", reason, changed, err)
		}
	}
	if f, err := FreezeOf(ctx, db.Read(), id); err != nil || f.Frozen {
		t.Fatalf("tenant frozen = %v, %v after refused freezes", f.Frozen, err)
	}
	if _, err := SetFrozen(ctx, db, admin, id, true, "INC-12: leaked key"); err != nil {
		t.Fatal(err)
	}
	if f, err := FreezeOf(ctx, db.Read(), id); err != nil || !f.Frozen || f.Reason != "INC-12: leaked key" || f.By != "principal:"+admin.ID || f.At == nil {
		t.Errorf("FreezeOf = %+v, %v; want frozen with the reason, by %s", f, err, admin.ID)
	}
}

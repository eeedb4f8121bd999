package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

func TestWidening(t *testing.T) {
	tests := []struct {
		name          string
		before, after []string
		want          []string
	}{
		{"same", []string{"skill:a", "tool:b"}, []string{"skill:a", "tool:b"}, nil},
		{"removed", []string{"skill:a", "tool:b"}, []string{"tool:b"}, nil},
		{"added", []string{"tool:b"}, []string{"skill:a", "tool:b"}, []string{"skill:a"}},
		{"name to pattern", []string{"tool:refund"}, []string{"tool:*"}, []string{"tool:*"}},
		{"pattern to a wider pattern", []string{"tool:lookup_*"}, []string{"tool:*"}, []string{"tool:*"}},
		{"pattern to a narrower pattern", []string{"tool:*"}, []string{"tool:lookup_*"}, nil},
		{"pattern to a name it matches", []string{"model:gpt-*"}, []string{"model:gpt-4o"}, nil},
		{"pattern to its own prefix as a name", []string{"tool:lookup_*"}, []string{"tool:lookup_"}, nil},
		{"pattern of another kind", []string{"tool:*"}, []string{"skill:a", "model:tool"}, []string{"skill:a", "model:tool"}},
		{"read:tenant", []string{"tool:*"}, []string{"read:tenant"}, []string{"read:tenant"}},
		{"MCP tool under its server's pattern", []string{"mcp:crm/*"}, []string{"mcp:crm/lookup"}, nil},
		{"every MCP server", []string{"mcp:crm/*"}, []string{"mcp:*"}, []string{"mcp:*"}},
		{"another MCP server", []string{"mcp:crm/*"}, []string{"mcp:crmx/*"}, []string{"mcp:crmx/*"}},
		{"a pattern does not match across kinds by prefix", []string{"t*"}, []string{"tool:a"}, []string{"tool:a"}},
		{"from nothing", nil, []string{"tool:a"}, []string{"tool:a"}},
	}
	for _, tt := range tests {
		if got := Widening(tt.before, tt.after); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Widening(%q, %q) = %q, want %q", tt.name, tt.before, tt.after, got, tt.want)
		}
	}
}

// SetScopes and SetRate change a key with their audit event, change and
// record nothing when nothing changes, refuse bad values and a revoked
// key, and what they set is what the next authentication reads.
func TestSetScopesAndRate(t *testing.T) {
	ctx := context.Background()
	db, tenant := auditedFixture(t)
	k, secrets, err := CreateAudited(ctx, db, testSealer(t), admin, NewSpec{TenantID: tenant.ID, Name: "bot", Scopes: []string{"tool:b", "skill:a"}, RatePerMin: 60, Burst: 5})
	if err != nil {
		t.Fatal(err)
	}
	events := func(verb string) []map[string]any {
		var out []map[string]any
		for _, e := range allEvents(t, db) {
			if e.Verb == verb {
				out = append(out, e.Details)
			}
		}
		return out
	}

	if changed, err := SetScopes(ctx, db, admin, k.ID, []string{"tool:b", "tool:lookup_*", "tool:b"}); err != nil || !changed {
		t.Fatalf("SetScopes = %v, %v", changed, err)
	}
	got, err := Authenticate(ctx, db.Read(), secrets.Key, k.CreatedAt)
	if err != nil || strings.Join(got.Scopes, " ") != "tool:b tool:lookup_*" || !got.Allows("tool", "lookup_order") || got.Allows("skill", "a") {
		t.Fatalf("after SetScopes the key has %q (%v)", got.Scopes, err)
	}
	evs := events("key.scopes")
	if len(evs) != 1 {
		t.Fatalf("key.scopes events = %v", evs)
	}
	raw, _ := json.Marshal(evs[0])
	if want := `{"added":["tool:lookup_*"],"before":["skill:a","tool:b"],"name":"bot","prefix":"` + k.Prefix + `","removed":["skill:a"],"scopes":["tool:b","tool:lookup_*"]}`; string(raw) != want {
		t.Errorf("key.scopes details = %s, want %s", raw, want)
	}
	if changed, err := SetScopes(ctx, db, admin, k.ID, []string{"tool:lookup_*", "tool:b"}); err != nil || changed || len(events("key.scopes")) != 1 {
		t.Errorf("the same scopes again = %v, %v; events %d", changed, err, len(events("key.scopes")))
	}
	for _, bad := range [][]string{nil, {"tool:"}, {"tool:*x"}, {"admin:all"}} {
		var ve *store.ValidationError
		if _, err := SetScopes(ctx, db, admin, k.ID, bad); !errors.As(err, &ve) || ve.Fields["scopes"] == "" {
			t.Errorf("SetScopes(%q) = %v, want a validation error on scopes", bad, err)
		}
	}

	if changed, err := SetRate(ctx, db, admin, k.ID, 1200, 20); err != nil || !changed {
		t.Fatalf("SetRate = %v, %v", changed, err)
	}
	if got, _ := ByID(ctx, db.Read(), k.ID); got.RatePerMin != 1200 || got.Burst != 20 {
		t.Errorf("after SetRate the key has %d/min burst %d", got.RatePerMin, got.Burst)
	}
	if evs := events("key.rate"); len(evs) != 1 || fmt.Sprint(evs[0]["previous_rate_per_min"]) != "60" || fmt.Sprint(evs[0]["burst"]) != "20" {
		t.Errorf("key.rate events = %v", evs)
	}
	if changed, err := SetRate(ctx, db, admin, k.ID, 1200, 20); err != nil || changed {
		t.Errorf("the same rate again = %v, %v", changed, err)
	}
	for _, bad := range [][2]int{{0, 5}, {-1, 5}, {60, 0}, {600001, 5}, {60, 10001}} {
		var ve *store.ValidationError
		if _, err := SetRate(ctx, db, admin, k.ID, bad[0], bad[1]); !errors.As(err, &ve) {
			t.Errorf("SetRate(%v) = %v, want a validation error", bad, err)
		}
	}

	if _, err := RevokeAudited(ctx, db, admin, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := SetScopes(ctx, db, admin, k.ID, []string{"tool:b"}); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("SetScopes on a revoked key = %v, want ErrRevokedKey", err)
	}
	if _, err := SetRate(ctx, db, admin, k.ID, 1, 1); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("SetRate on a revoked key = %v, want ErrRevokedKey", err)
	}
	if got, _ := ByID(ctx, db.Read(), k.ID); strings.Join(got.Scopes, " ") != "tool:b tool:lookup_*" || got.RatePerMin != 1200 {
		t.Errorf("a refused edit changed the revoked key: %q %d", got.Scopes, got.RatePerMin)
	}
	if _, err := SetScopes(ctx, db, admin, "nope", []string{"tool:b"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetScopes on an unknown key = %v, want not found", err)
	}
}

// SetExpiry sets, moves and removes a key's expiry with its audit event,
// records nothing when unchanged, refuses an expiry not in the future
// and a revoked key, and authentication follows what it set.
func TestSetExpiry(t *testing.T) {
	ctx := context.Background()
	db, tenant := auditedFixture(t)
	k, secrets, err := CreateAudited(ctx, db, testSealer(t), admin, NewSpec{TenantID: tenant.ID, Name: "bot", Scopes: []string{"tool:b"}, RatePerMin: 60, Burst: 5})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	events := func() []string {
		var out []string
		for _, e := range allEvents(t, db) {
			if e.Verb == "key.expiry" {
				raw, _ := json.Marshal(e.Details)
				out = append(out, string(raw))
			}
		}
		return out
	}
	at := time.Date(now.Year()+1, 1, 31, 0, 0, 0, 0, time.UTC)
	stamp := store.FormatTime(at)
	if changed, err := SetExpiry(ctx, db, admin, k.ID, &at, now); err != nil || !changed {
		t.Fatalf("SetExpiry = %v, %v", changed, err)
	}
	if _, err := Authenticate(ctx, db.Read(), secrets.Key, at.Add(-time.Second)); err != nil {
		t.Errorf("a second before the expiry: %v", err)
	}
	if _, err := Authenticate(ctx, db.Read(), secrets.Key, at); !errors.Is(err, ErrExpired) {
		t.Errorf("at the expiry: %v, want ErrExpired", err)
	}
	if changed, err := SetExpiry(ctx, db, admin, k.ID, &at, now); err != nil || changed {
		t.Errorf("the same expiry again = %v, %v", changed, err)
	}
	if changed, err := SetExpiry(ctx, db, admin, k.ID, nil, now); err != nil || !changed {
		t.Fatalf("removing the expiry = %v, %v", changed, err)
	}
	if _, err := Authenticate(ctx, db.Read(), secrets.Key, at.AddDate(10, 0, 0)); err != nil {
		t.Errorf("without an expiry, in ten years: %v", err)
	}
	want := []string{
		`{"expires_at":"` + stamp + `","name":"bot","prefix":"` + k.Prefix + `","previous_expires_at":null}`,
		`{"expires_at":null,"name":"bot","prefix":"` + k.Prefix + `","previous_expires_at":"` + stamp + `"}`,
	}
	if got := events(); !slices.Equal(got, want) {
		t.Errorf("key.expiry events = %q, want %q", got, want)
	}

	for _, past := range []time.Time{now, now.Add(-time.Hour)} {
		_, err := SetExpiry(ctx, db, admin, k.ID, &past, now)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Fields["expires_at"] != "The expiry must be in the future." {
			t.Errorf("an expiry at %v = %v, want the field refused", past, err)
		}
	}
	if _, err := RevokeAudited(ctx, db, admin, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := SetExpiry(ctx, db, admin, k.ID, &at, now); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("a revoked key's expiry = %v, want ErrRevokedKey", err)
	}
	if got, _ := ByID(ctx, db.Read(), k.ID); got.ExpiresAt != nil || len(events()) != 2 {
		t.Errorf("refused edits changed the key: expiry %v, %d events", got.ExpiresAt, len(events()))
	}
}

package keys

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

func TestGenerateFormat(t *testing.T) {
	re := regexp.MustCompile(`^wk_[a-km-np-z2-9]{8}_[a-km-np-z2-9]{32}$`)
	seen := map[string]bool{}
	for range 100 {
		secret, prefix := Generate()
		if !re.MatchString(secret) || !strings.HasPrefix(secret, "wk_"+prefix+"_") {
			t.Fatalf("Generate() = %q, %q", secret, prefix)
		}
		if seen[secret] {
			t.Fatal("a key repeated")
		}
		seen[secret] = true
	}
}

func TestValidate(t *testing.T) {
	now := time.Now()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	good := NewSpec{Name: "bot", Scopes: []string{"skill:a", "tool:b"}, RatePerMin: 60, Burst: 5, ExpiresAt: &future}
	tests := []struct {
		name   string
		mutate func(*NewSpec)
		field  string
	}{
		{"valid", func(*NewSpec) {}, ""},
		{"no name", func(s *NewSpec) { s.Name = "  " }, "name"},
		{"long name", func(s *NewSpec) { s.Name = strings.Repeat("x", 101) }, "name"},
		{"no scopes", func(s *NewSpec) { s.Scopes = nil }, "scopes"},
		{"bad scope", func(s *NewSpec) { s.Scopes = []string{"admin"} }, "scopes"},
		{"bad scope kind", func(s *NewSpec) { s.Scopes = []string{"tenant:acme"} }, "scopes"},
		{"rate zero", func(s *NewSpec) { s.RatePerMin = 0 }, "rate_per_min"},
		{"burst zero", func(s *NewSpec) { s.Burst = 0 }, "burst"},
		{"expired", func(s *NewSpec) { s.ExpiresAt = &past }, "expires_at"},
	}
	for _, tt := range tests {
		s := good
		tt.mutate(&s)
		errs := s.Validate(now)
		if tt.field == "" && len(errs) != 0 || tt.field != "" && (len(errs) != 1 || errs[tt.field] == "") {
			t.Errorf("%s: Validate = %v, want an error for %q only", tt.name, errs, tt.field)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	var k Key
	var secret string
	db.Transact(ctx, func(tx *store.Tx) error {
		tenant, _ := tenants.Insert(ctx, tx, "acme", "Acme")
		var err error
		var secrets Secrets
		k, secrets, err = Create(ctx, tx, testSealer(t), NewSpec{TenantID: tenant.ID, Name: "bot", Scopes: []string{"tool:b", "skill:a", "tool:b"}, RatePerMin: 60, Burst: 5, CreatedBy: "t"})
		secret = secrets.Key
		return err
	})
	got, err := Authenticate(ctx, db.Read(), secret, time.Now())
	if err != nil || got.ID != k.ID || got.TenantSlug != "acme" || len(got.Scopes) != 2 {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	if !got.Allows("skill", "a") || got.Allows("skill", "b") {
		t.Error("scopes are not deny by default")
	}
	var stored string
	db.Read().QueryRow(`SELECT secret_hash FROM virtual_keys`).Scan(&stored)
	if strings.Contains(stored, secret) || stored == "" {
		t.Error("the secret is stored")
	}
	tests := []struct {
		secret string
		want   error
	}{
		{"", ErrMalformed},
		{"wk_short", ErrMalformed},
		{flipLast(secret), ErrUnknown},
		{"wk_aaaaaaaa_" + strings.Repeat("b", 32), ErrUnknown},
	}
	for _, tt := range tests {
		if _, err := Authenticate(ctx, db.Read(), tt.secret, time.Now()); !errors.Is(err, tt.want) {
			t.Errorf("Authenticate(%q) = %v, want %v", tt.secret, err, tt.want)
		}
	}
	db.Transact(ctx, func(tx *store.Tx) error {
		changed, err := Revoke(ctx, tx, k.ID)
		if !changed || err != nil {
			t.Errorf("Revoke = %v, %v", changed, err)
		}
		changed, _ = Revoke(ctx, tx, k.ID)
		if changed {
			t.Error("revoking twice changed something")
		}
		return nil
	})
	if _, err := Authenticate(ctx, db.Read(), secret, time.Now()); !errors.Is(err, ErrRevoked) {
		t.Errorf("revoked key = %v", err)
	}
}

// AuthenticateWithTenant answers what Authenticate does, and the key's
// tenant as tenants.BySlug reads it; an unknown or wrong secret gets no
// tenant, a revoked key still its own.
func TestAuthenticateWithTenant(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	var k Key
	var secret string
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tenants.Insert(ctx, tx, "globex", "Globex"); err != nil {
			return err
		}
		tenant, err := tenants.Insert(ctx, tx, "acme", "Acme")
		if err != nil {
			return err
		}
		var secrets Secrets
		k, secrets, err = Create(ctx, tx, testSealer(t), NewSpec{TenantID: tenant.ID, Name: "bot", Scopes: []string{"skill:a"}, RatePerMin: 60, Burst: 5, CreatedBy: "t"})
		secret = secrets.Key
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tenants SET frozen = 1, trace_retention_days = 9, dual_control_window_s = 120 WHERE slug = 'acme'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want, err := tenants.BySlug(ctx, db.Read(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Authenticate(ctx, db.Read(), secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, tenant, err := AuthenticateWithTenant(ctx, db.Read(), secret, time.Now())
	if err != nil || !reflect.DeepEqual(got, plain) {
		t.Errorf("AuthenticateWithTenant key = %+v, %v; want %+v", got, err, plain)
	}
	if tenant != want || !tenant.Frozen || tenant.DualControlWindow != 2*time.Minute {
		t.Errorf("AuthenticateWithTenant tenant = %+v; want %+v", tenant, want)
	}
	for _, s := range []string{flipLast(secret), "wk_aaaaaaaa_" + strings.Repeat("b", 32)} {
		if _, tenant, err := AuthenticateWithTenant(ctx, db.Read(), s, time.Now()); !errors.Is(err, ErrUnknown) || tenant.ID != "" {
			t.Errorf("AuthenticateWithTenant(wrong secret) = tenant %q, %v; want no tenant, ErrUnknown", tenant.ID, err)
		}
	}
	if err := db.Transact(ctx, func(tx *store.Tx) error { _, err := Revoke(ctx, tx, k.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if got, tenant, err := AuthenticateWithTenant(ctx, db.Read(), secret, time.Now()); !errors.Is(err, ErrRevoked) || got.ID != k.ID || tenant.Slug != "acme" {
		t.Errorf("revoked key = %s of %q, %v; want the key, its tenant, ErrRevoked", got.ID, tenant.Slug, err)
	}
}

// flipLast changes the last character: the right prefix, a wrong secret.
func flipLast(s string) string {
	last := "a"
	if s[len(s)-1] == 'a' {
		last = "b"
	}
	return s[:len(s)-1] + last
}

func TestOfferedAndUnknownScope(t *testing.T) {
	offered := Offered([]string{"refunds"}, []string{"lookup_order"}, nil)
	if want := []string{ScopeReadTenant, "skill:refunds", "tool:lookup_order"}; !slices.Equal(offered, want) {
		t.Fatalf("Offered = %q, want %q", offered, want)
	}
	if msg := UnknownScope([]string{"skill:refunds", "tool:lookup_order", ScopeReadTenant}, offered); msg != "" {
		t.Errorf("known scopes refused: %q", msg)
	}
	if msg := UnknownScope([]string{"skill:refunds", "tool:wire_money", "skill:nope"}, offered); msg != `"tool:wire_money" is not a skill or tool Warden knows.` {
		t.Errorf("UnknownScope = %q, want the first unknown scope named", msg)
	}
	withModels := Offered(nil, nil, []string{"chat"})
	if want := []string{ScopeReadTenant, "model:chat"}; !slices.Equal(withModels, want) {
		t.Errorf("Offered with a model alias = %q, want %q", withModels, want)
	}
	if msg := UnknownScope([]string{"model:chat", "model:nope"}, withModels); !strings.HasPrefix(msg, `"model:nope" is not a model alias Warden knows`) {
		t.Errorf("UnknownScope(model:nope) = %q", msg)
	}
}

// A scope whose name ends in * allows every name of its kind with that
// prefix, and nothing of another kind.
func TestAllowsPatterns(t *testing.T) {
	k := Key{Scopes: []string{"model:gpt-*", "tool:lookup_*", "skill:refunds", "mcp:server/*"}}
	for _, tc := range []struct {
		kind, name string
		want       bool
	}{
		{"model", "gpt-4o", true},
		{"model", "gpt-", true},
		{"model", "claude", false},
		{"model", "", false},
		{"tool", "lookup_order", true},
		{"tool", "issue_refund", false},
		{"skill", "gpt-4o", false},        // another kind's pattern
		{"skill", "refunds", true},        // exact
		{"skill", "refunds_extra", false}, // exact is not a prefix
		{"mcp", "server/files", true},     // any kind, such as a future one
		{"mcp", "other/files", false},
	} {
		if got := k.Allows(tc.kind, tc.name); got != tc.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tc.kind, tc.name, got, tc.want)
		}
	}
	all := Key{Scopes: []string{"model:*"}}
	if !all.Allows("model", "anything") || all.Allows("tool", "anything") {
		t.Error("model:* must allow every model alias and no tool")
	}
}

func TestValidatePatternScopes(t *testing.T) {
	base := NewSpec{TenantID: "t", Name: "bot", RatePerMin: 60, Burst: 5}
	for _, tc := range []struct {
		scope string
		ok    bool
	}{
		{"model:*", true},
		{"model:gpt-*", true},
		{"tool:lookup_*", true},
		{"skill:ref*", true},
		{"model:*-mini", false},
		{"model:gpt-**", false},
		{"model:g*t*", false},
		{"read:*", false},
		{"mcp:server/*", true}, // every tool of an upstream MCP server
		{"mcp:server/lookup_order", true},
		{"mcp:*", true},
		{"mcp:server", false}, // no tool
		{"mcp:/lookup", false},
		{"mcp:server/", false},
		{"*", false},
	} {
		s := base
		s.Scopes = []string{tc.scope}
		errs := s.Validate(time.Now())
		if got := errs["scopes"] == ""; got != tc.ok {
			t.Errorf("Validate(%q): scopes error %q, want accepted %v", tc.scope, errs["scopes"], tc.ok)
		}
	}
	if msg := UnknownScope([]string{"model:gpt-*", "tool:x*"}, Offered(nil, nil, nil)); msg != "" {
		t.Errorf("a pattern need not match anything yet: %q", msg)
	}
}

// TestNames: the names of the keys asked for, in one map; an unknown id
// is left out, and more ids than one query takes (500) are all named.
func TestNames(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	var ids []string
	err := db.Transact(ctx, func(tx *store.Tx) error {
		acme, err := tenants.Insert(ctx, tx, "acme", "Acme")
		if err != nil {
			return err
		}
		for _, name := range []string{"refund-bot", "faq-bot"} {
			k, _, err := Create(ctx, tx, testSealer(t), NewSpec{TenantID: acme.ID, Name: name, Scopes: []string{"skill:faq"}, RatePerMin: 60, Burst: 5, CreatedBy: "test"})
			if err != nil {
				return err
			}
			ids = append(ids, k.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ask := []string{"key_gone"}
	for i := range 520 {
		ask = append(ask, fmt.Sprintf("key_unknown%03d", i))
	}
	ask = append(ask, ids...) // past the first 500
	got, err := Names(ctx, db.Read(), ask)
	if want := map[string]string{ids[0]: "refund-bot", ids[1]: "faq-bot"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Names(%d ids) = %v, %v; want %v", len(ask), got, err, want)
	}
	if got, err := Names(ctx, db.Read(), nil); err != nil || len(got) != 0 {
		t.Errorf("Names(nil) = %v, %v; want empty", got, err)
	}
}

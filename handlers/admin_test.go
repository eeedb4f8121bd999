package handlers

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/money"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// The form shows stored amounts with views.MoneyInput; what it shows must
// parse back to the same micro-units, or saving an untouched form would
// change the amount.
func TestParseMicrosRoundTrip(t *testing.T) {
	for _, m := range []int64{0, 1, 999_999, 1_000_000, 12_340_000, 250_000_000, 1_234_567_891, math.MaxInt64} {
		text := views.MoneyInput(m)
		got, msg := money.ParseMicros(text)
		if msg != "" || got != m {
			t.Errorf("ParseMicros(MoneyInput(%d) = %q) = %d, %q; want %d", m, text, got, msg, m)
		}
	}
}

func TestTenantScopeRules(t *testing.T) {
	acme := &identity.Principal{ID: "p1", Roles: []string{"admin"}, Tenants: []string{"acme"}}
	two := &identity.Principal{ID: "p2", Roles: []string{"admin"}, Tenants: []string{"acme", "globex"}}
	all := &identity.Principal{ID: "p3", Roles: []string{"admin"}, Tenants: []string{identity.AllTenants}}
	none := &identity.Principal{ID: "p4", Roles: []string{"admin"}}
	tests := []struct {
		name     string
		p        *identity.Principal
		slug     string
		tenantOK bool // requireTenant(p, slug) passes
		globalOK bool // requireAllTenants(p) passes
	}{
		{"scoped, own tenant", acme, "acme", true, false},
		{"scoped, other tenant", acme, "globex", false, false},
		{"scoped, empty slug", acme, "", false, false},
		{"two tenants, second", two, "globex", true, false},
		{"two tenants, third", two, "initech", false, false},
		{"all tenants", all, "globex", true, true},
		{"no scope", none, "acme", false, false},
		{"nobody", nil, "acme", false, false},
	}
	for _, tt := range tests {
		if got := requireTenant(tt.p, tt.slug); (got == nil) != tt.tenantOK || (got != nil && statusOfErr(got) != http.StatusForbidden) {
			t.Errorf("%s: requireTenant(%q) = %v, want ok=%v (else 403)", tt.name, tt.slug, got, tt.tenantOK)
		}
		if got := requireAllTenants(tt.p, "Changing the catalog"); (got == nil) != tt.globalOK || (got != nil && statusOfErr(got) != http.StatusForbidden) {
			t.Errorf("%s: requireAllTenants = %v, want ok=%v (else 403)", tt.name, got, tt.globalOK)
		}
	}
}

func statusOfErr(err error) int {
	var p *problem.Error
	if errors.As(err, &p) {
		return p.Status()
	}
	return 0
}

func TestKeyState(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	tests := []struct {
		name string
		k    keys.Key
		want string
	}{
		{"no expiry", keys.Key{}, views.KeyActive},
		{"expires later", keys.Key{ExpiresAt: &future}, views.KeyActive},
		{"expired", keys.Key{ExpiresAt: &past}, views.KeyExpired},
		{"expires exactly now", keys.Key{ExpiresAt: &now}, views.KeyExpired},
		{"revoked", keys.Key{RevokedAt: &past}, views.KeyRevoked},
		{"revoked and expired", keys.Key{RevokedAt: &past, ExpiresAt: &past}, views.KeyRevoked},
	}
	for _, tt := range tests {
		if got := keyState(tt.k, now); got != tt.want {
			t.Errorf("keyState(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPageLinks(t *testing.T) {
	next, prev := &store.Cursor{Key: "k2", ID: "b"}, &store.Cursor{Key: "k1", ID: "a"}
	tests := []struct {
		q            url.Values
		page         store.Paged[int]
		wantN, wantP string
	}{
		{url.Values{}, store.Paged[int]{}, "", ""},
		{url.Values{"tenant": {"acme"}}, store.Paged[int]{Next: next}, "/keys?after=" + next.String() + "&tenant=acme", ""},
		{url.Values{"tenant": {""}, "after": {"old"}}, store.Paged[int]{Next: next, Prev: prev}, "/keys?after=" + next.String(), "/keys?before=" + prev.String()},
		{url.Values{"min": {"a&b=c"}}, store.Paged[int]{Prev: prev}, "", "/keys?before=" + prev.String() + "&min=a%26b%3Dc"},
	}
	for _, tt := range tests {
		n, p := pageLinks("/keys", tt.q, tt.page)
		if n != tt.wantN || p != tt.wantP {
			t.Errorf("pageLinks(%v) = %q, %q; want %q, %q", tt.q, n, p, tt.wantN, tt.wantP)
		}
	}
}

func TestFormInt(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantMsg string
	}{
		{"600", 600, ""},
		{" 60 ", 60, ""},
		{"-3", -3, ""}, // range is the domain validator's job
		{"", 0, "bad"},
		{"1.5", 0, "bad"},
		{"ten", 0, "bad"},
		{"+24", 0, "bad"}, // strict: no plus sign
		{"-", 0, "bad"},
		{"1e3", 0, "bad"},
		{"-0", 0, "bad"}, // 0 is "no limit" on some fields: no stray minus
		{"-000", 0, "bad"},
		{"-01", -1, ""},
		{"1,000", 0, "bad"},
		{"０１２", 0, "bad"}, // full-width digits
		{"9223372036854775808", 0, "bad"},
		{strconv.Itoa(math.MaxInt), math.MaxInt, ""},
	}
	for _, tt := range tests {
		got, msg := formInt(tt.in, "bad")
		if got != tt.want || msg != tt.wantMsg {
			t.Errorf("formInt(%q) = %d, %q; want %d, %q", tt.in, got, msg, tt.want, tt.wantMsg)
		}
	}
}

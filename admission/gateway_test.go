package admission

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// rig is a gateway over a real database file, on a clock the test sets.
type rig struct {
	t      *testing.T
	ctx    context.Context
	db     *store.DB
	sealer *seal.Sealer
	g      *Gateway
	now    time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ctx: ctx, db: db, sealer: sealer, now: time.Now().UTC().Truncate(time.Second)}
	r.g = New(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.g.now = func() time.Time { return r.now }
	return r
}

// tenant creates a tenant, frozen or not.
func (r *rig) tenant(slug string, frozen bool) tenants.Tenant {
	r.t.Helper()
	var tn tenants.Tenant
	err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
		var err error
		if tn, err = tenants.Insert(r.ctx, tx, slug, strings.ToUpper(slug)); err != nil {
			return err
		}
		_, err = tenants.SetFrozenTx(r.ctx, tx, tn.ID, frozen)
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
	tn.Frozen = frozen
	return tn
}

// key creates a key of tenant and returns it with its secret.
func (r *rig) key(tenant tenants.Tenant, spec keys.NewSpec) (keys.Key, string) {
	r.t.Helper()
	spec.TenantID = tenant.ID
	if spec.Name == "" {
		spec.Name = "bot"
	}
	if len(spec.Scopes) == 0 {
		spec.Scopes = []string{"skill:order_status"}
	}
	if spec.RatePerMin == 0 {
		spec.RatePerMin, spec.Burst = 600, 100
	}
	spec.CreatedBy = "test"
	var k keys.Key
	var secrets keys.Secrets
	err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
		var err error
		k, secrets, err = keys.Create(r.ctx, tx, r.sealer, spec)
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return k, secrets.Key
}

// auditCount is the number of events in the audit chain.
func (r *rig) auditCount() int64 {
	r.t.Helper()
	n, err := audit.Count(r.ctx, r.db.Read())
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// newestEvent is the last event appended to the audit chain.
func (r *rig) newestEvent() audit.Event {
	r.t.Helper()
	evs, err := audit.List(r.ctx, r.db.Read(), audit.Filter{Limit: 1})
	if err != nil || len(evs) != 1 {
		r.t.Fatalf("audit.List = %v, %v; want one event", evs, err)
	}
	return evs[0]
}

// asProblem returns err as a *problem.Error, or fails the test.
func asProblem(t *testing.T, what string, err error) *problem.Error {
	t.Helper()
	var p *problem.Error
	if !errors.As(err, &p) {
		t.Fatalf("%s = %v, want a *problem.Error", what, err)
	}
	return p
}

// wrongSecret keeps a key's prefix and changes its secret part.
func wrongSecret(secret string) string {
	last := secret[len(secret)-1]
	repl := byte('a')
	if last == 'a' {
		repl = 'b'
	}
	return secret[:len(secret)-1] + string(repl)
}

func TestAuthenticateRefusals(t *testing.T) {
	r := newRig(t)
	acme := r.tenant("acme", false)
	frost := r.tenant("frost", true)
	good, goodSecret := r.key(acme, keys.NewSpec{})
	revoked, revokedSecret := r.key(acme, keys.NewSpec{Name: "old bot"})
	if err := r.db.Transact(r.ctx, func(tx *store.Tx) error { _, err := keys.Revoke(r.ctx, tx, revoked.ID); return err }); err != nil {
		t.Fatal(err)
	}
	soon := r.now.Add(time.Hour)
	expired, expiredSecret := r.key(acme, keys.NewSpec{Name: "temp bot", ExpiresAt: &soon})
	frozen, frozenSecret := r.key(frost, keys.NewSpec{})
	unknownSecret, _ := keys.Generate()
	// The gateway's clock is past the temporary key's expiry; the others
	// do not expire.
	r.now = soon.Add(time.Minute)

	tests := []struct {
		name      string
		secret    string
		code      string
		kind      problem.Kind
		message   string // what the caller is told to do or why
		auditVerb string // "" when the refusal is only logged
		auditKey  string // the key the audit event is about
	}{
		{"no key", "", CodeUnauthorized, problem.KindUnauthenticated, "Authorization: Bearer wk_", "", ""},
		{"not a virtual key", "sk-proj-abcdef", CodeUnauthorized, problem.KindUnauthenticated, "not valid", "", ""},
		{"truncated key", goodSecret[:20], CodeUnauthorized, problem.KindUnauthenticated, "not valid", "", ""},
		{"unknown prefix", unknownSecret, CodeUnauthorized, problem.KindUnauthenticated, "not valid", "", ""},
		{"known prefix, wrong secret", wrongSecret(goodSecret), CodeUnauthorized, problem.KindUnauthenticated, "not valid", "key.wrong_secret", good.ID},
		{"revoked", revokedSecret, CodeUnauthorized, problem.KindUnauthenticated, "The key is revoked.", "key.revoked", revoked.ID},
		{"expired", expiredSecret, CodeUnauthorized, problem.KindUnauthenticated, "The key is expired.", "key.expired", expired.ID},
		{"tenant frozen", frozenSecret, CodeTenantFrozen, problem.KindForbidden, "Tenant frost is frozen: its agents cannot run until an admin unfreezes it.", "tenant.frozen_refused", frozen.ID},
	}
	for _, tt := range tests {
		before := r.auditCount()
		c, err := r.g.Authenticate(r.ctx, tt.secret)
		p := asProblem(t, tt.name+": Authenticate", err)
		if p.Code != tt.code || p.Kind != tt.kind {
			t.Errorf("%s: Authenticate = %s (kind %d), want %s (kind %d)", tt.name, p.Code, p.Kind, tt.code, tt.kind)
		}
		if !strings.Contains(p.Message, tt.message) {
			t.Errorf("%s: message %q, want it to say %q", tt.name, p.Message, tt.message)
		}
		if p.RetryAfter != 0 {
			t.Errorf("%s: RetryAfter = %v, want 0 (retrying does not help)", tt.name, p.RetryAfter)
		}
		if c.Key.ID != "" || c.Tenant.ID != "" {
			t.Errorf("%s: refused caller = %+v, want the zero Caller", tt.name, c)
		}
		added := r.auditCount() - before
		switch {
		case tt.auditVerb == "" && added != 0:
			t.Errorf("%s: %d audit events written, want none", tt.name, added)
		case tt.auditVerb != "" && added != 1:
			t.Errorf("%s: %d audit events written, want one %s", tt.name, added, tt.auditVerb)
		case tt.auditVerb != "":
			ev := r.newestEvent()
			if ev.Verb != tt.auditVerb || ev.Subject.ID != tt.auditKey || ev.Actor.Type != audit.ActorKey {
				t.Errorf("%s: audit event %s about %s by %s, want %s about key %s by a key", tt.name, ev.Verb, ev.Subject.ID, ev.Actor.Type, tt.auditVerb, tt.auditKey)
			}
		}
	}

	// The one valid key still gets in, as its tenant and itself.
	c, err := r.g.Authenticate(r.ctx, goodSecret)
	if err != nil {
		t.Fatalf("Authenticate(valid key) = %v", err)
	}
	if c.Key.ID != good.ID || c.Tenant.ID != acme.ID || c.Tenant.Slug != "acme" {
		t.Errorf("Authenticate(valid key) = key %s tenant %s (%s), want key %s tenant %s (acme)", c.Key.ID, c.Tenant.ID, c.Tenant.Slug, good.ID, acme.ID)
	}
}

// A flood of the same refusal writes one audit event a minute, not one a
// request: refusals must not flood the chain.
func TestAuthenticateRefusalAuditIsBounded(t *testing.T) {
	r := newRig(t)
	acme := r.tenant("acme", false)
	revoked, secret := r.key(acme, keys.NewSpec{})
	if err := r.db.Transact(r.ctx, func(tx *store.Tx) error { _, err := keys.Revoke(r.ctx, tx, revoked.ID); return err }); err != nil {
		t.Fatal(err)
	}
	start := r.now
	tests := []struct {
		after time.Duration
		total int64 // audit events after the refusal
	}{
		{0, 1},
		{time.Second, 1},
		{refusalAuditEvery - time.Second, 1},
		{refusalAuditEvery, 2},
		{refusalAuditEvery + time.Second, 2},
	}
	for _, tt := range tests {
		r.now = start.Add(tt.after)
		_, err := r.g.Authenticate(r.ctx, secret)
		if p := asProblem(t, "Authenticate", err); p.Code != CodeUnauthorized {
			t.Errorf("%v in: code %s, want %s", tt.after, p.Code, CodeUnauthorized)
		}
		if got := r.auditCount(); got != tt.total {
			t.Errorf("%v after the first refusal: %d audit events, want %d", tt.after, got, tt.total)
		}
	}
}

func TestAuthenticateRateLimit(t *testing.T) {
	r := newRig(t)
	acme := r.tenant("acme", false)
	_, limited := r.key(acme, keys.NewSpec{RatePerMin: 60, Burst: 2})
	_, other := r.key(acme, keys.NewSpec{RatePerMin: 60, Burst: 2})
	start := r.now
	tests := []struct {
		name       string
		secret     string
		after      time.Duration
		code       string // "" when admitted
		retryAfter time.Duration
	}{
		{"first of the burst", limited, 0, "", 0},
		{"second of the burst", limited, 0, "", 0},
		{"burst spent", limited, 0, CodeRateLimited, time.Second},
		{"still spent half a second on", limited, 500 * time.Millisecond, CodeRateLimited, time.Second},
		{"another key has its own bucket", other, 500 * time.Millisecond, "", 0},
		{"one token back after a second", limited, time.Second, "", 0},
		{"and spent again", limited, time.Second, CodeRateLimited, time.Second},
	}
	for _, tt := range tests {
		r.now = start.Add(tt.after)
		_, err := r.g.Authenticate(r.ctx, tt.secret)
		if tt.code == "" {
			if err != nil {
				t.Errorf("%s: Authenticate = %v, want admitted", tt.name, err)
			}
			continue
		}
		p := asProblem(t, tt.name+": Authenticate", err)
		if p.Code != tt.code || p.Kind != problem.KindRateLimited {
			t.Errorf("%s: Authenticate = %s (kind %d), want %s (kind %d)", tt.name, p.Code, p.Kind, tt.code, problem.KindRateLimited)
		}
		if p.RetryAfter != tt.retryAfter {
			t.Errorf("%s: RetryAfter = %v, want %v", tt.name, p.RetryAfter, tt.retryAfter)
		}
		if !strings.Contains(p.Message, "60 requests a minute") {
			t.Errorf("%s: message %q, want it to name the limit", tt.name, p.Message)
		}
	}
}

// Keys that cannot be checked (the database is gone) are refused, never
// let through, and with the answer every path gives when the database is
// not answering: 503 storage_unavailable, Retry-After 5 s.
func TestAuthenticateFailsClosedWhenKeysCannotBeRead(t *testing.T) {
	r := newRig(t)
	_, secret := r.key(r.tenant("acme", false), keys.NewSpec{})
	r.db.Close()
	c, err := r.g.Authenticate(r.ctx, secret)
	p := asProblem(t, "Authenticate on a closed database", err)
	want := store.ErrStorageUnavailable
	if p.Code != want.Code || p.Kind != problem.KindUnavailable || p.RetryAfter != want.RetryAfter || !errors.Is(err, want) {
		t.Errorf("Authenticate on a closed database = %s (kind %d, retry after %v), want %s (kind %d) with Retry-After %v",
			p.Code, p.Kind, p.RetryAfter, want.Code, problem.KindUnavailable, want.RetryAfter)
	}
	if !strings.Contains(p.Message, "Keys cannot be checked") {
		t.Errorf("message %q, want it to say the keys cannot be checked", p.Message)
	}
	if c.Key.ID != "" {
		t.Errorf("Authenticate on a closed database let key %s in", c.Key.ID)
	}
}

func TestReserve(t *testing.T) {
	r := newRig(t)
	const none = -1
	tests := []struct {
		name         string
		limit        int64 // none: the tenant has no budget
		reserved     int64 // already reserved before
		amount       int64
		code         string // "" when admitted
		message      string
		wantReserved int64
	}{
		{"fits", 1000, 0, 600, "", "", 600},
		{"fits exactly", 1000, 400, 600, "", "", 1000},
		{"one micro-unit too many", 1000, 400, 601, CodeBudgetExhausted, "budget cannot cover this journey's estimated cost", 400},
		{"nothing left", 1000, 1000, 1, CodeBudgetExhausted, "budget cannot cover this journey's estimated cost", 1000},
		{"no budget", none, 0, 1, CodeBudgetExhausted, "no budget; an admin must set one", 0},
	}
	for i, tt := range tests {
		tn := r.tenant("t"+string(rune('a'+i))+"-reserve", false)
		if tt.limit != none {
			err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
				if err := budgets.Set(r.ctx, tx, budgets.Spec{TenantID: tn.ID, Period: budgets.Total, LimitMicros: tt.limit, AlertPercent: 80}, r.now); err != nil {
					return err
				}
				return budgets.Reserve(r.ctx, tx, tn.ID, tt.reserved, r.now)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		err := r.db.Transact(r.ctx, func(tx *store.Tx) error { return Reserve(r.ctx, tx, tn.ID, tt.amount, r.now) })
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("%s: Reserve(%d) = %v, want admitted", tt.name, tt.amount, err)
		case tt.code != "":
			p := asProblem(t, tt.name+": Reserve", err)
			if p.Code != tt.code || p.Kind != problem.KindExhausted || p.RetryAfter != 0 {
				t.Errorf("%s: Reserve(%d) = %s (kind %d, retry after %v), want %s (kind %d), no Retry-After",
					tt.name, tt.amount, p.Code, p.Kind, p.RetryAfter, tt.code, problem.KindExhausted)
			}
			if !strings.Contains(p.Message, tt.message) {
				t.Errorf("%s: message %q, want it to say %q", tt.name, p.Message, tt.message)
			}
		}
		b, err := budgets.Get(r.ctx, r.db.Read(), tn.ID)
		if tt.limit == none {
			if !errors.Is(err, budgets.ErrNoBudget) {
				t.Errorf("%s: budget.Get = %+v, %v; want still no budget", tt.name, b, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.ReservedMicros != tt.wantReserved || b.SpentMicros != 0 {
			t.Errorf("%s: budget reserved %d spent %d, want reserved %d spent 0", tt.name, b.ReservedMicros, b.SpentMicros, tt.wantReserved)
		}
	}
}

// A budget that cannot be written admits nothing: the refusal is
// "unavailable" with a Retry-After, not an admission.
func TestReserveFailsClosedWhenTheBudgetCannotBeWritten(t *testing.T) {
	r := newRig(t)
	tn := r.tenant("acme", false)
	err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
		return budgets.Set(r.ctx, tx, budgets.Spec{TenantID: tn.ID, Period: budgets.Total, LimitMicros: 1_000_000, AlertPercent: 80}, r.now)
	})
	if err != nil {
		t.Fatal(err)
	}
	// A transaction that cannot write: on SQLite one on a connection
	// opened read-only, on PostgreSQL a READ ONLY transaction.
	var raw *sql.Tx
	if storetest.Postgres() {
		raw, err = r.db.Read().BeginTx(r.ctx, &sql.TxOptions{ReadOnly: true})
	} else {
		ro, oerr := sql.Open("sqlite", "file:"+r.db.Path()+"?mode=ro&_pragma=busy_timeout(5000)")
		if oerr != nil {
			t.Fatal(oerr)
		}
		defer ro.Close()
		raw, err = ro.BeginTx(r.ctx, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Rollback()
	tx := store.NewTx(raw, store.DialectOf(r.db))

	err = Reserve(r.ctx, tx, tn.ID, 100, r.now)
	p := asProblem(t, "Reserve on a read-only database", err)
	if p.Code != CodeUnavailable || p.Kind != problem.KindUnavailable || p.RetryAfter <= 0 {
		t.Errorf("Reserve on a read-only database = %s (kind %d, retry after %v), want %s (kind %d) with a Retry-After",
			p.Code, p.Kind, p.RetryAfter, CodeUnavailable, problem.KindUnavailable)
	}
	if !strings.Contains(p.Message, "nothing was admitted") {
		t.Errorf("message %q, want it to say nothing was admitted", p.Message)
	}
	b, err := budgets.Get(r.ctx, r.db.Read(), tn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.ReservedMicros != 0 {
		t.Errorf("budget reserved %d after a refused reservation, want 0", b.ReservedMicros)
	}
}

func TestCallerCanRead(t *testing.T) {
	mine := Caller{Key: keys.Key{ID: "k1", Scopes: []string{"skill:refunds"}}, Tenant: tenants.Tenant{ID: "acme"}}
	reader := Caller{Key: keys.Key{ID: "k2", Scopes: []string{"skill:refunds", keys.ScopeReadTenant}}, Tenant: tenants.Tenant{ID: "acme"}}
	tests := []struct {
		name          string
		caller        Caller
		tenant, keyID string
		want          bool
	}{
		{"its own object", mine, "acme", "k1", true},
		{"another key's object in its tenant", mine, "acme", "k9", false},
		{"an object made without a key (console)", mine, "acme", "", false},
		{"another key's object with read:tenant", reader, "acme", "k9", true},
		{"its own object with read:tenant", reader, "acme", "k2", true},
		{"another tenant's object with read:tenant", reader, "globex", "k9", false},
		{"another tenant's object with its own key id", mine, "globex", "k1", false},
	}
	for _, tt := range tests {
		if got := tt.caller.CanRead(tt.tenant, tt.keyID); got != tt.want {
			t.Errorf("%s: CanRead(%q, %q) = %v, want %v", tt.name, tt.tenant, tt.keyID, got, tt.want)
		}
	}
}

// Concurrent lookups coalesce per key and never cross keys: many callers
// of two tenants at once each get their own key; nothing is cached, so a
// revocation counts at the next request.
func TestConcurrentLookupsShareOnlyTheirOwnKey(t *testing.T) {
	r := newRig(t)
	acme, globex := r.tenant("acme", false), r.tenant("globex", false)
	a, aSecret := r.key(acme, keys.NewSpec{RatePerMin: 600000, Burst: 10000})
	g, gSecret := r.key(globex, keys.NewSpec{RatePerMin: 600000, Burst: 10000})
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 200 {
		wg.Go(func() {
			secret, want := aSecret, a.ID
			if i%2 == 1 {
				secret, want = gSecret, g.ID
			}
			c, err := r.g.Authenticate(r.ctx, secret)
			if err != nil || c.Key.ID != want {
				errs <- fmt.Sprintf("got key %q (%v), want %s", c.Key.ID, err, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if err := r.db.Transact(r.ctx, func(tx *store.Tx) error { _, err := keys.Revoke(r.ctx, tx, a.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := r.g.Authenticate(r.ctx, aSecret); err == nil {
		t.Error("a revoked key authenticated: a lookup was served from a cache")
	}
}

// TestRateLimitsHoldAcrossReplicas: two replicas (two gateways) each keep
// a share of the key's and the tenant's limit, so together they admit
// what one would, not twice that.
func TestRateLimitsHoldAcrossReplicas(t *testing.T) {
	r := newRig(t)
	acme := r.tenant("acme", false)
	_, secret := r.key(acme, keys.NewSpec{RatePerMin: 60, Burst: 4})
	other := New(r.db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	other.now = r.g.now
	two := func() int { return 2 }
	r.g.SetReplicas(two)
	other.SetReplicas(two)

	admitted := 0
	for i := 0; i < 10; i++ {
		for _, g := range []*Gateway{r.g, other} {
			if _, err := g.Authenticate(r.ctx, secret); err == nil {
				admitted++
			} else if p := asProblem(t, "Authenticate", err); p.Code != CodeRateLimited {
				t.Fatalf("Authenticate = %s, want admitted or %s", p.Code, CodeRateLimited)
			}
		}
	}
	if admitted != 4 {
		t.Errorf("two replicas admitted %d requests of a key with a burst of 4, want 4", admitted)
	}
	// A minute on, both buckets have refilled 60/2 each, capped at 2.
	r.now = r.now.Add(time.Minute)
	admitted = 0
	for i := 0; i < 10; i++ {
		for _, g := range []*Gateway{r.g, other} {
			if _, err := g.Authenticate(r.ctx, secret); err == nil {
				admitted++
			}
		}
	}
	if admitted != 4 {
		t.Errorf("after a minute two replicas admitted %d, want the burst of 4 again", admitted)
	}

	// The tenant's limit is shared the same way.
	r.g.SetTenantRate(3)
	other.SetTenantRate(3)
	_, roomy := r.key(acme, keys.NewSpec{RatePerMin: 6000, Burst: 1000})
	admitted = 0
	for i := 0; i < 10; i++ {
		for _, g := range []*Gateway{r.g, other} {
			if _, err := g.Authenticate(r.ctx, roomy); err == nil {
				admitted++
			}
		}
	}
	if admitted != 6 {
		t.Errorf("two replicas admitted %d requests of a tenant with a burst of 6, want 6", admitted)
	}
}

// Checking a key writes nothing: its "last used" is written by the
// gateway's Usage, in a batch, and at the latest when Run stops; a later
// time another replica stored is kept.
func TestAuthenticateNotesLastUseWithoutWriting(t *testing.T) {
	r := newRig(t)
	tn := r.tenant("acme", false)
	k, secret := r.key(tn, keys.NewSpec{})
	lastUsed := func() *time.Time {
		t.Helper()
		got, err := keys.ByID(r.ctx, r.db.Read(), k.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastUsedAt
	}
	for range 3 {
		if _, err := r.g.Authenticate(r.ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	if got := lastUsed(); got != nil {
		t.Fatalf("after authenticating, last used %v is stored, want nothing written yet", got)
	}
	if n := r.g.Usage().Pending(); n != 1 {
		t.Fatalf("%d keys pending, want 1", n)
	}
	if err := r.g.Usage().Flush(r.ctx); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got == nil || !got.Equal(r.now) {
		t.Fatalf("after the flush, last used %v, want %v", got, r.now)
	}

	// Another replica stored a later use: an older one noted here does
	// not move it back.
	later := r.now.Add(time.Hour)
	if err := r.db.Transact(r.ctx, func(tx *store.Tx) error { return keys.Touch(r.ctx, tx, k.ID, later) }); err != nil {
		t.Fatal(err)
	}
	r.now = r.now.Add(10 * time.Second)
	if _, err := r.g.Authenticate(r.ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := r.g.Usage().Flush(r.ctx); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got == nil || !got.Equal(later) {
		t.Fatalf("last used %v, want the later %v kept", got, later)
	}

	// Run writes what is pending when it stops.
	r.now = later.Add(time.Minute)
	if _, err := r.g.Authenticate(r.ctx, secret); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.g.Usage().Run(ctx, time.Hour, func(err error) { t.Error(err) }); close(done) }()
	cancel()
	<-done
	if got := lastUsed(); got == nil || !got.Equal(r.now) {
		t.Fatalf("after Run stopped, last used %v, want %v", got, r.now)
	}
}

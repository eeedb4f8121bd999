// Package gateway is the front of the request plane: it authenticates a
// virtual key, refuses frozen tenants, rate-limits per key and admits work
// against the tenant's budget. Every refusal is a *problem.Error whose code
// the API maps to a status; refusals that involve a real key are audited.
package admission

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// Error codes, as the API reports them.
const (
	CodeUnauthorized    = "unauthorized"
	CodeTenantFrozen    = "tenant_frozen"
	CodeRateLimited     = "rate_limited"
	CodeBudgetExhausted = "budget_exhausted"
	CodeUnavailable     = "unavailable"
)

// kinds says what sort of refusal each code is.
var kinds = map[string]problem.Kind{
	CodeUnauthorized:    problem.KindUnauthenticated,
	CodeTenantFrozen:    problem.KindForbidden,
	CodeRateLimited:     problem.KindRateLimited,
	CodeBudgetExhausted: problem.KindExhausted,
	CodeUnavailable:     problem.KindUnavailable,
}

// refuse is the gateway's refusal with code.
func refuse(code, message string, retryAfter time.Duration, cause error) *problem.Error {
	return &problem.Error{Kind: kinds[code], Code: code, Message: message, RetryAfter: retryAfter, Err: cause}
}

// Caller is an authenticated agent: its key and tenant.
type Caller struct {
	Key    keys.Key
	Tenant tenants.Tenant
}

// CanRead reports whether the caller may read an action or journey of
// tenantID created with keyID: a key reads what it created, and every
// object of its tenant only with the scope "read:tenant" (keys.ReadTenant).
// Another tenant's objects are never readable.
func (c Caller) CanRead(tenantID, keyID string) bool {
	return tenantID == c.Tenant.ID && (keyID == c.Key.ID || c.Key.Allows(keys.ReadTenant()))
}

// Gateway authenticates and admits.
type Gateway struct {
	db  *store.DB
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	limiters map[string]*limiter
	audited  map[string]time.Time // key id + verb → last refusal audited

	// tenantRate bounds one tenant's requests per second across its keys
	// (DefaultTenantRate unless SetTenantRate says otherwise).
	tenantRate int
	tenants    map[string]*limiter

	flights singleflight.Group // concurrent lookups of one key share a read

	// usage notes each key's last use in memory, written in batches
	// (keys.Usage): checking a key writes nothing.
	usage *keys.Usage

	// replicas is the number of Warden replicas sharing the database
	// (store.Replica.Live); each keeps 1/replicas of every rate limit.
	replicas func() int
}

// SetReplicas sets how the gateway learns the number of replicas alive
// (store.Replica.Live). The key and tenant rate limits are per-replica
// buckets at limit/N: their sum across replicas is the configured limit.
// Call it before serving; without it N is 1.
func (g *Gateway) SetReplicas(live func() int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.replicas = live
}

// replicaCount is N, at least 1; call with g.mu held.
func (g *Gateway) replicaCount() int {
	if g.replicas == nil {
		return 1
	}
	return max(g.replicas(), 1)
}

// DefaultTenantRate is the requests per second a tenant may make across
// all its keys unless configured (WARDEN_TENANT_RATE).
const DefaultTenantRate = 1000

// SetTenantRate sets the requests per second one tenant may make across
// its keys (burst: twice that). Call it before serving.
func (g *Gateway) SetTenantRate(perSec int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if perSec > 0 {
		g.tenantRate = perSec
		g.tenants = map[string]*limiter{}
	}
}

// refusalAuditEvery bounds how often the same refusal of the same key is
// written to the audit trail: a flood of bad requests with a known prefix
// must not flood the chain or hold the single writer. Every refusal is
// still logged.
const refusalAuditEvery = time.Minute

type limiter struct {
	lim        *rate.Limiter
	perMin     int
	burst      int
	replicas   int // the N this bucket's share was cut for
	lastAccess time.Time
}

// newShare is one replica's bucket of a limit of perSec and burst shared
// by n replicas: perSec/n, and burst/n but at least 1 (so a burst below n
// lets up to n requests through at once across the replicas).
func newShare(perSec float64, burst, n int) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(perSec/float64(n)), max(1, burst/n))
}

// New returns a gateway over db.
func New(db *store.DB, log *slog.Logger) *Gateway {
	return &Gateway{db: db, log: log, now: time.Now, limiters: map[string]*limiter{}, audited: map[string]time.Time{},
		tenantRate: DefaultTenantRate, tenants: map[string]*limiter{}, usage: keys.NewUsage(db)}
}

// Usage is where the gateway notes the keys it admitted; its Run writes
// their last use (keys.UsageFlushEvery).
func (g *Gateway) Usage() *keys.Usage { return g.usage }

// Authenticate checks the presented key, the tenant and the key's rate
// limit, in that order.
func (g *Gateway) Authenticate(ctx context.Context, secret string) (Caller, error) {
	now := g.now()
	if secret == "" {
		return Caller{}, refuse(CodeUnauthorized, "Send the virtual key as Authorization: Bearer wk_...", 0, nil)
	}
	k, t, err := g.lookupKey(ctx, secret, now)
	if err != nil {
		switch {
		case errors.Is(err, keys.ErrRevoked), errors.Is(err, keys.ErrExpired):
			g.auditRefusal(ctx, k, "key."+reasonOf(err), map[string]any{"prefix": k.Prefix})
			return Caller{}, refuse(CodeUnauthorized, "The key is "+reasonOf(err)+".", 0, err)
		case errors.Is(err, keys.ErrUnknown):
			// A known prefix with a wrong secret is worth a record; pure
			// noise (unknown prefixes) only reaches the log.
			if p, ok := knownPrefix(ctx, g.db, secret); ok {
				g.auditRefusal(ctx, keys.Key{ID: p.ID, TenantSlug: p.TenantSlug}, "key.wrong_secret", map[string]any{"prefix": p.Prefix})
			}
			return Caller{}, refuse(CodeUnauthorized, "The key is not valid.", 0, err)
		case errors.Is(err, keys.ErrMalformed):
			return Caller{}, refuse(CodeUnauthorized, "The key is not valid.", 0, err)
		default:
			return Caller{}, g.unavailable("Keys cannot be checked right now: Warden's storage is not answering.", "Keys cannot be checked right now.", err)
		}
	}
	g.usage.Note(k.ID, now)
	// The key's tenant was read with the key, in the same statement.
	if t.Frozen {
		g.auditRefusal(ctx, k, "tenant.frozen_refused", map[string]any{"prefix": k.Prefix})
		return Caller{}, refuse(CodeTenantFrozen, "Tenant "+t.Slug+" is frozen: its agents cannot run until an admin unfreezes it.", 0, nil)
	}
	if wait := g.allow(k, now); wait > 0 {
		return Caller{}, refuse(CodeRateLimited, fmt.Sprintf("Rate limit of %d requests a minute reached.", k.RatePerMin), wait, nil)
	}
	if wait := g.allowTenant(t.ID, now); wait > 0 {
		return Caller{}, refuse(CodeRateLimited, fmt.Sprintf("Tenant %s reached its limit of %d requests a second across its keys.", t.Slug, g.tenantRate), wait, nil)
	}
	return Caller{Key: k, Tenant: t}, nil
}

// unavailable refuses a request whose key or tenant could not be read. A
// database that does not answer is storage_unavailable with its
// Retry-After, as every other path that notices it answers
// (store.ErrStorageUnavailable, docs/failure-modes.md); anything else
// (the caller gave up) stays a short unavailable.
func (g *Gateway) unavailable(storageMessage, message string, err error) error {
	if g.db.NotAnswering(err) {
		return g.db.StorageNotAnswering(storageMessage, err)
	}
	return refuse(CodeUnavailable, message, time.Second, err)
}

// lookupKey authenticates secret and reads its tenant in the same
// statement (keys.AuthenticateWithTenant), coalescing concurrent lookups of the
// same secret into one database read (singleflight). The flight is keyed
// by the secret's hash, so only callers holding the same key share a
// result; nothing is cached, so a revocation counts from the next lookup.
// The shared read has its own bound (2 s); each caller still waits only
// as long as its own context allows.
func (g *Gateway) lookupKey(ctx context.Context, secret string, now time.Time) (keys.Key, tenants.Tenant, error) {
	sum := sha256.Sum256([]byte(secret))
	ch := g.flights.DoChan(hex.EncodeToString(sum[:]), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		k, t, err := keys.AuthenticateWithTenant(lctx, g.db.Read(), secret, now)
		return keyResult{k, t, err}, nil
	})
	select {
	case r := <-ch:
		kr := r.Val.(keyResult)
		return kr.k, kr.t, kr.err
	case <-ctx.Done():
		return keys.Key{}, tenants.Tenant{}, ctx.Err()
	}
}

type keyResult struct {
	k   keys.Key
	t   tenants.Tenant
	err error
}

// allow takes one token from the key's bucket, or says how long to wait.
func (g *Gateway) allow(k keys.Key, now time.Time) time.Duration {
	g.mu.Lock()
	n := g.replicaCount()
	l := g.limiters[k.ID]
	if l == nil || l.perMin != k.RatePerMin || l.burst != k.Burst || l.replicas != n {
		l = &limiter{lim: newShare(float64(k.RatePerMin)/60, k.Burst, n), perMin: k.RatePerMin, burst: k.Burst, replicas: n}
		g.limiters[k.ID] = l
	}
	l.lastAccess = now
	g.mu.Unlock()
	r := l.lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Minute
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return time.Duration(math.Ceil(d.Seconds())) * time.Second
	}
	return 0
}

// allowTenant takes one token from the tenant's bucket, or says how long
// to wait (at least a second, as Retry-After counts).
func (g *Gateway) allowTenant(tenantID string, now time.Time) time.Duration {
	g.mu.Lock()
	n := g.replicaCount()
	l := g.tenants[tenantID]
	if l == nil || l.replicas != n {
		l = &limiter{lim: newShare(float64(g.tenantRate), 2*g.tenantRate, n), replicas: n}
		g.tenants[tenantID] = l
	}
	g.mu.Unlock()
	r := l.lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return max(time.Second, time.Duration(math.Ceil(d.Seconds()))*time.Second)
	}
	return 0
}

// Reserve reserves amount of the caller's budget inside tx. A budget that
// cannot be written fails closed.
func Reserve(ctx context.Context, tx *store.Tx, tenantID string, amount int64, now time.Time) error {
	err := budgets.Reserve(ctx, tx, tenantID, amount, now)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, budgets.ErrExhausted):
		return refuse(CodeBudgetExhausted, "The tenant's budget cannot cover this journey's estimated cost.", 0, err)
	case errors.Is(err, budgets.ErrNoBudget):
		return refuse(CodeBudgetExhausted, "The tenant has no budget; an admin must set one.", 0, err)
	default:
		return refuse(CodeUnavailable, "The budget cannot be written right now; nothing was admitted.", 2*time.Second, err)
	}
}

func reasonOf(err error) string {
	if errors.Is(err, keys.ErrRevoked) {
		return "revoked"
	}
	return "expired"
}

// auditRefusal records a refused key; a failure to record is logged, the
// refusal stands either way.
func (g *Gateway) auditRefusal(ctx context.Context, k keys.Key, verb string, details map[string]any) {
	g.log.WarnContext(ctx, "key refused", "verb", verb, "key", k.ID)
	now := g.now()
	g.mu.Lock()
	last, seen := g.audited[k.ID+"|"+verb]
	if !seen || now.Sub(last) >= refusalAuditEvery {
		g.audited[k.ID+"|"+verb] = now
	}
	g.mu.Unlock()
	if seen && now.Sub(last) < refusalAuditEvery {
		return
	}
	err := g.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorKey, ID: k.ID},
			Tenant:  k.TenantSlug,
			Verb:    verb,
			Subject: audit.Subject{Type: "key", ID: k.ID},
			Details: details,
		})
		return err
	})
	if err != nil {
		g.log.WarnContext(ctx, "could not audit a key refusal", "verb", verb, "err", err)
	}
}

type prefixInfo struct{ ID, Prefix, TenantSlug string }

func knownPrefix(ctx context.Context, db *store.DB, secret string) (prefixInfo, bool) {
	const p = len("wk_")
	if len(secret) < p+8 {
		return prefixInfo{}, false
	}
	var pi prefixInfo
	err := db.Read().QueryRowContext(ctx, `SELECT k.id, k.prefix, t.slug FROM virtual_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.prefix = ?`,
		secret[p:p+8]).Scan(&pi.ID, &pi.Prefix, &pi.TenantSlug)
	return pi, err == nil
}

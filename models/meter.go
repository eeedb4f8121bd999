package models

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Observer learns of the gateway's model traffic, for metrics (web's
// Prometheus collector implements it). Both methods are called on the
// request's goroutine and must not block.
//
// A call is observed once, when it is settled (Gateway.settle): that is
// the one place every door (chat, and the doors built on it) ends a call,
// so nothing is counted twice and no call is missed. A request refused
// before a call exists (a bad body, a key's limit, a budget that cannot
// cover the worst case) is no call and is not observed.
type Observer interface {
	// Reserved: a call of alias has reserved micros of its tenant's
	// budget; Settled with that call releases them.
	Reserved(alias string, micros int64)
	// Settled: the call as recorded (its attempts, tokens, cost, latency).
	Settled(c Call)
}

type observerBox struct{ o Observer }

// SetObserver sets the observer of the gateway's calls (nil: none). It may
// be called while calls run.
func (g *Gateway) SetObserver(o Observer) {
	if o == nil {
		g.obs.Store(nil)
		return
	}
	g.obs.Store(&observerBox{o})
}

func (g *Gateway) observer() Observer {
	if b := g.obs.Load(); b != nil {
		return b.o
	}
	return nil
}

// observeReserved tells the observer that call reserved its worst case.
func (g *Gateway) observeReserved(alias string, micros int64) {
	if o := g.observer(); o != nil && micros > 0 {
		o.Reserved(alias, micros)
	}
}

// settle records the call and charges its cost (settle in calls.go, one
// transaction), then tells the observer.
func (g *Gateway) settle(ctx context.Context, c Call) error {
	err := settleCall(ctx, g.db, c)
	if o := g.observer(); o != nil {
		o.Settled(c)
	}
	return err
}

// Headers of a model answer (docs/api.md).
const (
	HeaderRequestID = "X-Warden-Request-Id" // the call's id, as on the Models page
	HeaderCost      = "X-Warden-Cost"       // micro-units charged; a trailer on streams
	HeaderMetadata  = "X-Warden-Metadata"   // the agent's tags for the call (a JSON object)
)

// setCost writes what the call was charged: a header before the answer
// starts; on a stream, whose cost is known only at its end, an HTTP
// trailer (sent after the last event, on HTTP/1.1 chunked and HTTP/2).
func setCost(h http.Header, c *Call) {
	v := strconv.FormatInt(c.CostMicros, 10)
	if c.Stream && c.HTTPStatus == http.StatusOK && !c.CacheHit {
		// finish of a stream runs after its first event was written.
		h.Set(http.TrailerPrefix+HeaderCost, v)
		return
	}
	h.Set(HeaderCost, v)
}

// rateLimitHeaders writes OpenAI's x-ratelimit-* headers for a key with
// limits lim, as its buckets stand at now: the limit a minute, what
// remains of it, and how long until the bucket is full again ("1s",
// "6m0s"). A limit the key does not have is left out. Call it after the
// call was admitted (or refused), so remaining counts this request.
//
// With N replicas each holds 1/N of the limit (limiter); remaining is
// this replica's part times N, the estimate a client can pace itself by.
func (g *Gateway) rateLimitHeaders(h http.Header, keyID string, lim KeyLimits, now time.Time) {
	l := g.limits
	if lim.RPM == 0 && lim.TPM == 0 {
		return
	}
	l.mu.Lock()
	n := l.count()
	kb := l.keys[keyID]
	var req, tok bucket
	if kb != nil && kb.limits == lim {
		req, tok = kb.req, kb.tok
		req.refill(now)
		tok.refill(now)
	} else {
		req = bucket{capacity: share(lim.RPM, n, true), level: share(lim.RPM, n, true)}
		tok = bucket{capacity: share(lim.TPM, n, false), level: share(lim.TPM, n, false)}
	}
	l.mu.Unlock()
	put := func(kind string, limit int, b bucket) {
		if limit == 0 {
			return
		}
		remaining := int64(math.Max(0, math.Floor(b.level*float64(n))))
		h.Set("X-Ratelimit-Limit-"+kind, strconv.Itoa(limit))
		h.Set("X-Ratelimit-Remaining-"+kind, strconv.FormatInt(min(remaining, int64(limit)), 10))
		h.Set("X-Ratelimit-Reset-"+kind, resetIn(b))
	}
	put("Requests", lim.RPM, req)
	put("Tokens", lim.TPM, tok)
}

// resetIn is how long until b is full again, as OpenAI writes it: Go's
// duration form, to the millisecond ("0s", "17ms", "6m0s").
func resetIn(b bucket) string {
	if b.capacity == 0 || b.level >= b.capacity {
		return "0s"
	}
	secs := (b.capacity - b.level) / (b.capacity / 60)
	return time.Duration(secs * float64(time.Second)).Round(time.Millisecond).String()
}

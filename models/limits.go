package models

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/wardenhq/warden/platform/problem"
)

// limiter enforces keys' model limits (KeyLimits) in this process: a
// token bucket of requests and one of tokens per key, each holding a
// minute's worth and refilled continuously. With several replicas each
// keeps a share: buckets of 1/N of the limits, N being the replicas alive
// (replicas; store.Replica.Live), so that together they admit the limit.
type limiter struct {
	mu       sync.Mutex
	keys     map[string]*keyBuckets
	replicas func() int // nil: one replica
}

type keyBuckets struct {
	limits   KeyLimits
	n        int // the replicas the buckets were cut for
	req, tok bucket
}

// share is one replica's part of a limit per minute: limit/n, but a
// request bucket holds at least one request.
func share(limit int, n int, atLeastOne bool) float64 {
	v := float64(limit) / float64(n)
	if atLeastOne && limit > 0 {
		v = math.Max(v, 1)
	}
	return v
}

type bucket struct {
	capacity, level float64
	at              time.Time
}

// refill brings b to now; a capacity of 0 is no limit.
func (b *bucket) refill(now time.Time) {
	if b.capacity == 0 {
		return
	}
	b.level = math.Min(b.capacity, b.level+now.Sub(b.at).Seconds()*b.capacity/60)
	b.at = now
}

// wait is how long until b holds n.
func (b *bucket) wait(n float64) time.Duration {
	if b.capacity == 0 || b.level >= n {
		return 0
	}
	return time.Duration((n - b.level) / (b.capacity / 60) * float64(time.Second))
}

// count is the number of replicas alive, at least 1; l.mu is held.
func (l *limiter) count() int {
	if l.replicas == nil {
		return 1
	}
	return max(1, l.replicas())
}

// replicaCount is count for callers that do not hold l.mu.
func (l *limiter) replicaCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count()
}

func newLimiter() *limiter { return &limiter{keys: map[string]*keyBuckets{}} }

// ticket is an admitted call's share of its key's token bucket, corrected
// when the call is settled.
type ticket struct {
	keyID  string
	tokens int64
}

// admit takes one request and tokens (the call's estimate) from the key's
// buckets, or refuses with 429 and how long to wait. A call estimated
// above the whole minute's tokens waits for a full bucket.
func (l *limiter) admit(keyID string, lim KeyLimits, tokens int64, now time.Time) (ticket, error) {
	if lim.RPM == 0 && lim.TPM == 0 {
		return ticket{}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.count()
	kb := l.keys[keyID]
	if kb == nil || kb.limits != lim || kb.n != n {
		rpm, tpm := share(lim.RPM, n, true), share(lim.TPM, n, false)
		kb = &keyBuckets{limits: lim, n: n, req: bucket{capacity: rpm, level: rpm, at: now},
			tok: bucket{capacity: tpm, level: tpm, at: now}}
		l.keys[keyID] = kb
	}
	kb.req.refill(now)
	kb.tok.refill(now)
	need := float64(tokens)
	if lim.TPM > 0 {
		need = math.Min(need, kb.tok.capacity)
	}
	if w := kb.req.wait(1); w > 0 {
		return ticket{}, rateLimited(fmt.Sprintf("This key's limit of %d model requests a minute is reached.", lim.RPM), w)
	}
	if w := kb.tok.wait(need); w > 0 {
		return ticket{}, rateLimited(fmt.Sprintf("This key's limit of %d model tokens a minute is reached (this call may use %d).", lim.TPM, tokens), w)
	}
	if lim.RPM > 0 {
		kb.req.level--
	}
	if lim.TPM > 0 {
		kb.tok.level -= need
		return ticket{keyID: keyID, tokens: int64(need)}, nil
	}
	return ticket{}, nil
}

// settle corrects the key's token bucket from the estimate to the tokens
// the call used: unused tokens go back, extra ones are taken (the bucket
// may go below empty; later calls wait). A count below zero is no usage:
// it never gives back more than the call took.
func (l *limiter) settle(t ticket, used int64) {
	if t.keyID == "" {
		return
	}
	used = min(max(used, 0), maxUsage)
	l.mu.Lock()
	defer l.mu.Unlock()
	kb := l.keys[t.keyID]
	if kb == nil {
		return
	}
	kb.tok.level = math.Min(kb.tok.capacity, kb.tok.level+float64(t.tokens-used))
}

func rateLimited(msg string, wait time.Duration) error {
	// Whole seconds, rounded up: a client that waits Retry-After is admitted.
	secs := max(1, int64(math.Ceil(wait.Seconds())))
	return &problem.Error{Kind: problem.KindRateLimited, Code: "rate_limited", Message: msg, RetryAfter: time.Duration(secs) * time.Second}
}

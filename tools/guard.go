package tools

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
	"github.com/wardenhq/warden/platform/risk"
)

// Unavailable is a call Warden refused before sending anything, because
// the dependency is known to be failing (its circuit breaker is open) or
// is already as busy as it may be (its bulkhead is full). It is not
// retried within the call — nothing would have changed — but it is not
// final either: a job may try again after the Retry-After it carries.
const Unavailable ErrorKind = "unavailable"

// GuardOptions shape the one policy every tool call passes through
// (docs/failure-modes.md). A zero field means its default.
type GuardOptions struct {
	// Retry shapes the waits between attempts; this is the one retry
	// layer of a tool call.
	Retry RetryOptions
	// RetryShare bounds the retries of a dependency to this share of its
	// first attempts (plus RetryFloor in reserve), so a failing
	// dependency is not hammered by retries: default 0.2.
	RetryShare float64
	RetryFloor float64 // default 10
	// The circuit breaker, per dependency: over a rolling Window (in
	// Buckets), once at least MinCalls ended, a share of failures of
	// FailureRate or more opens it for OpenFor; then one probe at a time
	// decides whether it closes. Defaults: 30s, 10, 10, 0.5, 10s.
	Window      time.Duration
	Buckets     int
	MinCalls    uint32
	FailureRate float64
	OpenFor     time.Duration
	// MaxConcurrent is each dependency's bulkhead: calls beyond it are
	// refused at once (default 100).
	MaxConcurrent int
	// Reserve is kept from the caller's deadline for recording the result:
	// an attempt gets min(the tool's timeout, time left − Reserve); with
	// less than that left, nothing is sent (default 50ms).
	Reserve time.Duration
	// HedgeAfter, when set, hedges reads: a low-impact call that has not
	// answered after this long gets one second attempt in parallel (the
	// first answer wins, the other is cancelled). A hedge spends the
	// retry budget, so hedges are capped like retries. Writes (medium and
	// high impact) are never hedged. Off by default.
	HedgeAfter time.Duration
	// OnStateChange, when set, hears every breaker transition.
	OnStateChange func(dependency, from, to string)
}

func (o GuardOptions) withDefaults() GuardOptions {
	if o.RetryShare <= 0 {
		o.RetryShare = 0.2
	}
	if o.RetryFloor <= 0 {
		o.RetryFloor = 10
	}
	if o.Window <= 0 {
		o.Window = 30 * time.Second
	}
	if o.Buckets <= 0 {
		o.Buckets = 10
	}
	if o.MinCalls == 0 {
		o.MinCalls = 10
	}
	if o.FailureRate <= 0 || o.FailureRate > 1 {
		o.FailureRate = 0.5
	}
	if o.OpenFor <= 0 {
		o.OpenFor = 10 * time.Second
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 100
	}
	if o.Reserve <= 0 {
		o.Reserve = 50 * time.Millisecond
	}
	return o
}

// Guard holds the per-dependency state — circuit breaker, bulkhead, retry
// budget and counters — that Wrap puts in front of providers. A
// dependency is one tool: a hanging provider of one tool fills only that
// tool's bulkhead and opens only its breaker.
type Guard struct {
	o    GuardOptions
	mu   sync.Mutex
	deps map[string]*dependency
}

// NewGuard returns a guard with o's policy.
func NewGuard(o GuardOptions) *Guard {
	return &Guard{o: o.withDefaults(), deps: map[string]*dependency{}}
}

// WithRetry wraps p in a guard of its own with the default breaker and
// bulkhead and the given retry shape; see Guard.Wrap.
func WithRetry(p Provider, o RetryOptions) Provider {
	return NewGuard(GuardOptions{Retry: o}).Wrap(p)
}

// Wrap returns p behind the guard: each call takes a slot of its tool's
// bulkhead (or is refused at once, Unavailable), then attempts run
// through the tool's breaker (refused at once while it is open,
// Unavailable, with the time left as Retry-After), each bounded by
// min(the tool's Timeout, the caller's time left − Reserve); Transient
// failures are retried with exponential backoff and full jitter within
// the tool's MaxAttempts, the caller's deadline and the dependency's retry
// budget, always with the same Call and so the same idempotency key.
//
// When p is a Looker, so is the result; Lookup is bounded by the tool's
// Timeout and passes the bulkhead, not the breaker, and is not retried.
// The result is always a Checker, asking p when p is one.
func (g *Guard) Wrap(p Provider) Provider {
	w := &guarded{g: g, p: p}
	if l, ok := p.(Looker); ok {
		return &guardedLooker{guarded: w, l: l}
	}
	return w
}

// dependency is one tool's guard state.
type dependency struct {
	name    string
	breaker *gobreaker.CircuitBreaker[Result]
	slots   chan struct{}

	budgetMu sync.Mutex
	budget   float64 // retries that may still be made

	openedAt atomic.Int64 // unix nanoseconds of the last opening

	calls, failures, timeouts, retries, budgetDenied, rejected, shortCircuited, hedges atomic.Int64
	lat                                                                                latencies
}

func (g *Guard) dep(name string) *dependency {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d, ok := g.deps[name]; ok {
		return d
	}
	d := &dependency{name: name, slots: make(chan struct{}, g.o.MaxConcurrent), budget: g.o.RetryFloor}
	minCalls, rate := g.o.MinCalls, g.o.FailureRate
	d.breaker = gobreaker.NewCircuitBreaker[Result](gobreaker.Settings{
		Name:         name,
		MaxRequests:  1, // one probe at a time when half-open
		Interval:     g.o.Window,
		BucketPeriod: g.o.Window / time.Duration(g.o.Buckets),
		Timeout:      g.o.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.Requests >= minCalls && float64(c.TotalFailures) >= rate*float64(c.Requests)
		},
		// A failure is the dependency's: Transient (timeouts, 5xx, 429,
		// connection errors). Terminal answers (validation, other 4xx) and
		// a caller who went away say nothing about its health.
		IsSuccessful: func(err error) bool { return err == nil || !IsTransient(err) },
		IsExcluded: func(err error) bool {
			var pe *Error
			return errors.Is(err, errCallerGone) || errors.As(err, &pe) && pe.Kind == Terminal
		},
		OnStateChange: func(_ string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				d.openedAt.Store(time.Now().UnixNano())
			}
			if g.o.OnStateChange != nil {
				g.o.OnStateChange(name, from.String(), to.String())
			}
		},
	})
	g.deps[name] = d
	return d
}

// errCallerGone marks an attempt the caller abandoned, for the breaker.
var errCallerGone = errors.New("caller gone")

// deposit and withdraw keep the retry budget: each first attempt adds
// RetryShare, each retry takes one, never above RetryFloor + what 100
// calls would add.
func (d *dependency) deposit(o GuardOptions) {
	d.budgetMu.Lock()
	d.budget = min(d.budget+o.RetryShare, o.RetryFloor+100*o.RetryShare)
	d.budgetMu.Unlock()
}

func (d *dependency) withdraw() bool {
	d.budgetMu.Lock()
	defer d.budgetMu.Unlock()
	if d.budget < 1 {
		return false
	}
	d.budget--
	return true
}

type guarded struct {
	g *Guard
	p Provider
}

func (w *guarded) Execute(ctx context.Context, t Tool, call Call) (res Result, err error) {
	name, err := CallName(t, call)
	if err != nil {
		return Result{}, err
	}
	ctx, span := startCall(ctx, t, name) // tracing.go
	attempts := 0
	defer func() { endCall(span, attempts, res, err) }()
	o := w.g.o
	dep := name
	if t.Dependency != "" {
		dep = t.Dependency
	}
	d := w.g.dep(dep)
	select {
	case d.slots <- struct{}{}:
		defer func() { <-d.slots }()
	default:
		d.rejected.Add(1)
		return Result{}, &Error{Kind: Unavailable, Reason: fmt.Sprintf("tool %s already has %d calls in flight", name, cap(d.slots)),
			Err: &RetryAfterError{Wait: time.Second}}
	}
	d.calls.Add(1)
	d.deposit(o)
	start := time.Now()
	res, _, err = o.Retry.retry(ctx, t.MaxAttempts, func() bool {
		if d.withdraw() {
			d.retries.Add(1)
			return true
		}
		d.budgetDenied.Add(1)
		return false
	}, func(ctx context.Context) (Result, error) {
		attempts++
		if o.HedgeAfter > 0 && t.Impact == risk.ImpactLow && !t.AtMostOnce {
			return w.hedged(ctx, d, t, call, attempts)
		}
		return w.attempt(ctx, d, t, call, attempts)
	})
	d.lat.add(time.Since(start))
	if err != nil {
		d.failures.Add(1)
	}
	return res, err
}

// hedged runs an attempt of a read and, if it has not answered after
// HedgeAfter and the retry budget allows, a second one beside it: the
// first answer wins and the other is cancelled.
func (w *guarded) hedged(ctx context.Context, d *dependency, t Tool, call Call, n int) (Result, error) {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		res Result
		err error
	}
	answers := make(chan answer, 2)
	run := func() {
		res, err := w.attempt(hctx, d, t, call, n)
		answers <- answer{res, err}
	}
	go run()
	timer := time.NewTimer(w.g.o.HedgeAfter)
	defer timer.Stop()
	running := 1
	for {
		select {
		case a := <-answers:
			running--
			if a.err == nil || running == 0 {
				return a.res, a.err
			}
		case <-timer.C:
			if d.withdraw() {
				d.hedges.Add(1)
				running++
				go run()
			}
		}
	}
}

// attempt runs one attempt through the breaker, bounded in time.
func (w *guarded) attempt(ctx context.Context, d *dependency, t Tool, call Call, n int) (Result, error) {
	o := w.g.o
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if deadline, ok := ctx.Deadline(); ok {
		left := time.Until(deadline) - o.Reserve
		if left <= 0 {
			return Result{}, &Error{Kind: Transient, Reason: "no time left before the caller's deadline", Err: context.DeadlineExceeded}
		}
		timeout = min(timeout, left)
	}
	res, err := d.breaker.Execute(func() (Result, error) {
		actx, cancel := context.WithTimeout(WithAttempt(ctx, n), timeout)
		defer cancel()
		res, err := w.p.Execute(actx, t, call)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return res, errors.Join(&Error{Kind: Transient, Reason: "call abandoned by the caller", Err: context.Cause(ctx)}, errCallerGone)
		}
		if actx.Err() != nil {
			// The attempt's own time ran out, whatever the provider made
			// of its context ending.
			d.timeouts.Add(1)
			return res, &Error{Kind: Transient, Reason: fmt.Sprintf("no answer within %s", timeout), Err: err}
		}
		return res, err
	})
	switch {
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		d.shortCircuited.Add(1)
		wait := o.OpenFor - time.Since(time.Unix(0, d.openedAt.Load()))
		return Result{}, &Error{Kind: Unavailable, Reason: fmt.Sprintf("recent calls of tool %s failed; Warden is not calling it for now", d.name),
			Err: &RetryAfterError{Wait: max(wait, time.Second)}}
	case errors.Is(err, errCallerGone):
		var pe *Error
		errors.As(err, &pe)
		return res, pe
	}
	return res, err
}

// Check asks the provider under the guard, within the tool's Timeout.
// It passes neither the bulkhead nor the breaker: it is a read made once
// per proposal, and a provider that cannot answer it refuses the
// proposal rather than the calls that are running.
func (w *guarded) Check(ctx context.Context, t Tool, call Call) error {
	actx, cancel := attemptContext(ctx, t.Timeout)
	defer cancel()
	return Check(actx, w.p, t, call)
}

type guardedLooker struct {
	*guarded
	l Looker
}

func (w *guardedLooker) Lookup(ctx context.Context, t Tool, key string) (Result, LookupStatus, error) {
	d := w.g.dep(t.Name)
	select {
	case d.slots <- struct{}{}:
		defer func() { <-d.slots }()
	default:
		d.rejected.Add(1)
		return Result{}, LookupUnknown, &Error{Kind: Unavailable, Reason: fmt.Sprintf("tool %s already has %d calls in flight", t.Name, cap(d.slots))}
	}
	actx, cancel := attemptContext(ctx, t.Timeout)
	defer cancel()
	return w.l.Lookup(actx, t, key)
}

type attemptKey struct{}

// WithAttempt records in ctx which attempt of a call this is (1 for the
// first), for providers that tell the other side (the HTTP provider's
// X-Warden-Attempt).
func WithAttempt(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptKey{}, n)
}

// AttemptOf is the attempt number WithAttempt recorded, or 1.
func AttemptOf(ctx context.Context) int {
	if n, ok := ctx.Value(attemptKey{}).(int); ok && n > 0 {
		return n
	}
	return 1
}

// fullJitter draws a wait uniformly from [0, d): "full jitter", so that
// callers that failed together do not retry together.
func fullJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}

// DependencyHealth is one dependency's state for the health page and
// /metrics.
type DependencyHealth struct {
	Name           string
	State          string  // closed, half-open, open
	WindowCalls    uint32  // attempts ended in the breaker's rolling window
	WindowFailures uint32  // of which failed
	ErrorRate      float64 // WindowFailures / WindowCalls (0 with none)
	InFlight       int
	MaxConcurrent  int
	P50, P99       time.Duration // of the last calls, retries included
	// Totals since start.
	Calls, Failures, Timeouts, Retries, BudgetDenied, Rejected, ShortCircuited, Hedges int64
}

// Health lists every dependency the guard has seen, by name.
func (g *Guard) Health() []DependencyHealth {
	g.mu.Lock()
	deps := make([]*dependency, 0, len(g.deps))
	for _, d := range g.deps {
		deps = append(deps, d)
	}
	g.mu.Unlock()
	sort.Slice(deps, func(i, j int) bool { return deps[i].name < deps[j].name })
	out := make([]DependencyHealth, 0, len(deps))
	for _, d := range deps {
		c := d.breaker.Counts()
		h := DependencyHealth{
			Name: d.name, State: d.breaker.State().String(), WindowCalls: c.Requests, WindowFailures: c.TotalFailures,
			InFlight: len(d.slots), MaxConcurrent: cap(d.slots),
			Calls: d.calls.Load(), Failures: d.failures.Load(), Timeouts: d.timeouts.Load(), Retries: d.retries.Load(),
			BudgetDenied: d.budgetDenied.Load(), Rejected: d.rejected.Load(), ShortCircuited: d.shortCircuited.Load(), Hedges: d.hedges.Load(),
		}
		if c.Requests > 0 {
			h.ErrorRate = float64(c.TotalFailures) / float64(c.Requests)
		}
		h.P50, h.P99 = d.lat.quantiles()
		out = append(out, h)
	}
	return out
}

// latencies keeps the last 256 call latencies.
type latencies struct {
	mu   sync.Mutex
	ring [256]time.Duration
	n    int
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.ring[l.n%len(l.ring)] = d
	l.n++
	l.mu.Unlock()
}

func (l *latencies) quantiles() (p50, p99 time.Duration) {
	l.mu.Lock()
	n := min(l.n, len(l.ring))
	s := append([]time.Duration(nil), l.ring[:n]...)
	l.mu.Unlock()
	if n == 0 {
		return 0, 0
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(n-1)*50/100], s[(n-1)*99/100]
}

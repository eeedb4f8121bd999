package tools

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wardenhq/warden/platform/risk"
)

// scripted is a provider whose answers a test decides call by call.
type scripted struct {
	calls atomic.Int64
	fn    func(ctx context.Context, n int64) (Result, error)
}

func (s *scripted) Execute(ctx context.Context, _ Tool, _ Call) (Result, error) {
	return s.fn(ctx, s.calls.Add(1))
}

var (
	errDown    = &Error{Kind: Transient, Reason: "503"}
	errInvalid = &Error{Kind: Terminal, Reason: "422 invalid arguments"}
)

func guardTool(name string) Tool {
	return Tool{Name: name, Timeout: time.Second, MaxAttempts: 1}
}

func callOf(tool string) Call { return Call{Tool: tool, IdempotencyKey: "k"} }

func breakerGuard() *Guard {
	return NewGuard(GuardOptions{Retry: fast, MinCalls: 10, FailureRate: 0.5, OpenFor: 10 * time.Second, Window: 30 * time.Second})
}

func stateOf(g *Guard, name string) string {
	for _, h := range g.Health() {
		if h.Name == name {
			return h.State
		}
	}
	return ""
}

// The breaker, on synctest's fake clock: closed below the minimum number
// of calls; open at the failure rate, refusing at once with a
// Retry-After; half-open after the open period; a failed probe reopens
// it, a good one closes it.
func TestBreakerOpensAtTheFailureRateAndProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := breakerGuard()
		fail := atomic.Bool{}
		fail.Store(true)
		p := &scripted{fn: func(context.Context, int64) (Result, error) {
			if fail.Load() {
				return Result{}, errDown
			}
			return Result{Output: []byte(`{}`)}, nil
		}}
		w := g.Wrap(p)
		tool := guardTool("lookup_order")
		for range 9 {
			w.Execute(t.Context(), tool, callOf("lookup_order"))
		}
		if s := stateOf(g, "lookup_order"); s != "closed" || p.calls.Load() != 9 {
			t.Fatalf("after 9 failures (below the minimum of 10): %s, %d calls; want closed, 9", s, p.calls.Load())
		}
		w.Execute(t.Context(), tool, callOf("lookup_order"))
		if s := stateOf(g, "lookup_order"); s != "open" {
			t.Fatalf("after 10 of 10 failures the breaker is %s, want open", s)
		}
		_, err := w.Execute(t.Context(), tool, callOf("lookup_order"))
		var pe *Error
		wait, ok := RetryAfter(err)
		if !errors.As(err, &pe) || pe.Kind != Unavailable || !ok || wait <= 0 || p.calls.Load() != 10 {
			t.Fatalf("call while open = %v (retry after %v), %d calls; want Unavailable at once with a Retry-After", err, wait, p.calls.Load())
		}

		time.Sleep(11 * time.Second) // the open period passes, on synctest's fake clock (at once)
		if _, err := w.Execute(t.Context(), tool, callOf("lookup_order")); err == nil || stateOf(g, "lookup_order") != "open" {
			t.Fatalf("a failed probe: %v, state %s; want the breaker open again", err, stateOf(g, "lookup_order"))
		}
		time.Sleep(11 * time.Second)
		fail.Store(false)
		if _, err := w.Execute(t.Context(), tool, callOf("lookup_order")); err != nil || stateOf(g, "lookup_order") != "closed" {
			t.Fatalf("a good probe: %v, state %s; want closed", err, stateOf(g, "lookup_order"))
		}
	})
}

// Validation errors and other Terminal answers say nothing about the
// dependency's health: they never open the breaker.
func TestBreakerIgnoresValidationErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := breakerGuard()
		p := &scripted{fn: func(context.Context, int64) (Result, error) { return Result{}, errInvalid }}
		w := g.Wrap(p)
		for range 50 {
			w.Execute(t.Context(), guardTool("issue_refund"), callOf("issue_refund"))
		}
		if s := stateOf(g, "issue_refund"); s != "closed" || p.calls.Load() != 50 {
			t.Errorf("after 50 validation errors: %s, %d calls; want closed, 50", s, p.calls.Load())
		}
	})
}

// Half-open lets exactly one probe through; concurrent callers fail fast
// meanwhile instead of queueing behind it.
func TestHalfOpenLetsOneProbeThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := breakerGuard()
		var probing atomic.Bool
		release := make(chan struct{})
		p := &scripted{fn: func(ctx context.Context, n int64) (Result, error) {
			if !probing.Load() {
				return Result{}, errDown
			}
			<-release
			return Result{Output: []byte(`{}`)}, nil
		}}
		w := g.Wrap(p)
		tool := guardTool("lookup_order")
		for range 10 {
			w.Execute(t.Context(), tool, callOf("lookup_order"))
		}
		time.Sleep(11 * time.Second)
		probing.Store(true)
		before := p.calls.Load()
		var wg sync.WaitGroup
		probe := make(chan error, 1)
		wg.Go(func() {
			_, err := w.Execute(t.Context(), tool, callOf("lookup_order"))
			probe <- err
		})
		synctest.Wait() // the probe is inside the provider
		var refused atomic.Int64
		for range 5 {
			wg.Go(func() {
				_, err := w.Execute(t.Context(), tool, callOf("lookup_order"))
				var pe *Error
				if errors.As(err, &pe) && pe.Kind == Unavailable {
					refused.Add(1)
				}
			})
		}
		synctest.Wait()
		if got := p.calls.Load() - before; got != 1 || refused.Load() != 5 {
			t.Errorf("half-open: %d calls reached the provider, %d refused at once; want 1 and 5", got, refused.Load())
		}
		close(release)
		wg.Wait()
		if err := <-probe; err != nil || stateOf(g, "lookup_order") != "closed" {
			t.Errorf("the probe: %v, state %s; want success and closed", err, stateOf(g, "lookup_order"))
		}
	})
}

// A success that started before the breaker opened (an older generation)
// does not close the breaker that opened meanwhile.
func TestLateSuccessDoesNotCloseANewerOpenState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := breakerGuard()
		slow := make(chan struct{})
		p := &scripted{fn: func(ctx context.Context, n int64) (Result, error) {
			if n == 1 {
				<-slow
				return Result{Output: []byte(`{}`)}, nil
			}
			return Result{}, errDown
		}}
		w := g.Wrap(p)
		tool := guardTool("lookup_order")
		done := make(chan error, 1)
		go func() { _, err := w.Execute(t.Context(), tool, callOf("lookup_order")); done <- err }()
		synctest.Wait()
		for range 10 {
			w.Execute(t.Context(), tool, callOf("lookup_order"))
		}
		if stateOf(g, "lookup_order") != "open" {
			t.Fatalf("breaker %s after 10 failures, want open", stateOf(g, "lookup_order"))
		}
		close(slow)
		if err := <-done; err != nil {
			t.Fatalf("the slow call: %v", err)
		}
		if s := stateOf(g, "lookup_order"); s != "open" {
			t.Errorf("a late success closed the breaker: %s, want open", s)
		}
	})
}

// A hanging provider fills only its own tool's bulkhead: a call beyond it
// is refused at once, and another tool keeps answering meanwhile.
func TestBulkheadIsolatesAHangingTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGuard(GuardOptions{Retry: fast, MaxConcurrent: 2})
		p := &scripted{fn: func(ctx context.Context, _ int64) (Result, error) { return Result{Output: []byte(`{}`)}, nil }}
		hang := &scripted{fn: func(ctx context.Context, _ int64) (Result, error) {
			<-ctx.Done()
			return Result{}, ctx.Err()
		}}
		hanging, healthy := g.Wrap(hang), g.Wrap(p)
		slowTool := Tool{Name: "issue_refund", Timeout: time.Minute, MaxAttempts: 1}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { hanging.Execute(ctx, slowTool, callOf("issue_refund")) })
		}
		synctest.Wait()
		_, err := hanging.Execute(t.Context(), slowTool, callOf("issue_refund"))
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != Unavailable || hang.calls.Load() != 2 {
			t.Errorf("third call to the full tool = %v (%d reached it); want Unavailable at once", err, hang.calls.Load())
		}
		for range 20 {
			if _, err := healthy.Execute(t.Context(), guardTool("lookup_order"), callOf("lookup_order")); err != nil {
				t.Fatalf("another tool failed while the first hangs: %v", err)
			}
		}
		cancel()
		wg.Wait()
		if h := g.Health(); h[0].Name != "issue_refund" || h[0].Rejected != 1 {
			t.Errorf("health = %+v, want issue_refund with one rejection", h)
		}
	})
}

// The retry budget: when every call fails, retries add at most the
// configured share of calls (plus the floor), not MaxAttempts times the
// traffic — for fast failures and slow ones alike.
func TestRetryBudgetStopsAFailureLoop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
	}{{"fast failures", 0}, {"slow failures", 300 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := NewGuard(GuardOptions{Retry: fast, RetryShare: 0.2, RetryFloor: 10, MinCalls: 1 << 30})
				p := &scripted{fn: func(ctx context.Context, _ int64) (Result, error) {
					time.Sleep(tc.delay)
					return Result{}, errDown
				}}
				w := g.Wrap(p)
				tool := Tool{Name: "lookup_order", Timeout: time.Second, MaxAttempts: 3}
				for range 100 {
					w.Execute(t.Context(), tool, callOf("lookup_order"))
				}
				// 100 first attempts; retries at most 10 + 0.2 × 100 = 30.
				if got := p.calls.Load(); got > 130 || got < 100 {
					t.Errorf("100 failing calls made %d attempts; want at most 130 (without a budget: 300)", got)
				}
				if h := g.Health()[0]; h.BudgetDenied == 0 {
					t.Errorf("no retry was denied by the budget: %+v", h)
				}
			})
		})
	}
}

// An attempt gets the caller's time left less the reserve; with less than
// the reserve left nothing is sent.
func TestGuardKeepsAReserveOfTheCallersTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGuard(GuardOptions{Retry: fast, Reserve: 100 * time.Millisecond})
		var got time.Duration
		p := &scripted{fn: func(ctx context.Context, _ int64) (Result, error) {
			d, _ := ctx.Deadline()
			got = time.Until(d)
			return Result{}, nil
		}}
		w := g.Wrap(p)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		w.Execute(ctx, Tool{Name: "t", Timeout: time.Minute, MaxAttempts: 1}, callOf("t"))
		if got != 900*time.Millisecond {
			t.Errorf("attempt deadline %v from now, want 900ms (1s less the 100ms reserve)", got)
		}
		short, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel2()
		before := p.calls.Load()
		if _, err := w.Execute(short, Tool{Name: "t", Timeout: time.Minute, MaxAttempts: 1}, callOf("t")); !IsTransient(err) || p.calls.Load() != before {
			t.Errorf("with 50ms left and a 100ms reserve: %v, provider called %v; want a transient refusal without a call", err, p.calls.Load() != before)
		}
	})
}

// One retry layer: the HTTP provider makes one request per Execute; the
// guard in front of it makes the tool's MaxAttempts, not their product.
func TestOneRetryLayer(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{}`)
	})
	tool := webhookTool(srv.URL) // MaxAttempts 3
	if _, err := NewHTTPProvider(nil).Execute(context.Background(), tool, refundCall()); !IsTransient(err) || len(rc.requests()) != 1 {
		t.Fatalf("bare HTTP provider: %v after %d requests; want one request", err, len(rc.requests()))
	}
	if _, err := newTestProvider(nil).Execute(context.Background(), tool, refundCall()); !IsTransient(err) || len(rc.requests()) != 1+3 {
		t.Errorf("guarded HTTP provider made %d requests, want 3", len(rc.requests())-1)
	}
}

// Hedging, when configured, sends a slow read a second attempt beside the
// first and takes the first answer; writes are never hedged.
func TestHedgedReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGuard(GuardOptions{Retry: fast, HedgeAfter: 100 * time.Millisecond})
		p := &scripted{fn: func(ctx context.Context, n int64) (Result, error) {
			if n == 1 { // the first attempt is stuck
				<-ctx.Done()
				return Result{}, &Error{Kind: Transient, Reason: "stuck", Err: ctx.Err()}
			}
			return Result{Output: []byte(`{"n":2}`)}, nil
		}}
		w := g.Wrap(p)
		read := Tool{Name: "lookup_order", Impact: risk.ImpactLow, Timeout: time.Minute, MaxAttempts: 1}
		start := time.Now()
		res, err := w.Execute(t.Context(), read, callOf("lookup_order"))
		if err != nil || string(res.Output) != `{"n":2}` || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("hedged read = %s, %v after %v; want the second attempt's answer after 100ms", res.Output, err, time.Since(start))
		}
		synctest.Wait()
		if h := g.Health()[0]; h.Hedges != 1 {
			t.Errorf("hedges = %d, want 1", h.Hedges)
		}

		p.calls.Store(0)
		write := Tool{Name: "issue_refund", Impact: risk.ImpactHigh, Timeout: 300 * time.Millisecond, MaxAttempts: 1}
		if _, err := w.Execute(t.Context(), write, callOf("issue_refund")); err == nil || p.calls.Load() != 1 {
			t.Errorf("a write was hedged: %d attempts (err %v), want 1", p.calls.Load(), err)
		}
	})
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"
)

// fast keeps the backoff short so retry tests take milliseconds.
var fast = RetryOptions{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond}

func TestRetryRetriesOnlyTransient(t *testing.T) {
	tests := []struct {
		name         string
		errs         []error // the answers of successive attempts; nil is success
		maxAttempts  int
		wantAttempts int
		wantErr      bool
	}{
		{"success at once", []error{nil}, 3, 1, false},
		{"transient then success", []error{&Error{Kind: Transient}, nil}, 3, 2, false},
		{"transient every time", []error{&Error{Kind: Transient}, &Error{Kind: Transient}, &Error{Kind: Transient}, nil}, 3, 3, true},
		{"terminal is not retried", []error{&Error{Kind: Terminal}, nil}, 3, 1, true},
		{"unclassified is not retried", []error{errors.New("boom"), nil}, 3, 1, true},
		{"zero max attempts means one", []error{&Error{Kind: Transient}, nil}, 0, 1, true},
		{"wrapped transient is retried", []error{errors.Join(errors.New("ctx"), &Error{Kind: Transient}), nil}, 3, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			res, attempts, err := fast.Retry(context.Background(), tt.maxAttempts, func(context.Context) (Result, error) {
				err := tt.errs[calls]
				calls++
				if err != nil {
					return Result{}, err
				}
				return Result{Output: json.RawMessage(`{"ok":true}`), Units: 1}, nil
			})
			if attempts != tt.wantAttempts || calls != tt.wantAttempts {
				t.Errorf("attempts = %d (fn called %d times), want %d", attempts, calls, tt.wantAttempts)
			}
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && string(res.Output) != `{"ok":true}` {
				t.Errorf("Output = %s, want the successful attempt's", res.Output)
			}
		})
	}
}

func TestRetryStopsWhenCallerCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, attempts, err := fast.Retry(ctx, 10, func(context.Context) (Result, error) {
		calls++
		cancel()
		return Result{}, &Error{Kind: Transient, Reason: "flaky"}
	})
	if attempts != 1 || calls != 1 {
		t.Errorf("attempts = %d, calls = %d, want 1 after the caller cancelled", attempts, calls)
	}
	if !IsTransient(err) {
		t.Errorf("err = %v, want the last transient error", err)
	}
}

func TestRetryDoesNotSleepPastDeadline(t *testing.T) {
	// The provider asks for 5s before the next attempt, which cannot fit
	// before the caller's deadline, so the first failure is the answer.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	calls := 0
	_, attempts, err := fast.Retry(ctx, 5, func(context.Context) (Result, error) {
		calls++
		return Result{}, &Error{Kind: Transient, Err: &RetryAfterError{Wait: 5 * time.Second}}
	})
	if attempts != 1 || calls != 1 || !IsTransient(err) {
		t.Errorf("attempts = %d, calls = %d, err = %v; want 1, 1, transient", attempts, calls, err)
	}
	if ctx.Err() != nil {
		t.Errorf("Retry slept until the deadline instead of returning at once")
	}
}

// Waits are drawn with full jitter: uniformly from zero up to the
// exponential backoff, so callers that failed together spread out.
func TestRetryWaitsWithFullJitter(t *testing.T) {
	var below, above int
	for range 2000 {
		w := fullJitter(100 * time.Millisecond)
		if w < 0 || w >= 100*time.Millisecond {
			t.Fatalf("fullJitter(100ms) = %v, outside [0, 100ms)", w)
		}
		if w < 50*time.Millisecond {
			below++
		} else {
			above++
		}
	}
	if below < 800 || above < 800 {
		t.Errorf("full jitter is not spread over [0, 100ms): %d below 50ms, %d above", below, above)
	}
}

func TestRetryHonoursRetryAfterCap(t *testing.T) {
	o := fast
	o.MaxRetryAfter = time.Second
	calls := 0
	_, attempts, err := o.Retry(context.Background(), 5, func(context.Context) (Result, error) {
		calls++
		return Result{}, &Error{Kind: Transient, Err: &RetryAfterError{Wait: time.Hour}}
	})
	if attempts != 1 || calls != 1 {
		t.Errorf("attempts = %d, want 1: an hour's Retry-After is handed back, not slept", attempts)
	}
	if wait, ok := RetryAfter(err); !ok || wait != time.Hour {
		t.Errorf("RetryAfter(err) = %v, %v, want 1h, true", wait, ok)
	}
}

// fakeProvider answers from a script and records the calls it saw.
type fakeProvider struct {
	mu      sync.Mutex
	answers []func(ctx context.Context) (Result, error)
	calls   []Call
}

func (f *fakeProvider) Execute(ctx context.Context, _ Tool, call Call) (Result, error) {
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	return f.answers[min(n, len(f.answers)-1)](ctx)
}

type fakeLooker struct{ fakeProvider }

func (f *fakeLooker) Lookup(ctx context.Context, _ Tool, key string) (Result, LookupStatus, error) {
	if _, ok := ctx.Deadline(); !ok {
		return Result{}, LookupUnknown, errors.New("lookup without a deadline")
	}
	return Result{Output: json.RawMessage(`"` + key + `"`)}, LookupCommitted, nil
}

func TestWithRetryReusesTheCall(t *testing.T) {
	transient := func(context.Context) (Result, error) { return Result{}, &Error{Kind: Transient} }
	ok := func(context.Context) (Result, error) { return Result{Output: json.RawMessage(`{}`), Units: 2}, nil }
	f := &fakeProvider{answers: []func(context.Context) (Result, error){transient, transient, ok}}
	p := WithRetry(f, fast)
	call := Call{Tool: "issue_refund", Args: json.RawMessage(`{"order_id":"ORD-1004"}`), IdempotencyKey: "k-1", Tenant: "acme"}
	res, err := p.Execute(context.Background(), Tool{Name: "issue_refund", MaxAttempts: 3, Timeout: time.Second}, call)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if res.Units != 2 {
		t.Errorf("Units = %d, want 2", res.Units)
	}
	if len(f.calls) != 3 {
		t.Fatalf("provider saw %d calls, want 3", len(f.calls))
	}
	for i, c := range f.calls {
		if c.IdempotencyKey != "k-1" || c.Tool != call.Tool || string(c.Args) != string(call.Args) || c.Tenant != call.Tenant {
			t.Errorf("attempt %d got call %+v, want %+v", i+1, c, call)
		}
	}
}

func TestWithRetryTimesOutAttempts(t *testing.T) {
	// The provider ignores classification and just returns the context's
	// error; WithRetry makes a timed-out attempt Transient and retries it.
	hang := func(ctx context.Context) (Result, error) {
		<-ctx.Done()
		return Result{}, ctx.Err()
	}
	f := &fakeProvider{answers: []func(context.Context) (Result, error){hang}}
	_, err := WithRetry(f, fast).Execute(context.Background(), Tool{Name: "slow", MaxAttempts: 2, Timeout: 20 * time.Millisecond}, Call{IdempotencyKey: "k"})
	if !IsTransient(err) {
		t.Errorf("err = %v, want transient", err)
	}
	if len(f.calls) != 2 {
		t.Errorf("provider saw %d calls, want 2", len(f.calls))
	}
}

func TestWithRetryKeepsLooker(t *testing.T) {
	if _, ok := WithRetry(&fakeProvider{}, fast).(Looker); ok {
		t.Errorf("WithRetry(non-Looker) is a Looker; callers would trust a Lookup that cannot answer")
	}
	p := WithRetry(&fakeLooker{}, fast)
	l, ok := p.(Looker)
	if !ok {
		t.Fatalf("WithRetry(Looker) is not a Looker")
	}
	res, status, err := l.Lookup(context.Background(), Tool{Timeout: time.Second}, "k-9")
	if err != nil || status != LookupCommitted || string(res.Output) != `"k-9"` {
		t.Errorf("Lookup = %s, %s, %v; want \"k-9\", committed, nil", res.Output, status, err)
	}
}

func TestCallName(t *testing.T) {
	tests := []struct {
		entry, call string
		want        string
		wantErr     bool
	}{
		{"issue_refund", "issue_refund", "issue_refund", false},
		{"issue_refund", "", "issue_refund", false},
		{"", "lookup_order", "lookup_order", false},
		{"lookup_order", "issue_refund", "", true},
		{"", "", "", true},
	}
	for _, tt := range tests {
		got, err := CallName(Tool{Name: tt.entry}, Call{Tool: tt.call})
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("CallName(%q, %q) = %q, %v; want %q, error %v", tt.entry, tt.call, got, err, tt.want, tt.wantErr)
		}
		if err != nil && IsTransient(err) {
			t.Errorf("CallName(%q, %q) error is transient, want terminal", tt.entry, tt.call)
		}
	}
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// DefaultTimeout bounds one attempt of a tool whose catalog entry sets no
// timeout: every remote call has one.
const DefaultTimeout = 10 * time.Second

// RetryOptions shapes the waits between attempts: exponential backoff
// with full jitter (each wait drawn uniformly from zero to the backoff).
// A zero field means its default, so RetryOptions{} is the policy
// production uses; tests shrink the intervals.
type RetryOptions struct {
	InitialInterval time.Duration // the first backoff; default 50ms
	MaxInterval     time.Duration // cap on a backoff; default 2s
	Multiplier      float64       // growth per retry; default 2

	// MaxRetryAfter is the longest Retry-After the loop sleeps through
	// (default 30s). A provider asking for longer gets its error handed
	// back at once, RetryAfter(err) telling the caller (a job queue, say)
	// when to come back, instead of a worker held asleep.
	MaxRetryAfter time.Duration
}

func (o RetryOptions) withDefaults() RetryOptions {
	if o.InitialInterval <= 0 {
		o.InitialInterval = 50 * time.Millisecond
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = 2 * time.Second
	}
	if o.Multiplier < 1 {
		o.Multiplier = 2
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 30 * time.Second
	}
	return o
}

// Retry runs fn with the default RetryOptions; see RetryOptions.Retry.
func Retry(ctx context.Context, maxAttempts int, fn func(ctx context.Context) (Result, error)) (Result, int, error) {
	return RetryOptions{}.Retry(ctx, maxAttempts, fn)
}

// Retry calls fn until it succeeds, fails with an error that is not
// Transient, has been called maxAttempts times (at least once), or ctx
// leaves no time for another attempt. It returns the last result and
// error and how many attempts were made.
//
// fn must reuse the same idempotency key on every attempt: Retry cannot
// see it, so the closure owns that promise. Only Transient errors are
// retried (IsTransient). Between attempts Retry waits an exponential
// backoff with full jitter, or longer when the error carries a
// Retry-After (RetryAfter). It does not sleep when the wait would outlast
// ctx's deadline or MaxRetryAfter: the last error is returned at once,
// since an attempt that cannot start in time is not worth waiting for.
//
// Tool calls retry in one place only, Guard.Wrap, which adds a retry
// budget; Retry is the loop it uses.
func (o RetryOptions) Retry(ctx context.Context, maxAttempts int, fn func(ctx context.Context) (Result, error)) (Result, int, error) {
	return o.retry(ctx, maxAttempts, nil, fn)
}

// retry is Retry with mayRetry, asked before each retry (a retry budget);
// nil allows every retry.
func (o RetryOptions) retry(ctx context.Context, maxAttempts int, mayRetry func() bool, fn func(ctx context.Context) (Result, error)) (Result, int, error) {
	o = o.withDefaults()
	maxAttempts = max(maxAttempts, 1)
	b := &backoff.ExponentialBackOff{
		InitialInterval:     o.InitialInterval,
		RandomizationFactor: 0, // full jitter is drawn below
		Multiplier:          o.Multiplier,
		MaxInterval:         o.MaxInterval,
	}
	b.Reset()

	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for attempt := 1; ; attempt++ {
		res, err := fn(ctx)
		if err == nil || !IsTransient(err) || attempt >= maxAttempts || ctx.Err() != nil {
			return res, attempt, err
		}

		wait := fullJitter(b.NextBackOff())
		if ra, ok := RetryAfter(err); ok {
			if ra > o.MaxRetryAfter {
				return res, attempt, err
			}
			wait = max(wait, ra)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= wait {
			return res, attempt, err
		}
		if mayRetry != nil && !mayRetry() {
			return res, attempt, err
		}

		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return res, attempt, err
		}
	}
}

// RetryAfterError carries a provider's "not before" hint (an HTTP
// Retry-After) as the Err of a Transient *Error.
type RetryAfterError struct {
	Wait time.Duration
}

func (e *RetryAfterError) Error() string { return fmt.Sprintf("retry after %s", e.Wait) }

// RetryAfter reports the wait a provider asked for before the next
// attempt, if err carries one.
func RetryAfter(err error) (time.Duration, bool) {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.Wait, true
	}
	return 0, false
}

// attemptContext bounds one attempt by timeout (DefaultTimeout when not
// positive). The caller's deadline still wins when it is sooner, and
// cancelling ctx cancels the attempt.
func attemptContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// contextError classifies an attempt that ended because a context did:
// the caller's (cancelled, or its deadline passed) or the attempt's own
// timeout. Both are Transient, since the call may still succeed with the
// same key; the caller's error stays reachable with errors.Is. It returns
// nil when neither context is done.
func contextError(ctx, attemptCtx context.Context, timeout time.Duration, err error) *Error {
	switch {
	case ctx.Err() != nil:
		return &Error{Kind: Transient, Reason: "call abandoned by the caller", Err: context.Cause(ctx)}
	case attemptCtx.Err() != nil:
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		return &Error{Kind: Transient, Reason: fmt.Sprintf("no answer within %s", timeout), Err: err}
	}
	return nil
}

// CallName is the tool a call runs: call.Tool, or t.Name when the call
// leaves it empty. A call naming another tool than the catalog entry it
// is executed under is refused (Terminal), since the entry's policy —
// impact, timeout, kill switch — would not be the one that applies.
func CallName(t Tool, call Call) (string, error) {
	switch {
	case call.Tool == "" && t.Name == "":
		return "", &Error{Kind: Terminal, Reason: "call names no tool"}
	case call.Tool == "":
		return t.Name, nil
	case t.Name != "" && call.Tool != t.Name:
		return "", &Error{Kind: Terminal, Reason: fmt.Sprintf("call for tool %q executed under catalog entry %q", call.Tool, t.Name)}
	}
	return call.Tool, nil
}

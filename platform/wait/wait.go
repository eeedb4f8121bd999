// Package wait is how tests wait for something another goroutine, process
// or replica does: they poll a condition until it holds, with a deadline,
// instead of sleeping for a guessed time. A test that sleeps is slow when
// the guess is long and flaky when the machine is slower than the guess;
// a poll returns as soon as the condition holds and fails, naming what it
// waited for, only when the deadline passes.
//
// It is a package (not a _test.go helper) so every package's tests share
// one implementation.
package wait

import (
	"testing"
	"time"
)

// Interval is how often For checks its condition.
const Interval = 10 * time.Millisecond

// For checks cond every Interval until it holds or within has passed, and
// reports whether it held. cond is checked once more at the deadline.
func For(within time.Duration, cond func() bool) bool {
	return ForEvery(within, Interval, cond)
}

// ForEvery is For checking every interval: a benchmark timing what it
// waits for polls more often, a condition that costs a page load less.
func ForEvery(within, interval time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
			if cond() {
				return true
			}
		}
	}
}

// Until is For that fails t (and stops the test) when cond does not hold
// within the time, saying what it waited for.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !For(within, cond) {
		t.Fatalf("waited %v for %s", within, what)
	}
}

// Holds checks that cond keeps holding for the whole of d (checked every
// Interval), failing t at the first check it does not: how a test asserts
// that something does not happen (a job does not run twice) over the
// time in which it would have.
func Holds(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !cond() {
		t.Fatalf("%s does not hold", what)
	}
	end := time.NewTimer(d)
	defer end.Stop()
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		select {
		case <-end.C:
			if !cond() {
				t.Fatalf("%s stopped holding within %v", what, d)
			}
			return
		case <-tick.C:
			if !cond() {
				t.Fatalf("%s stopped holding within %v", what, d)
			}
		}
	}
}

package web

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// failureLimiter bounds how many refused sign-ins one client address
// writes to the audit trail: a burst, then one event per failureEvery;
// what it holds back is summed up in one event per summaryEvery. Refused
// sign-ins are still logged one by one. Without it, anyone could grow the
// append-only chain at will with forged callbacks.
type failureLimiter struct {
	mu    sync.Mutex
	addrs map[string]*addrFailures
}

type addrFailures struct {
	lim         *rate.Limiter
	suppressed  int
	lastSummary time.Time
	lastSeen    time.Time
}

const (
	failureBurst   = 10
	failureEvery   = 6 * time.Second // refills the burst in a minute
	summaryEvery   = time.Minute
	maxFailureKeys = 10000 // addresses remembered; past it, idle ones are dropped
	failureIdle    = 10 * time.Minute
	overflowKey    = "overflow"
)

func newFailureLimiter() *failureLimiter {
	return &failureLimiter{addrs: map[string]*addrFailures{}}
}

// allow counts one refused sign-in from addr at now. write says whether to
// write it as its own audit event; summary, when above zero, is a count of
// held-back refusals to write now as one summary event.
func (l *failureLimiter) allow(addr string, now time.Time) (write bool, summary int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.entry(addr, now)
	a.lastSeen = now
	if a.lim.AllowN(now, 1) {
		return true, 0
	}
	a.suppressed++
	if now.Sub(a.lastSummary) >= summaryEvery {
		summary, a.suppressed, a.lastSummary = a.suppressed, 0, now
	}
	return false, summary
}

// flush returns the held-back counts whose summary is due at now (one
// number per address) and forgets addresses idle for long.
func (l *failureLimiter) flush(now time.Time) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	for addr, a := range l.addrs {
		if a.suppressed > 0 && now.Sub(a.lastSummary) >= summaryEvery {
			out = append(out, a.suppressed)
			a.suppressed, a.lastSummary = 0, now
		}
		if a.suppressed == 0 && now.Sub(a.lastSeen) > failureIdle {
			delete(l.addrs, addr)
		}
	}
	return out
}

// entry is addr's record; the caller holds l.mu. When too many addresses
// are remembered, idle ones go, and if none is idle the newcomers share one
// record: the audit trail stays bounded either way.
func (l *failureLimiter) entry(addr string, now time.Time) *addrFailures {
	if a, ok := l.addrs[addr]; ok {
		return a
	}
	if len(l.addrs) >= maxFailureKeys {
		for k, a := range l.addrs {
			if a.suppressed == 0 && now.Sub(a.lastSeen) > failureIdle {
				delete(l.addrs, k)
			}
		}
		if len(l.addrs) >= maxFailureKeys {
			addr = overflowKey
			if a, ok := l.addrs[addr]; ok {
				return a
			}
		}
	}
	a := &addrFailures{lim: rate.NewLimiter(rate.Every(failureEvery), failureBurst)}
	l.addrs[addr] = a
	return a
}

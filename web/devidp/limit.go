package devidp

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Sign-in attempts at the picker are limited per client address and per
// user name, each a burst and then a steady rate. Each key has its own
// budget, so one address (or one name) hammering the picker is refused
// while everyone else signs in as usual.
const (
	addrBurst = 60
	addrEvery = time.Second
	userBurst = 20
	userEvery = 3 * time.Second

	maxLimiterKeys = 10000
)

// attempts are the limiters, keyed "addr:…" and "user:…".
type attempts struct {
	mu   sync.Mutex
	keys map[string]*rate.Limiter
}

func newAttempts() *attempts { return &attempts{keys: map[string]*rate.Limiter{}} }

// allow counts one attempt from addr as username at now. The name's budget
// is spent only when the address may try at all, so one address cannot
// use up anyone's budget faster than its own allows.
func (a *attempts) allow(addr, username string, now time.Time) (ok bool, retryAfter time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	byAddr := a.limiter("addr:"+addr, addrEvery, addrBurst, now)
	if !byAddr.AllowN(now, 1) {
		return false, addrEvery
	}
	if username == "" {
		return true, 0
	}
	if !a.limiter("user:"+username, userEvery, userBurst, now).AllowN(now, 1) {
		return false, userEvery
	}
	return true, 0
}

// limiter is key's limiter; the caller holds a.mu. Full limiters are
// forgotten when too many keys are remembered (a full one allows the
// whole burst again, which forgetting it does too).
func (a *attempts) limiter(key string, every time.Duration, burst int, now time.Time) *rate.Limiter {
	if l, ok := a.keys[key]; ok {
		return l
	}
	if len(a.keys) >= maxLimiterKeys {
		for k, l := range a.keys {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(a.keys, k)
			}
		}
	}
	l := rate.NewLimiter(rate.Every(every), burst)
	a.keys[key] = l
	return l
}

// tooMany answers a refused attempt.
func (p *Provider) tooMany(w http.ResponseWriter, r *http.Request, retryAfter time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter.Round(time.Second).Seconds())))
	p.log.WarnContext(r.Context(), "devidp: sign-in attempts rate limited")
	p.render(w, r, http.StatusTooManyRequests, pageData{Title: "Too many sign-in attempts",
		Message: "Too many sign-in attempts from this address or for this user. Wait a little, then go back to Warden and sign in again."})
}

// remoteAddr is the peer's address, never a header a client sets.
func remoteAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

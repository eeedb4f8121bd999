package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	gsessions "github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/sessions"
)

// Two cookies, both HttpOnly and SameSite=Lax, Secure under https:
//
//   - the session cookie holds only a random token naming a row of the
//     sessions table (package sessions): who is signed in lives on the
//     server, so sign-out and revocation end a session at once;
//   - the flow cookie, signed and encrypted (gorilla), holds what must
//     survive a redirect before anyone is signed in: the sign-ins in
//     progress, keyed by state, and one-time messages (handlers.Flash).
//
// Under an https public URL the names carry the __Host- prefix, which makes
// browsers refuse them unless Secure, for this exact host, and Path=/: a
// sibling subdomain cannot plant or shadow them. Over plain http (the
// loopback development mode) browsers reject __Host- cookies, so the plain
// names are used there.
const (
	sessionCookieName = "warden_session"
	flowCookieName    = "warden_flow"
	hostPrefix        = "__Host-"

	// loginMaxAge bounds each sign-in in progress: from the redirect to
	// the provider until its callback.
	loginMaxAge = 10 * time.Minute
	// maxPendingLogins is how many sign-ins one browser may have in
	// progress at once (one per tab); the oldest gives way.
	maxPendingLogins = 5
	// flowMaxAge is the flow cookie's lifetime.
	flowMaxAge = time.Hour

	flowLogins = "logins" // JSON of map[state]pendingLogin
	flowFlash  = "flash:"
)

func cookieName(base string, secure bool) string {
	if secure {
		return hostPrefix + base
	}
	return base
}

// sessionKeys are the server keys: hash signs the flow cookie and derives
// CSRF tokens, block encrypts the flow cookie.
type sessionKeys struct {
	Hash  string `json:"hash"`
	Block string `json:"block"`
}

// loadOrCreateSessionKeys returns the configured keys, or the keys kept in
// dir/session.keys (mode 0600), generating them on first start.
func loadOrCreateSessionKeys(dir string, hash, block []byte) ([]byte, []byte, error) {
	if hash != nil && block != nil {
		return hash, block, nil
	}
	path := filepath.Join(dir, "session.keys")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		hash, block = make([]byte, 64), make([]byte, 32)
		rand.Read(hash)
		rand.Read(block)
		k := sessionKeys{Hash: hex.EncodeToString(hash), Block: hex.EncodeToString(block)}
		out, _ := json.Marshal(k)
		if err := os.WriteFile(path, out, 0o600); err != nil {
			return nil, nil, fmt.Errorf("write session keys: %w", err)
		}
		return hash, block, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read session keys: %w", err)
	}
	var k sessionKeys
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, nil, fmt.Errorf("session keys file %s is damaged: %w", path, err)
	}
	hash, err1 := hex.DecodeString(k.Hash)
	block, err2 := hex.DecodeString(k.Block)
	if err1 != nil || err2 != nil || len(hash) < 32 || len(block) != 32 {
		return nil, nil, fmt.Errorf("session keys file %s is damaged", path)
	}
	return hash, block, nil
}

// newFlowStore returns the store of the flow cookie: signed (HMAC) and
// encrypted (AES-256), HttpOnly, SameSite=Lax and Secure under https.
func newFlowStore(hash, block []byte, secure bool) *gsessions.CookieStore {
	st := gsessions.NewCookieStore(hash, block)
	st.Options = &gsessions.Options{
		Path:     "/",
		MaxAge:   int(flowMaxAge.Seconds()),
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	st.MaxAge(int(flowMaxAge.Seconds()))
	return st
}

// setSessionCookie gives the browser a new session's token.
func (s *Server) setSessionCookie(c echo.Context, token string) {
	c.SetCookie(&http.Cookie{
		Name:     s.sessionCookie,
		Value:    token,
		Path:     "/",
		MaxAge:   int(s.policy.Max.Seconds()),
		HttpOnly: true,
		Secure:   s.cfg.Secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// clearSessionCookie tells the browser to forget its session cookie; the
// session itself is ended on the server, so a copy kept elsewhere opens
// nothing either.
func (s *Server) clearSessionCookie(c echo.Context) {
	c.SetCookie(&http.Cookie{
		Name:     s.sessionCookie,
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   s.cfg.Secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// currentSession is the request's live session, or nil.
func currentSession(c echo.Context) *sessions.Session {
	sess, _ := c.Get(keySession).(*sessions.Session)
	return sess
}

// csrfToken is the CSRF token of a session: an HMAC of its id under the
// server key. Another session's token (planted together with a cookie by
// a sibling site, say) never matches, and nothing in the browser can make
// one without the key.
func (s *Server) csrfToken(sessionID string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("warden csrf\x00"))
	m.Write([]byte(sessionID))
	return hex.EncodeToString(m.Sum(nil))
}

// flow returns the request's flow cookie, decoding it once. A cookie that
// fails to decode (tampered, old keys) is a new, empty one.
func (s *Server) flow(c echo.Context) *gsessions.Session {
	if f, ok := c.Get(keyFlow).(*gsessions.Session); ok {
		return f
	}
	f, err := s.flows.Get(c.Request(), s.flowCookie)
	if err != nil {
		f, _ = s.flows.New(c.Request(), s.flowCookie)
	}
	c.Set(keyFlow, f)
	return f
}

// pendingLogin is one sign-in in progress: what the callback must match.
type pendingLogin struct {
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"x,omitempty"`
	// Started is when the sign-in began, in unix nanoseconds: several
	// tabs start within one second, and the oldest must give way.
	Started int64 `json:"ns"`
	// StartedSec is the whole-second start a cookie written before
	// Started existed carries; pendingLogins reads it into Started.
	StartedSec int64 `json:"t,omitempty"`
}

func (p pendingLogin) live(now time.Time) bool {
	return now.Sub(time.Unix(0, p.Started)) < loginMaxAge
}

// pendingLogins reads the sign-ins in progress, dropping expired ones.
func pendingLogins(f *gsessions.Session, now time.Time) map[string]pendingLogin {
	m := map[string]pendingLogin{}
	if raw, ok := f.Values[flowLogins].(string); ok {
		_ = json.Unmarshal([]byte(raw), &m)
	}
	for state, p := range m {
		if p.Started == 0 && p.StartedSec != 0 {
			p.Started, p.StartedSec = time.Unix(p.StartedSec, 0).UnixNano(), 0
			m[state] = p
		}
		if !p.live(now) {
			delete(m, state)
		}
	}
	return m
}

func setPendingLogins(f *gsessions.Session, m map[string]pendingLogin) {
	evictOldest(m)
	if len(m) == 0 {
		delete(f.Values, flowLogins)
		return
	}
	raw, _ := json.Marshal(m)
	f.Values[flowLogins] = string(raw)
}

// evictOldest drops the sign-ins started first until at most
// maxPendingLogins remain. Equal start times (a clock that did not move)
// are ordered by state, so the choice never depends on the map's order.
func evictOldest(m map[string]pendingLogin) {
	for len(m) > maxPendingLogins {
		oldest := ""
		for state, p := range m {
			if o, ok := m[oldest]; !ok || p.Started < o.Started || (p.Started == o.Started && state < oldest) {
				oldest = state
			}
		}
		delete(m, oldest)
	}
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// clientAddr is the address the request came from: the peer's, never a
// header a client can set (X-Forwarded-For would let anyone pick the key
// of a rate limit).
func clientAddr(c echo.Context) string {
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		return c.Request().RemoteAddr
	}
	return host
}

// sessionFlash keeps one-time values in the signed, encrypted flow cookie
// (handlers.Flash).
type sessionFlash struct{ s *Server }

func (f sessionFlash) Put(c echo.Context, key, value string) error {
	fl := f.s.flow(c)
	fl.Values[flowFlash+key] = value
	return fl.Save(c.Request(), c.Response())
}

func (f sessionFlash) Take(c echo.Context, key string) (string, error) {
	fl := f.s.flow(c)
	v, _ := fl.Values[flowFlash+key].(string)
	if v == "" {
		return "", nil
	}
	delete(fl.Values, flowFlash+key)
	return v, fl.Save(c.Request(), c.Response())
}

package web

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/identity"
)

const (
	sessionCookie = "warden_session"
	sessionMaxAge = 12 * time.Hour
	loginMaxAge   = 10 * time.Minute

	// Session value keys.
	sessPrincipal = "principal" // JSON of identity.Principal
	sessID        = "sid"       // random id, new at every login
	sessLoginAt   = "login_at"  // unix seconds
	sessState     = "oidc_state"
	sessNonce     = "oidc_nonce"
	sessVerifier  = "oidc_verifier"
	sessNext      = "oidc_next"
	sessStarted   = "oidc_started" // unix seconds
)

// sessionKeys are the signing (hash) and encryption (block) keys of the
// session cookie.
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

// newSessionStore returns a cookie store whose cookies are signed (HMAC)
// and encrypted (AES-256), HttpOnly, SameSite=Lax and Secure under https.
func newSessionStore(hash, block []byte, secure bool) *sessions.CookieStore {
	st := sessions.NewCookieStore(hash, block)
	st.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   int(sessionMaxAge.Seconds()),
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	st.MaxAge(int(sessionMaxAge.Seconds()))
	return st
}

// sessionPrincipal returns the principal stored in the session, or nil.
func sessionPrincipal(s *sessions.Session) *identity.Principal {
	raw, ok := s.Values[sessPrincipal].(string)
	if !ok || raw == "" {
		return nil
	}
	if at, ok := s.Values[sessLoginAt].(int64); !ok || time.Since(time.Unix(at, 0)) > sessionMaxAge {
		return nil
	}
	var p identity.Principal
	if err := json.Unmarshal([]byte(raw), &p); err != nil || p.ID == "" {
		return nil
	}
	return &p
}

// clearSession removes every value: the start of a login (rotation) and a
// logout both begin here.
func clearSession(s *sessions.Session) {
	for k := range s.Values {
		delete(s.Values, k)
	}
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// sessionFlash keeps one-time values in the signed, encrypted session
// cookie (handlers.Flash).
type sessionFlash struct{ s *Server }

func (f sessionFlash) Put(c echo.Context, key, value string) error {
	sess := f.s.session(c)
	sess.Values["flash:"+key] = value
	return sess.Save(c.Request(), c.Response())
}

func (f sessionFlash) Take(c echo.Context, key string) (string, error) {
	sess := f.s.session(c)
	v, _ := sess.Values["flash:"+key].(string)
	if v == "" {
		return "", nil
	}
	delete(sess.Values, "flash:"+key)
	return v, sess.Save(c.Request(), c.Response())
}

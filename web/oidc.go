package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/wardenhq/warden/identity"
)

// authenticator runs the OIDC authorization-code flow with PKCE, state and
// nonce. The provider is discovered once; until discovery succeeds it is
// retried in the background and sign-in is unavailable.
type authenticator struct {
	issuer       string
	clientID     string
	clientSecret string
	redirectURL  string
	groupsClaim  string
	grants       identity.Grants
	client       *http.Client
	log          *slog.Logger

	mu       sync.RWMutex
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
	lastErr  error
}

func (a *authenticator) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, a.client)
}

// ready reports whether the provider has been discovered.
func (a *authenticator) ready() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.oauth != nil
}

// discover tries discovery until it succeeds or ctx ends, backing off from
// 200 ms to 30 s between attempts.
func (a *authenticator) discover(ctx context.Context) {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := a.discoverOnce(ctx)
		if err == nil {
			a.log.Info("identity provider discovered", "issuer", a.issuer, "attempts", attempt)
			return
		}
		a.mu.Lock()
		a.lastErr = err
		a.mu.Unlock()
		if attempt == 1 || attempt%10 == 0 {
			a.log.Warn("identity provider unreachable; retrying", "issuer", a.issuer, "attempt", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 30*time.Second)
	}
}

func (a *authenticator) discoverOnce(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(a.ctx(dctx), a.issuer)
	if err != nil {
		return err
	}
	// The key set must outlive the discovery request's context.
	keys := oidc.NewRemoteKeySet(a.ctx(context.Background()), jwksURL(p))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.verifier = oidc.NewVerifier(a.issuer, keys, &oidc.Config{ClientID: a.clientID})
	a.oauth = &oauth2.Config{
		ClientID:     a.clientID,
		ClientSecret: a.clientSecret,
		Endpoint:     p.Endpoint(),
		RedirectURL:  a.redirectURL,
		Scopes:       []string{oidc.ScopeOpenID, "profile", "email", "groups"},
	}
	a.lastErr = nil
	return nil
}

func jwksURL(p *oidc.Provider) string {
	var claims struct {
		JWKSURI string `json:"jwks_uri"`
	}
	_ = p.Claims(&claims)
	return claims.JWKSURI
}

// loginStart is what the login redirect needs remembered in the session.
type loginStart struct {
	state, nonce, verifier string
	authURL                string
}

// start prepares a new login: fresh state, nonce and PKCE verifier.
func (a *authenticator) start() (loginStart, error) {
	a.mu.RLock()
	cfg := a.oauth
	a.mu.RUnlock()
	if cfg == nil {
		return loginStart{}, errProviderUnavailable
	}
	ls := loginStart{state: randomToken(), nonce: randomToken(), verifier: oauth2.GenerateVerifier()}
	ls.authURL = cfg.AuthCodeURL(ls.state, oidc.Nonce(ls.nonce), oauth2.S256ChallengeOption(ls.verifier))
	return ls, nil
}

var errProviderUnavailable = errors.New("identity provider unavailable")

// loginError is a refused login: a short reason for the audit trail and a
// sentence for the user.
type loginError struct {
	Reason string // stable code: state_mismatch, nonce_mismatch, ...
	Detail string // what the library said, free of tokens and codes
	User   string
}

func (e *loginError) Error() string { return e.Reason + ": " + e.Detail }

func refuse(reason, detail, user string) *loginError {
	return &loginError{Reason: reason, Detail: detail, User: user}
}

// pendingLogin is what the session remembered at the start of the login.
type pendingLogin struct {
	state, nonce, verifier string
}

// finish checks the callback against the pending login, redeems the code
// and verifies the ID token. It returns the principal (without its Warden
// id) or a *loginError.
func (a *authenticator) finish(ctx context.Context, pending pendingLogin, r *http.Request) (identity.Principal, error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return identity.Principal{}, refuse("provider_error", safeCode(e), "The identity provider did not sign you in ("+safeCode(e)+").")
	}
	if pending.state == "" {
		return identity.Principal{}, refuse("no_login_in_progress", "callback without a pending login", "That sign-in link has expired or was already used. Please sign in again.")
	}
	if !equalSecret(q.Get("state"), pending.state) {
		return identity.Principal{}, refuse("state_mismatch", "state parameter does not match the session", "The sign-in response did not match this browser session. Please sign in again.")
	}
	code := q.Get("code")
	if code == "" {
		return identity.Principal{}, refuse("missing_code", "callback without an authorization code", "The identity provider sent no authorization code.")
	}
	a.mu.RLock()
	cfg, verifier := a.oauth, a.verifier
	a.mu.RUnlock()
	if cfg == nil {
		return identity.Principal{}, refuse("provider_unavailable", "provider not discovered", "The identity provider is unreachable.")
	}
	xctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	tok, err := cfg.Exchange(a.ctx(xctx), code, oauth2.VerifierOption(pending.verifier))
	if err != nil {
		return identity.Principal{}, refuse("code_exchange_failed", exchangeDetail(err), "The identity provider refused to redeem the sign-in code (it may have been used already). Please sign in again.")
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return identity.Principal{}, refuse("missing_id_token", "token response carried no id_token", "The identity provider sent no ID token.")
	}
	idt, err := verifier.Verify(a.ctx(xctx), raw)
	if err != nil {
		return identity.Principal{}, refuse(verifyReason(err), verifyDetail(err), "The identity provider's ID token could not be verified.")
	}
	if !equalSecret(idt.Nonce, pending.nonce) {
		return identity.Principal{}, refuse("nonce_mismatch", "ID token nonce does not match the session", "The ID token was not issued for this sign-in. Please sign in again.")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return identity.Principal{}, refuse("bad_claims", "ID token claims are not a JSON object", "The ID token could not be read.")
	}
	p := identity.Principal{Issuer: idt.Issuer, Subject: idt.Subject}
	p.Email, _ = claims["email"].(string)
	p.Name, _ = claims["name"].(string)
	if p.Name == "" {
		p.Name, _ = claims["preferred_username"].(string)
	}
	p.Roles, p.Tenants = a.grants.Apply(stringList(claims[a.groupsClaim]))
	return p, nil
}

// stringList reads a groups claim that is a list of strings or one string.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func equalSecret(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// safeCode keeps an OAuth error code printable and short: it comes from the
// query string and goes into the audit trail and the page.
func safeCode(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

func exchangeDetail(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return "token endpoint answered " + safeCode(re.ErrorCode)
		}
		return fmt.Sprintf("token endpoint answered HTTP %d", re.Response.StatusCode)
	}
	return "token endpoint unreachable"
}

func verifyReason(err error) string {
	var exp *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &exp):
		return "token_expired"
	case strings.Contains(msg, "audience"):
		return "wrong_audience"
	case strings.Contains(msg, "issuer"), strings.Contains(msg, "different provider"):
		return "wrong_issuer"
	case strings.Contains(msg, "signature"):
		return "bad_signature"
	default:
		return "invalid_id_token"
	}
}

// verifyDetail is go-oidc's message; it names claims and times, never the
// token itself.
func verifyDetail(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}

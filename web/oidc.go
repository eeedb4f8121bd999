package web

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/platform/identity"
)

// authenticator runs the OIDC authorization-code flow with PKCE, state and
// nonce. The provider is discovered at start-up; until discovery succeeds
// it is retried in the background and sign-in is unavailable. Discovery is
// read again when an ID token comes signed with an algorithm it did not
// list (verify). An issuer that
// does not match what the provider calls itself is told apart from an
// unreachable provider (providerStatus).
type authenticator struct {
	issuer       string
	clientID     string
	clientSecret string
	redirectURL  string
	groupsClaim  string
	scopes       []string
	tokenAuth    string // config.TokenAuth*, or "" to follow discovery
	grants       identity.Grants
	client       *http.Client
	log          *slog.Logger

	mu         sync.RWMutex
	oauth      *oauth2.Config
	verifier   *oidc.IDTokenVerifier
	authStyle  string   // the token endpoint method in use: config.TokenAuthBasic, Post or Auto
	algs       []string // the ID-token algorithms the verifier accepts, from discovery
	endSession string   // the provider's end_session_endpoint, "" when it has none
	lastErr    error
	mismatch   *oidc.IssuerMismatchError

	// The discovery attempts of discover: how many ended, whether one is
	// running, and a channel closed when the running (or first) one ends.
	// A sign-in started meanwhile waits for it, up to discoveryWait
	// (0: defaultDiscoveryWait).
	attempts      int
	attempting    bool
	attemptDone   chan struct{}
	discoveryWait time.Duration

	probeMu  sync.Mutex
	probedAt time.Time
	probeErr error

	// rereadMu makes concurrent sign-ins that meet an algorithm the
	// discovery did not list re-read it once; rereadAt rate-limits that.
	rereadMu sync.Mutex
	rereadAt time.Time
}

// probeEvery bounds how often reachable asks a provider that failed.
const probeEvery = 5 * time.Second

// reachable reports whether the provider answers its discovery document
// now (within 2 s). Sign-in checks it
// before sending the browser away, so a provider that went down after
// discovery gets a clear page from Warden rather than the browser's
// connection error; existing sessions never need the provider.
func (a *authenticator) reachable(ctx context.Context) error {
	a.probeMu.Lock()
	defer a.probeMu.Unlock()
	// A failure is remembered for a moment, so a down provider is not
	// asked at every click; a success is not (sign-ins are rare).
	if a.probeErr != nil && time.Since(a.probedAt) < probeEvery {
		return a.probeErr
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, strings.TrimSuffix(a.issuer, "/")+"/.well-known/openid-configuration", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = a.client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("discovery answered %d", resp.StatusCode)
			}
		}
	}
	a.probedAt, a.probeErr = time.Now(), err
	return err
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

// Provider states, as /readyz details and the sign-in page report them.
const (
	providerOK             = "ok"
	providerUnreachable    = "unreachable"
	providerIssuerMismatch = "issuer_mismatch"
)

// providerStatus says whether sign-in works and, when not, why: the
// provider cannot be reached, or it calls itself by another issuer than
// WARDEN_OIDC_ISSUER (which no amount of retrying fixes).
type providerStatus struct {
	State      string // providerOK, providerUnreachable, providerIssuerMismatch
	Discovered string // the issuer the provider announced, on a mismatch
	Err        error  // the last discovery error
}

func (a *authenticator) status() providerStatus {
	a.mu.RLock()
	defer a.mu.RUnlock()
	switch {
	case a.oauth != nil:
		return providerStatus{State: providerOK}
	case a.mismatch != nil:
		return providerStatus{State: providerIssuerMismatch, Discovered: a.mismatch.Discovered, Err: a.lastErr}
	default:
		return providerStatus{State: providerUnreachable, Err: a.lastErr}
	}
}

// discover tries discovery until it succeeds or ctx ends, backing off from
// 200 ms to 30 s between attempts. An issuer mismatch is logged as an
// error naming both issuers, since it is a configuration mistake, not an
// outage; discovery keeps trying in case the provider is the one fixed.
func (a *authenticator) discover(ctx context.Context) {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		a.mu.Lock()
		a.attempting = true
		a.mu.Unlock()
		err := a.discoverOnce(ctx)
		if err == nil {
			a.endAttempt()
			a.log.Info("identity provider discovered", "issuer", a.issuer, "attempts", attempt)
			return
		}
		var mismatch *oidc.IssuerMismatchError
		isMismatch := errors.As(err, &mismatch)
		a.mu.Lock()
		a.lastErr = err
		a.mismatch = nil
		if isMismatch {
			a.mismatch = mismatch
		}
		a.mu.Unlock()
		a.endAttempt()
		if attempt == 1 || attempt%10 == 0 {
			if isMismatch {
				a.log.Error("identity provider issuer mismatch: WARDEN_OIDC_ISSUER must be exactly the issuer the provider announces (mind a trailing slash); sign-in is unavailable",
					"configured", mismatch.Provided, "announced", mismatch.Discovered, "attempt", attempt)
			} else {
				a.log.Warn("identity provider unreachable; retrying", "issuer", a.issuer, "attempt", attempt, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 30*time.Second)
	}
}

// endAttempt records that a discovery attempt ended and wakes the
// sign-ins waiting for it.
func (a *authenticator) endAttempt() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.attempting = false
	a.attempts++
	if a.attemptDone != nil {
		close(a.attemptDone)
		a.attemptDone = nil
	}
}

// defaultDiscoveryWait bounds how long a sign-in waits for a discovery in
// progress.
const defaultDiscoveryWait = 5 * time.Second

// oauthConfig is the discovered client configuration. Before the provider
// is discovered, a sign-in started while the first discovery (or a retry)
// is under way waits for that attempt to end, up to discoveryWait, so a
// sign-in right after start-up is not turned away; with a known issuer
// mismatch, or between retries of a provider that failed, it does not
// wait. It returns errProviderUnavailable when there is no configuration.
func (a *authenticator) oauthConfig(ctx context.Context) (*oauth2.Config, error) {
	a.mu.Lock()
	cfg := a.oauth
	inProgress := a.attempting || a.attempts == 0
	if cfg != nil || a.mismatch != nil || !inProgress {
		a.mu.Unlock()
		if cfg == nil {
			return nil, errProviderUnavailable
		}
		return cfg, nil
	}
	if a.attemptDone == nil {
		a.attemptDone = make(chan struct{})
	}
	done, wait := a.attemptDone, a.discoveryWait
	a.mu.Unlock()
	if wait <= 0 {
		wait = defaultDiscoveryWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.oauth == nil {
		return nil, errProviderUnavailable
	}
	return a.oauth, nil
}

// discovery is what Warden reads from the discovery document beyond what
// go-oidc keeps.
type discovery struct {
	Algs            []string `json:"id_token_signing_alg_values_supported"`
	EndSession      string   `json:"end_session_endpoint"`
	TokenAuth       []string `json:"token_endpoint_auth_methods_supported"`
	ScopesSupported []string `json:"scopes_supported"`
}

func (a *authenticator) discoverOnce(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(a.ctx(dctx), a.issuer)
	if err != nil {
		return err
	}
	var d discovery
	_ = p.Claims(&d)
	for _, sc := range a.scopes {
		if len(d.ScopesSupported) > 0 && !slices.Contains(d.ScopesSupported, sc) {
			a.log.Warn("the identity provider does not list a scope Warden asks for; if sign-in is refused, change WARDEN_OIDC_SCOPES",
				"scope", sc, "scopes_supported", strings.Join(d.ScopesSupported, " "))
		}
	}
	style := a.tokenAuth
	if style == "" {
		style = tokenAuthFromDiscovery(d.TokenAuth)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// The verifier accepts the algorithms the provider advertises
	// (id_token_signing_alg_values_supported), not only RS256; its key set
	// must outlive the discovery request's context.
	a.verifier = p.VerifierContext(a.ctx(context.Background()), &oidc.Config{ClientID: a.clientID})
	a.oauth = &oauth2.Config{
		ClientID:     a.clientID,
		ClientSecret: a.clientSecret,
		Endpoint:     p.Endpoint(),
		RedirectURL:  a.redirectURL,
		Scopes:       a.scopes,
	}
	a.authStyle = style
	a.algs = verifierAlgs(d.Algs)
	a.endSession = d.EndSession
	a.lastErr, a.mismatch = nil, nil
	return nil
}

// tokenAuthFromDiscovery picks the token endpoint's client authentication
// from token_endpoint_auth_methods_supported: the one listed, auto when
// both are, and basic when neither is (the specification's default).
func tokenAuthFromDiscovery(methods []string) string {
	basic, post := slices.Contains(methods, "client_secret_basic"), slices.Contains(methods, "client_secret_post")
	switch {
	case basic && post:
		return config.TokenAuthAuto
	case post:
		return config.TokenAuthPost
	default:
		return config.TokenAuthBasic
	}
}

// exchange redeems the code at the token endpoint with the configured
// client authentication. Auto tries basic, then post when the provider
// refuses the client (clientRefused), at every sign-in:
// unlike x/oauth2's own detection it remembers nothing, so a provider that
// changes its method does not break sign-in until a restart. Any other
// refusal (a used code, a wrong PKCE verifier: invalid_grant) is the
// answer, reported as is, and the secret is not sent again for a dead
// code. When post is refused as a client too, the first refusal is
// reported.
func (a *authenticator) exchange(ctx context.Context, cfg *oauth2.Config, style, code, verifier string) (*oauth2.Token, error) {
	with := func(s oauth2.AuthStyle) (*oauth2.Token, error) {
		c := *cfg
		c.Endpoint.AuthStyle = s
		return c.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	}
	switch style {
	case config.TokenAuthPost:
		return with(oauth2.AuthStyleInParams)
	case config.TokenAuthAuto:
		tok, err := with(oauth2.AuthStyleInHeader)
		if !clientRefused(err) {
			return tok, err
		}
		tok, postErr := with(oauth2.AuthStyleInParams)
		if clientRefused(postErr) {
			return nil, err
		}
		return tok, postErr
	default:
		return with(oauth2.AuthStyleInHeader)
	}
}

// clientRefused reports whether the token endpoint refused the client's
// authentication rather than the grant: invalid_client, HTTP 401, or
// invalid_request, which is how a post-only provider answers credentials
// it did not find in the body (mockoidc: "missing the required parameter:
// client_id"). A used code or a wrong PKCE verifier is invalid_grant.
func clientRefused(err error) bool {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return false
	}
	switch re.ErrorCode {
	case "invalid_client", "invalid_request":
		return true
	}
	return re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized
}

// endSessionURL is the provider's end-session endpoint with the
// id_token_hint and the post-logout redirect, or "" when the provider
// advertises none or there is no ID token to hint with.
func (a *authenticator) endSessionURL(idToken, postLogout string) string {
	a.mu.RLock()
	endpoint := a.endSession
	a.mu.RUnlock()
	if endpoint == "" || idToken == "" {
		return ""
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("id_token_hint", idToken)
	q.Set("post_logout_redirect_uri", postLogout)
	q.Set("client_id", a.clientID)
	u.RawQuery = q.Encode()
	return u.String()
}

// loginStart is what the login redirect needs remembered in the flow
// cookie.
type loginStart struct {
	state, nonce, verifier string
	authURL                string
}

// start prepares a new login: fresh state, nonce and PKCE verifier. It
// waits for a discovery in progress (oauthConfig).
func (a *authenticator) start(ctx context.Context) (loginStart, error) {
	cfg, err := a.oauthConfig(ctx)
	if err != nil {
		return loginStart{}, err
	}
	ls := loginStart{state: randomToken(), nonce: randomToken(), verifier: oauth2.GenerateVerifier()}
	ls.authURL = cfg.AuthCodeURL(ls.state, oidc.Nonce(ls.nonce), oauth2.S256ChallengeOption(ls.verifier))
	return ls, nil
}

var errProviderUnavailable = errors.New("identity provider not discovered")

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

// verified is a sign-in the provider vouched for: the principal (without
// its Warden id) and the raw ID token.
type verified struct {
	principal identity.Principal
	idToken   string
}

// finish redeems the code of a callback whose state matched a sign-in in
// progress, and verifies the ID token. It returns the principal or a
// *loginError. The caller has checked the state and the error parameter.
func (a *authenticator) finish(ctx context.Context, pending pendingLogin, q url.Values) (verified, error) {
	code := q.Get("code")
	if code == "" {
		return verified{}, refuse("missing_code", "callback without an authorization code", "The identity provider sent no authorization code.")
	}
	a.mu.RLock()
	cfg, verifier, algs, style := a.oauth, a.verifier, a.algs, a.authStyle
	a.mu.RUnlock()
	if cfg == nil {
		return verified{}, refuse("provider_unavailable", "provider not discovered", "The identity provider is unreachable.")
	}
	xctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	tok, err := a.exchange(a.ctx(xctx), cfg, style, code, pending.Verifier)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_scope" {
			return verified{}, refuse("invalid_scope", exchangeDetail(err), scopeMessage(a.scopes))
		}
		return verified{}, refuse("code_exchange_failed", exchangeDetail(err), exchangeMessage(err))
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return verified{}, refuse("missing_id_token", "token response carried no id_token", "The identity provider sent no ID token.")
	}
	idt, err := a.verify(a.ctx(xctx), verifier, algs, raw)
	if err != nil {
		return verified{}, err
	}
	if !equalSecret(idt.Nonce, pending.Nonce) {
		return verified{}, refuse("nonce_mismatch", "ID token nonce does not match the session", "The ID token was not issued for this sign-in. Please sign in again.")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return verified{}, refuse("bad_claims", "ID token claims are not a JSON object", "The ID token could not be read.")
	}
	p := identity.Principal{Issuer: idt.Issuer, Subject: idt.Subject}
	p.Email, _ = claims["email"].(string)
	p.Name, _ = claims["name"].(string)
	if p.Name == "" {
		p.Name, _ = claims["preferred_username"].(string)
	}
	p.Groups = stringList(claims[a.groupsClaim])
	p.Roles, p.Tenants = a.grants.Apply(p.Groups)
	return verified{principal: p, idToken: raw}, nil
}

// rereadEvery bounds how often an ID token signed with an algorithm the
// discovery did not list makes Warden read discovery again.
const rereadEvery = time.Minute

// goOIDCAlgs are the algorithms go-oidc verifies; it ignores the others a
// discovery lists, and accepts RS256 alone when none is left.
var goOIDCAlgs = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA"}

// verifierAlgs is what go-oidc's verifier accepts given discovery's
// id_token_signing_alg_values_supported.
func verifierAlgs(listed []string) []string {
	var out []string
	for _, alg := range listed {
		if slices.Contains(goOIDCAlgs, alg) {
			out = append(out, alg)
		}
	}
	if len(out) == 0 {
		return []string{"RS256"}
	}
	return out
}

// verify checks the ID token. A provider that rotated its keys to another
// algorithm (RS256 to ES256, say) signs with an algorithm the discovery
// read at start-up does not list: then discovery is read again, at most
// once a minute and once for concurrent sign-ins, and the token verified
// once more with the verifier it gives. verifier and algs are one
// discovery's (another sign-in may read it again meanwhile). It returns a
// *loginError.
func (a *authenticator) verify(ctx context.Context, verifier *oidc.IDTokenVerifier, algs []string, raw string) (*oidc.IDToken, error) {
	idt, err := verifier.Verify(ctx, raw)
	if err == nil {
		return idt, nil
	}
	alg := tokenAlg(raw)
	if alg == "" || slices.Contains(algs, alg) {
		return nil, refuse(verifyReason(err), verifyDetail(err), "The identity provider's ID token could not be verified.")
	}
	if a.rereadFor(ctx, alg) {
		a.mu.RLock()
		verifier = a.verifier
		a.mu.RUnlock()
		if idt, err = verifier.Verify(ctx, raw); err == nil {
			return idt, nil
		}
		if slices.Contains(a.acceptedAlgs(), alg) {
			return nil, refuse(verifyReason(err), verifyDetail(err), "The identity provider's ID token could not be verified.")
		}
	}
	listed := strings.Join(a.acceptedAlgs(), ", ")
	a.log.Warn("ID token signed with an algorithm the identity provider's discovery does not list",
		"alg", alg, "listed", listed)
	return nil, refuse("unexpected_algorithm", verifyDetail(err),
		"The identity provider signed the ID token with "+alg+", an algorithm its discovery document does not list (it lists "+listed+"). If the provider has just changed its signing keys, try again in a minute.")
}

func (a *authenticator) acceptedAlgs() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.algs
}

// rereadFor reads discovery again because a token came signed with alg,
// which the discovery last read did not list, and reports whether the
// discovery now lists it. Concurrent callers wait for one re-read; after
// one, the next waits rereadEvery.
func (a *authenticator) rereadFor(ctx context.Context, alg string) bool {
	a.rereadMu.Lock()
	defer a.rereadMu.Unlock()
	if slices.Contains(a.acceptedAlgs(), alg) {
		return true // another sign-in re-read it meanwhile
	}
	if !a.rereadAt.IsZero() && time.Since(a.rereadAt) < rereadEvery {
		return false
	}
	a.rereadAt = time.Now()
	a.log.Info("ID token signed with an algorithm the identity provider's discovery did not list; reading discovery again",
		"alg", alg, "listed", strings.Join(a.acceptedAlgs(), ", "))
	if err := a.discoverOnce(ctx); err != nil {
		a.log.Warn("reading the identity provider's discovery again failed", "alg", alg, "err", err)
		return false
	}
	ok := slices.Contains(a.acceptedAlgs(), alg)
	if ok {
		a.log.Info("the identity provider now signs ID tokens with another algorithm", "alg", alg)
	}
	return ok
}

// tokenAlg is the alg of a compact JWS's header, "" when it cannot be read.
func tokenAlg(raw string) string {
	head, _, ok := strings.Cut(raw, ".")
	if !ok {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &h) != nil || h.Alg == "" {
		return ""
	}
	return safeCode(h.Alg)
}

// providerRefusal is the refusal of a callback that carries ?error=: the
// provider's code and its error_description, shown (escaped) to the user
// but kept out of the audit trail, where only the code goes.
func (a *authenticator) providerRefusal(q url.Values) *loginError {
	code := safeCode(q.Get("error"))
	if code == "invalid_scope" {
		return refuse("invalid_scope", "provider answered invalid_scope", scopeMessage(a.scopes))
	}
	msg := "The identity provider did not sign you in (" + code + ")."
	if d := cleanDescription(q.Get("error_description")); d != "" {
		msg += " It said: " + d
	}
	return refuse("provider_error", code, msg)
}

func scopeMessage(scopes []string) string {
	return "The identity provider refused the scopes Warden asks for (" + strings.Join(scopes, " ") +
		"). An administrator can change them with the setting WARDEN_OIDC_SCOPES."
}

// cleanDescription keeps a provider's error_description printable and
// short; the page escapes it.
func cleanDescription(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 300 {
			b.WriteString("…")
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
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

// exchangeMessage is the sign-in page's sentence for a code the token
// endpoint did not redeem; it names the provider's error code.
func exchangeMessage(err error) string {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return "The identity provider's token endpoint could not be reached to redeem the sign-in code. Please sign in again."
	}
	code := safeCode(re.ErrorCode)
	if re.ErrorCode == "" && re.Response != nil {
		code = fmt.Sprintf("HTTP %d", re.Response.StatusCode)
	}
	switch {
	case re.ErrorCode == "invalid_grant":
		return "The identity provider refused to redeem the sign-in code (invalid_grant: it may have been used already, or it was not issued for this sign-in). Please sign in again."
	case re.ErrorCode == "invalid_client", re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized:
		return "The identity provider did not accept Warden's client credentials (" + code + "). An administrator can check WARDEN_OIDC_CLIENT_ID, WARDEN_OIDC_CLIENT_SECRET and WARDEN_OIDC_TOKEN_AUTH."
	default:
		return "The identity provider refused to redeem the sign-in code (" + code + "). Please sign in again."
	}
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

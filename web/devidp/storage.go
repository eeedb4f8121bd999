package devidp

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

const (
	// authRequestTTL bounds the time from /authorize to the user's choice.
	authRequestTTL = 5 * time.Minute
	// codeTTL bounds the time from issuing a code to exchanging it.
	codeTTL = time.Minute
	// accessTokenTTL only matters for /userinfo; Warden keeps its own session.
	accessTokenTTL = 15 * time.Minute
)

var (
	errUnknownAuthRequest = errors.New("devidp: unknown, finished or expired auth request")
	errUnknownCode        = errors.New("devidp: unknown, used or expired authorization code")
	errUnknownToken       = errors.New("devidp: unknown or expired access token")
	errUnknownClient      = errors.New("devidp: unknown client")
	errBadClientSecret    = errors.New("devidp: wrong client id or secret")
	errUnknownUser        = errors.New("devidp: unknown user")
	errNoRefreshTokens    = errors.New("devidp: refresh tokens are not supported")
	errNoJWTProfile       = errors.New("devidp: JWT profile grants are not supported")
)

// storage is the op.Storage of the provider: everything in memory, one
// client, a fixed set of users and one signing key at a time (a new one
// replaces it only through Provider.RotateSigningKey).
type storage struct {
	now    func() time.Time // replaced in tests; set before first use
	client *client
	users  []User          // in picker order; never modified
	bySub  map[string]User // never modified

	keyMu   sync.RWMutex
	key     signingKey
	retired []publicKey // earlier keys, still in the JWKS for tokens they signed

	mu       sync.Mutex
	requests map[string]*authRequest
	codes    map[string]string // code → auth request id
	tokens   map[string]accessToken
}

var (
	_ op.Storage                   = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest = (*storage)(nil)
)

type accessToken struct {
	subject  string
	clientID string
	scopes   []string
	expires  time.Time
}

func newStorage(c *client, users []User, key signingKey) *storage {
	s := &storage{
		now:      time.Now,
		client:   c,
		users:    make([]User, len(users)),
		bySub:    make(map[string]User, len(users)),
		key:      key,
		requests: make(map[string]*authRequest),
		codes:    make(map[string]string),
		tokens:   make(map[string]accessToken),
	}
	for i, u := range users {
		u.Groups = slices.Clone(u.Groups)
		s.users[i] = u
		s.bySub[u.Subject] = u
	}
	return s
}

func (s *storage) userByUsername(username string) (User, bool) {
	i := slices.IndexFunc(s.users, func(u User) bool { return u.Username == username })
	if i < 0 {
		return User{}, false
	}
	return s.users[i], true
}

// sweep drops whatever has expired, so an idle dev server does not grow.
// The caller holds s.mu.
func (s *storage) sweep(now time.Time) {
	for id, r := range s.requests {
		if !now.Before(r.expires) {
			delete(s.requests, id)
		}
	}
	for code, id := range s.codes {
		if _, ok := s.requests[id]; !ok {
			delete(s.codes, code)
		}
	}
	for id, t := range s.tokens {
		if !now.Before(t.expires) {
			delete(s.tokens, id)
		}
	}
}

// live returns the stored auth request if it exists and has not expired.
// The caller holds s.mu.
func (s *storage) live(id string, now time.Time) (*authRequest, bool) {
	r, ok := s.requests[id]
	if !ok || !now.Before(r.expires) {
		return nil, false
	}
	return r, true
}

// CreateAuthRequest stores a validated /authorize request. Beyond what the
// op checks, it insists on PKCE S256 and a nonce: the dev provider is where
// Warden's login code is exercised, so it must fail loudly if the console
// ever stops sending either. Errors here reach the client's redirect URI as
// error=invalid_request (or login_required for prompt=none).
func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if slices.Contains(req.Prompt, oidc.PromptNone) {
		// There is no IdP session to reuse: every login goes through the picker.
		return nil, oidc.ErrLoginRequired()
	}
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("PKCE with code_challenge_method S256 is required")
	}
	if req.Nonce == "" {
		return nil, oidc.ErrInvalidRequest().WithDescription("nonce is required")
	}
	if req.ResponseMode != "" && req.ResponseMode != oidc.ResponseModeQuery {
		// The op's form_post page submits itself with an inline script,
		// which Warden's Content-Security-Policy blocks.
		return nil, oidc.ErrInvalidRequest().WithDescription("only response_mode query is supported")
	}
	now := s.now()
	r := &authRequest{
		id:           rand.Text(),
		expires:      now.Add(authRequestTTL),
		clientID:     req.ClientID,
		redirectURI:  req.RedirectURI,
		state:        req.State,
		nonce:        req.Nonce,
		scopes:       slices.Clone([]string(req.Scopes)),
		responseType: req.ResponseType,
		responseMode: req.ResponseMode,
		challenge: &oidc.CodeChallenge{
			Challenge: req.CodeChallenge,
			Method:    req.CodeChallengeMethod,
		},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	s.requests[r.id] = r
	return r.snapshot(), nil
}

// AuthRequestByID is used by the op's /authorize/callback. Once a code has
// been issued the request is reachable only through that code, so the
// callback cannot mint a second one.
func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.live(id, s.now())
	if !ok || r.codeIssued {
		return nil, errUnknownAuthRequest
	}
	return r.snapshot(), nil
}

// pendingAuthRequest returns a request that still waits for a user choice.
func (s *storage) pendingAuthRequest(id string) (*authRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.live(id, s.now())
	if !ok || r.done {
		return nil, errUnknownAuthRequest
	}
	return r.snapshot(), nil
}

// completeAuthRequest records the user chosen on the picker. It succeeds
// once per request; a second post for the same id is refused.
func (s *storage) completeAuthRequest(id, subject string) error {
	if _, ok := s.bySub[subject]; !ok {
		return errUnknownUser
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	r, ok := s.live(id, now)
	if !ok || r.done {
		return errUnknownAuthRequest
	}
	r.done = true
	r.subject = subject
	r.authTime = now
	return nil
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	r, ok := s.live(id, now)
	if !ok || !r.done || r.codeIssued {
		return errUnknownAuthRequest
	}
	r.codeIssued = true
	r.expires = now.Add(codeTTL)
	s.codes[code] = id
	return nil
}

// AuthRequestByCode consumes the code: it and its auth request are removed
// before the op checks PKCE and the client, so any second presentation of
// a code fails, whether or not the first one succeeded (RFC 6749 §4.1.2).
func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.codes[code]
	if !ok {
		return nil, errUnknownCode
	}
	delete(s.codes, code)
	r, ok := s.live(id, s.now())
	delete(s.requests, id)
	if !ok {
		return nil, errUnknownCode
	}
	return r.snapshot(), nil
}

func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	var clientID string
	if r, ok := req.(*authRequest); ok {
		clientID = r.clientID
	}
	now := s.now()
	id := rand.Text()
	t := accessToken{
		subject:  req.GetSubject(),
		clientID: clientID,
		scopes:   slices.Clone(req.GetScopes()),
		expires:  now.Add(accessTokenTTL),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	s.tokens[id] = t
	return id, t.expires, nil
}

// CreateAccessAndRefreshTokens is never reached: the client has no
// refresh_token grant and op.Config.GrantTypeRefreshToken is off.
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errNoRefreshTokens
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errNoRefreshTokens
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

// TerminateSession (end_session) revokes the user's access tokens for the
// client. There is no IdP login session to end: the picker asks every time.
func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tokens {
		if t.subject == userID && t.clientID == clientID {
			delete(s.tokens, id)
		}
	}
	return nil
}

func (s *storage) RevokeToken(_ context.Context, tokenOrTokenID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[tokenOrTokenID]
	if !ok {
		// Unknown tokens are already as revoked as they can be (RFC 7009 §2.2).
		return nil
	}
	if t.clientID != clientID {
		return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
	}
	delete(s.tokens, tokenOrTokenID)
	return nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.keyMu.RLock()
	defer s.keyMu.RUnlock()
	return s.key, nil
}

// SignatureAlgorithms is discovery's id_token_signing_alg_values_supported:
// the algorithm of the current key only, as a provider that switched
// algorithms announces it.
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	s.keyMu.RLock()
	defer s.keyMu.RUnlock()
	return []jose.SignatureAlgorithm{s.key.alg}, nil
}

// KeySet is the JWKS: the current key first, then the retired ones.
func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.keyMu.RLock()
	defer s.keyMu.RUnlock()
	keys := []op.Key{s.key.public()}
	for _, k := range s.retired {
		keys = append(keys, k)
	}
	return keys, nil
}

// rotate makes key the signing key; the one it replaces stays in the JWKS.
func (s *storage) rotate(key signingKey) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	s.retired = append([]publicKey{s.key.public()}, s.retired...)
	s.key = key
}

func (s *storage) GetClientByClientID(_ context.Context, clientID string) (op.Client, error) {
	if clientID != s.client.id {
		return nil, errUnknownClient
	}
	return s.client, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, clientID, clientSecret string) error {
	idOK := subtle.ConstantTimeCompare([]byte(clientID), []byte(s.client.id))
	secretOK := subtle.ConstantTimeCompare([]byte(clientSecret), []byte(s.client.secret))
	if idOK&secretOK != 1 {
		return errBadClientSecret
	}
	return nil
}

// SetUserinfoFromScopes is deprecated in the op package in favour of
// SetUserinfoFromRequest, which fills the ID token below.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest fills the ID token's claims, groups included.
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	return s.setUserinfo(info, req.GetSubject(), scopes)
}

// SetUserinfoFromToken answers /userinfo for an access token.
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	t, err := s.token(tokenID)
	if err != nil {
		return err
	}
	if t.subject != subject {
		return errUnknownToken
	}
	return s.setUserinfo(info, t.subject, t.scopes)
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	t, err := s.token(tokenID)
	if err != nil {
		return err
	}
	if t.subject != subject || t.clientID != clientID {
		return errUnknownToken
	}
	info := new(oidc.UserInfo)
	if err := s.setUserinfo(info, t.subject, t.scopes); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope = t.scopes
	resp.ClientID = t.clientID
	resp.Expiration = oidc.FromTime(t.expires)
	return nil
}

func (s *storage) token(id string) (accessToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[id]
	if !ok || !s.now().Before(t.expires) {
		return accessToken{}, errUnknownToken
	}
	return t, nil
}

// setUserinfo maps a user onto standard claims by scope. groups is emitted
// whatever the scopes (an empty list for a user without groups), so Warden
// need not know to ask for a "groups" scope.
func (s *storage) setUserinfo(info *oidc.UserInfo, subject string, scopes []string) error {
	u, ok := s.bySub[subject]
	if !ok {
		return errUnknownUser
	}
	info.Subject = u.Subject
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeProfile:
			info.Name = u.Name
			info.PreferredUsername = u.Username
		case oidc.ScopeEmail:
			info.Email = u.Email
			info.EmailVerified = true
		}
	}
	groups := slices.Clone(u.Groups)
	if groups == nil {
		groups = []string{}
	}
	info.AppendClaims("groups", groups)
	return nil
}

// GetPrivateClaimsFromScopes only feeds JWT access tokens; this provider
// issues opaque ones.
func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNoJWTProfile
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errNoJWTProfile
}

func (s *storage) Health(context.Context) error { return nil }

// authRequest is the stored state of one /authorize request. The op only
// ever sees snapshots, so the picker can change the stored one safely.
type authRequest struct {
	id           string
	expires      time.Time
	clientID     string
	redirectURI  string
	state        string
	nonce        string
	scopes       []string
	responseType oidc.ResponseType
	responseMode oidc.ResponseMode
	challenge    *oidc.CodeChallenge
	subject      string    // set when a user is chosen
	authTime     time.Time // set when a user is chosen
	done         bool      // a user was chosen
	codeIssued   bool      // the callback issued the (only) code
}

var _ op.AuthRequest = (*authRequest)(nil)

func (r *authRequest) snapshot() *authRequest {
	c := *r
	return &c
}

func (r *authRequest) GetID() string                         { return r.id }
func (r *authRequest) GetACR() string                        { return "" }
func (r *authRequest) GetAMR() []string                      { return nil }
func (r *authRequest) GetAudience() []string                 { return []string{r.clientID} }
func (r *authRequest) GetAuthTime() time.Time                { return r.authTime }
func (r *authRequest) GetClientID() string                   { return r.clientID }
func (r *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return r.challenge }
func (r *authRequest) GetNonce() string                      { return r.nonce }
func (r *authRequest) GetRedirectURI() string                { return r.redirectURI }
func (r *authRequest) GetResponseType() oidc.ResponseType    { return r.responseType }
func (r *authRequest) GetResponseMode() oidc.ResponseMode    { return r.responseMode }
func (r *authRequest) GetScopes() []string                   { return r.scopes }
func (r *authRequest) GetState() string                      { return r.state }
func (r *authRequest) GetSubject() string                    { return r.subject }
func (r *authRequest) Done() bool                            { return r.done }

type signingKey struct {
	id  string
	alg jose.SignatureAlgorithm
	key crypto.Signer // *rsa.PrivateKey for RS256, *ecdsa.PrivateKey (P-256) for ES256
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

func (k signingKey) public() publicKey {
	return publicKey{id: k.id, alg: k.alg, key: k.key.Public()}
}

type publicKey struct {
	id  string
	alg jose.SignatureAlgorithm
	key crypto.PublicKey
}

func (k publicKey) ID() string                         { return k.id }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return k.alg }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return k.key }

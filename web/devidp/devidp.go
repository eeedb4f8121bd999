// Package devidp is Warden's built-in development OpenID Connect provider.
//
// When no OIDC issuer is configured, Warden mounts this provider on its own
// HTTP server (issuer <public URL>/dev-idp) so that the console logs in
// through exactly the same go-oidc code path as in production: discovery,
// JWKS, ID token signature, nonce and PKCE S256. The protocol is served by
// zitadel/oidc's op package; this package adds an in-memory storage, one
// confidential client and a "pick a demo user" page in place of a password
// form. It is for development only: anyone who can reach the picker can sign
// in as any configured user.
package devidp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// User is a demo identity offered on the picker page.
type User struct {
	Subject     string   // stable id, the ID token's sub, e.g. "dev-alice"
	Username    string   // preferred_username, e.g. "alice"
	Name        string   // e.g. "Alice Approver"
	Email       string   // always reported as verified
	Groups      []string // emitted in the "groups" claim of the ID token and userinfo
	Description string   // one line for the picker page
}

// Config configures a Provider.
type Config struct {
	// Issuer is the full issuer URL including its path, e.g.
	// http://127.0.0.1:8080/dev-idp. Its path is where Handler expects to be
	// mounted. It must not end with a slash, nor carry a query or fragment.
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURIs are the exact redirect URIs the client may use.
	RedirectURIs []string
	// PostLogoutRedirectURIs are the exact URIs end_session may redirect to
	// (optional). Without one, end_session lands on a "signed out" page.
	PostLogoutRedirectURIs []string
	Users                  []User
	// CryptoKey encrypts the opaque access tokens and authorization codes;
	// random per process is fine.
	CryptoKey [32]byte
	Logger    *slog.Logger // optional; slog.Default() when nil
}

// Provider is a running development identity provider.
type Provider struct {
	issuer  string
	prefix  string // path of the issuer URL, "" when the issuer has none
	op      *op.Provider
	store   *storage
	log     *slog.Logger
	handler http.Handler
	// attempts limit sign-ins per client address and user name (limit.go).
	attempts *attempts
}

// Paths under the issuer that this package serves itself; everything else
// goes to the op package (/.well-known/openid-configuration, /authorize,
// /authorize/callback, /oauth/token, /userinfo, /keys, /end_session, ...).
const (
	loginPath     = "/login"
	loggedOutPath = "/logged-out"
)

// groupsScope may be requested for clarity; groups are emitted either way.
const groupsScope = "groups"

// New builds a provider with a fresh RSA-2048 signing key (RS256).
func New(cfg Config) (*Provider, error) {
	prefix, insecure, err := validateConfig(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	key, err := newSigningKey(jose.RS256)
	if err != nil {
		return nil, err
	}
	c := &client{
		id:                     cfg.ClientID,
		secret:                 cfg.ClientSecret,
		redirectURIs:           append([]string(nil), cfg.RedirectURIs...),
		postLogoutRedirectURIs: append([]string(nil), cfg.PostLogoutRedirectURIs...),
		loginURL:               prefix + loginPath,
	}
	store := newStorage(c, cfg.Users, key)

	logoutRedirect := prefix + loggedOutPath
	if len(cfg.PostLogoutRedirectURIs) > 0 {
		logoutRedirect = cfg.PostLogoutRedirectURIs[0]
	}
	opConfig := &op.Config{
		CryptoKey:                cfg.CryptoKey,
		DefaultLogoutRedirectURI: logoutRedirect,
		CodeMethodS256:           true,
		AuthMethodPost:           true,
		SupportedUILocales:       []language.Tag{language.English},
		SupportedClaims:          append(append([]string(nil), op.DefaultSupportedClaims...), "groups"),
		SupportedScopes:          []string{"openid", "profile", "email", groupsScope},
	}
	var opts []op.Option
	if insecure {
		opts = append(opts, op.WithAllowInsecure())
	}
	provider, err := op.NewProvider(opConfig, store, op.StaticIssuer(cfg.Issuer), opts...)
	if err != nil {
		return nil, fmt.Errorf("devidp: create OpenID provider: %w", err)
	}

	p := &Provider{
		issuer:   cfg.Issuer,
		prefix:   prefix,
		op:       provider,
		store:    store,
		log:      log,
		attempts: newAttempts(),
	}
	p.handler = mountAt(prefix, http.HandlerFunc(p.route))
	return p, nil
}

// Handler serves the provider. It expects request paths that still carry
// the issuer path (e.g. /dev-idp/authorize) and strips it itself, so mount
// it as is: mux.Handle("/dev-idp/", h) or, in Echo,
// e.Any("/dev-idp/*", echo.WrapHandler(h)). Paths outside the issuer path
// get 404.
func (p *Provider) Handler() http.Handler { return p.handler }

// RotateSigningKey signs the ID tokens issued from now on with a fresh key
// of alg (jose.RS256 or jose.ES256), as a provider that rotates its keys
// to another algorithm does: discovery's id_token_signing_alg_values_supported
// then lists alg only, and the JWKS holds the new key first and the
// earlier ones after it.
func (p *Provider) RotateSigningKey(alg jose.SignatureAlgorithm) error {
	key, err := newSigningKey(alg)
	if err != nil {
		return err
	}
	p.store.rotate(key)
	p.log.Info("development identity provider rotated its signing key", "alg", string(alg), "kid", key.id)
	return nil
}

func newSigningKey(alg jose.SignatureAlgorithm) (signingKey, error) {
	var (
		key crypto.Signer
		err error
	)
	switch alg {
	case jose.RS256:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return signingKey{}, fmt.Errorf("devidp: signing algorithm %s is not supported (RS256 or ES256)", alg)
	}
	if err != nil {
		return signingKey{}, fmt.Errorf("devidp: generate %s signing key: %w", alg, err)
	}
	return signingKey{id: rand.Text(), alg: alg, key: key}, nil
}

// Issuer returns the issuer URL the provider announces.
func (p *Provider) Issuer() string { return p.issuer }

// route dispatches a request whose issuer path has been stripped. It is a
// switch rather than an http.ServeMux because ServeMux redirects unclean
// paths to the stripped path, which would drop the issuer path.
func (p *Provider) route(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case loginPath:
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			p.showPicker(w, r)
		case http.MethodPost:
			p.choose(w, r)
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		}
	case loggedOutPath:
		p.showLoggedOut(w, r)
	default:
		p.op.ServeHTTP(w, r)
	}
}

// mountAt strips prefix from the request path, both decoded and raw, and
// refuses paths outside it. Unlike http.StripPrefix alone it requires a
// segment boundary, so /dev-idpx is not taken for /dev-idp.
func mountAt(prefix string, next http.Handler) http.Handler {
	if prefix == "" {
		return next
	}
	stripped := http.StripPrefix(prefix, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, prefix+"/") {
			http.NotFound(w, r)
			return
		}
		stripped.ServeHTTP(w, r)
	})
}

func validateConfig(cfg Config) (prefix string, insecure bool, err error) {
	u, err := url.Parse(cfg.Issuer)
	switch {
	case cfg.Issuer == "":
		return "", false, errors.New("devidp: Issuer is required")
	case err != nil:
		return "", false, fmt.Errorf("devidp: Issuer %q: %w", cfg.Issuer, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, fmt.Errorf("devidp: Issuer %q must be an http or https URL", cfg.Issuer)
	case u.Host == "":
		return "", false, fmt.Errorf("devidp: Issuer %q has no host", cfg.Issuer)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", false, fmt.Errorf("devidp: Issuer %q must not have a query, fragment or user info", cfg.Issuer)
	case strings.HasSuffix(u.Path, "/"):
		return "", false, fmt.Errorf("devidp: Issuer %q must not end with a slash", cfg.Issuer)
	case u.EscapedPath() != u.Path:
		return "", false, fmt.Errorf("devidp: Issuer %q path must not need percent-encoding", cfg.Issuer)
	}
	if cfg.ClientID == "" {
		return "", false, errors.New("devidp: ClientID is required")
	}
	if cfg.ClientSecret == "" {
		return "", false, errors.New("devidp: ClientSecret is required")
	}
	if cfg.CryptoKey == ([32]byte{}) {
		return "", false, errors.New("devidp: CryptoKey is required")
	}
	if len(cfg.RedirectURIs) == 0 {
		return "", false, errors.New("devidp: RedirectURIs needs at least one URI")
	}
	for _, list := range []struct {
		name string
		uris []string
	}{{"RedirectURIs", cfg.RedirectURIs}, {"PostLogoutRedirectURIs", cfg.PostLogoutRedirectURIs}} {
		for _, raw := range list.uris {
			ru, err := url.Parse(raw)
			if err != nil || (ru.Scheme != "http" && ru.Scheme != "https") || ru.Host == "" || ru.Fragment != "" {
				return "", false, fmt.Errorf("devidp: %s entry %q must be an absolute http(s) URL without fragment", list.name, raw)
			}
		}
	}
	if err := validateUsers(cfg.Users); err != nil {
		return "", false, err
	}
	return u.Path, u.Scheme == "http", nil
}

func validateUsers(users []User) error {
	if len(users) == 0 {
		return errors.New("devidp: Users needs at least one user")
	}
	subjects := make(map[string]bool, len(users))
	usernames := make(map[string]bool, len(users))
	for i, u := range users {
		switch {
		case u.Subject == "":
			return fmt.Errorf("devidp: Users[%d] has no Subject", i)
		case u.Username == "":
			return fmt.Errorf("devidp: Users[%d] has no Username", i)
		case subjects[u.Subject]:
			return fmt.Errorf("devidp: Users[%d] repeats Subject %q", i, u.Subject)
		case usernames[u.Username]:
			return fmt.Errorf("devidp: Users[%d] repeats Username %q", i, u.Username)
		}
		subjects[u.Subject] = true
		usernames[u.Username] = true
	}
	return nil
}

// callbackURL is where the picker sends the browser once a user is chosen:
// the op's /authorize/callback, which issues the code and redirects to the
// client.
func (p *Provider) callbackURL(ctx context.Context, authRequestID string) string {
	return op.AuthCallbackURL(p.op)(op.ContextWithIssuer(ctx, p.issuer), authRequestID)
}

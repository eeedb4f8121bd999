package devidp

import (
	"net/url"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// idTokenLifetime is short: Warden reads the ID token once, at login, and
// keeps its own session.
const idTokenLifetime = 15 * time.Minute

// client is the one confidential web client (Warden's console): code flow
// only, client secret by HTTP Basic or form post, no refresh tokens.
type client struct {
	id                     string
	secret                 string
	redirectURIs           []string
	postLogoutRedirectURIs []string
	loginURL               string // path of the picker page, e.g. /dev-idp/login
}

var _ op.Client = (*client)(nil)

func (c *client) GetID() string                       { return c.id }
func (c *client) RedirectURIs() []string              { return c.redirectURIs }
func (c *client) PostLogoutRedirectURIs() []string    { return c.postLogoutRedirectURIs }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType        { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration      { return idTokenLifetime }
func (c *client) ClockSkew() time.Duration            { return 0 }

func (c *client) LoginURL(authRequestID string) string {
	return c.loginURL + "?authRequestID=" + url.QueryEscape(authRequestID)
}

// AuthMethod is the registered method. The op also accepts the secret in the
// form body (client_secret_post) because op.Config.AuthMethodPost is set.
func (c *client) AuthMethod() oidc.AuthMethod { return oidc.AuthMethodBasic }

// DevMode stays off: the op then allows http redirect URIs only for this
// confidential client's code flow, which is all Warden uses.
func (c *client) DevMode() bool { return false }

func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

// IsScopeAllowed admits the non-standard "groups" scope, so a client that
// asks for it (as many IdPs require) keeps it in the granted scopes.
func (c *client) IsScopeAllowed(scope string) bool { return scope == groupsScope }

// IDTokenUserinfoClaimsAssertion puts the profile and email claims into the
// ID token itself, not only into userinfo: Warden builds its principal from
// the verified ID token.
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }

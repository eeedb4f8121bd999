package views

import "net/url"

// LoginView is the sign-in page.
type LoginView struct {
	ProviderReady bool   // discovery of the identity provider has succeeded
	ProviderName  string // issuer host, or "development identity provider"
	Error         string // why the last sign-in failed, for the user
	Next          string // where to go after signing in
	SignedOut     bool   // the user just signed out
	// IssuerMismatch is set when the provider answers but calls itself by
	// another issuer than Warden is configured with.
	IssuerMismatch *IssuerMismatch
}

// IssuerMismatch names the two issuers that must be equal.
type IssuerMismatch struct {
	Configured string // WARDEN_OIDC_ISSUER
	Announced  string // what the provider's discovery document says
}

func loginURL(next string) string {
	if next == "" || next == "/" {
		return "/auth/login"
	}
	return "/auth/login?next=" + url.QueryEscape(next)
}

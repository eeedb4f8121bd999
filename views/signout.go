package views

// SignOutView is the page between Warden's sign-out and the identity
// provider's: Warden's session has ended, and the browser goes on to the
// provider's end-session endpoint so the provider's session ends too.
type SignOutView struct {
	ProviderName  string // issuer host, or "development identity provider"
	EndSessionURL string // the provider's end-session endpoint, with its query
}

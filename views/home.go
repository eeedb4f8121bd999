package views

// HomeView is the signed-in user's start page.
type HomeView struct {
	Tenants     int64 // tenants within the user's scope
	AuditEvents int64
}

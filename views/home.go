package views

import "github.com/wardenhq/warden/alerts"

// HomeView is the signed-in user's start page.
type HomeView struct {
	Tenants     int64 // tenants within the user's scope
	AuditEvents int64
	// Alerts firing, for on-call users (nil for others).
	Alerts []alerts.Alert
}

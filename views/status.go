package views

import "time"

// StatusView is the on-call status page.
type StatusView struct {
	Version         string
	DevMode         bool
	Uptime          string
	DatabaseOK      bool
	DatabaseMessage string
	SchemaVersion   int
	ProviderReady   bool
	ProviderIssuer  string
	ProviderError   string
	AuditEvents     int64
	// NeedsReview lists executed-or-failed work a person must look at:
	// failed actions and effects whose outcome the reconciler could not
	// learn.
	FailedActions []ReviewItem
	FailedTotal   int    // failed actions in the viewer's tenants, all pages
	NextPage      string // later failed actions, empty on the last page
	PrevPage      string // earlier ones, empty on the first page
	ReviewEffects int
	PendingJobs   int
}

// ReviewItem is an action that needs a person.
type ReviewItem struct {
	ID, Summary, Tenant, Reason string
	RequestedAt                 time.Time
}

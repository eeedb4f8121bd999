package views

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
	ReviewEffects int
	PendingJobs   int
}

// ReviewItem is an action that needs a person.
type ReviewItem struct {
	ID, Summary, Tenant, Reason string
}

package views

import "github.com/wardenhq/warden/store"

// TenantView is one tenant's settings page.
type TenantView struct {
	Tenant    store.Tenant
	Name      string // the rename form's value
	Retention string // the retention form's value
	// DualControl and DualControlCurrency are the threshold form's values
	// (major units, ISO code); Window the window form's, in hours.
	DualControl         string
	DualControlCurrency string
	Window              string
	Thresholds          []ThresholdRow
	Errors              FieldErrors
	Notice              string
}

// ThresholdRow is one currency's dual-control threshold as shown.
type ThresholdRow struct {
	Currency string
	Shown    string // "$1,000.00"
	Off      bool   // threshold 0: one approver is always enough
}

// TenantFreezeView asks for confirmation before freezing or unfreezing.
type TenantFreezeView struct {
	Tenant store.Tenant
	Freeze bool // true: freeze; false: unfreeze
}

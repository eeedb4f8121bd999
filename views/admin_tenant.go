package views

import (
	"github.com/a-h/templ"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/tenants"
)

// TenantView is one tenant's settings page.
type TenantView struct {
	Tenant tenants.Tenant
	// Pending are the changes to this tenant waiting for a second admin.
	Pending []changes.Change
	// Owner is who owns the tenant; OwnerPending the owner changes waiting.
	Owner        string
	OwnerPending []changes.Change
	OwnerForm    OwnerForm      // the owner form as typed, when it was refused
	Freeze       tenants.Freeze // why and since when it is frozen
	Name         string         // the rename form's value
	Retention    string         // the retention form's value
	// DualControl and DualControlCurrency are the threshold form's values
	// (major units, ISO code); Window the window form's, in hours.
	DualControl         string
	DualControlCurrency string
	Window              string
	Thresholds          []ThresholdRow
	Model               TenantModelForm // the model settings form (models.TenantSettings)
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
	Tenant tenants.Tenant
	Freeze bool        // true: freeze; false: unfreeze
	Reason string      // what was typed, when the page comes back with an error
	Errors FieldErrors // the reason's error
}

func (v TenantFreezeView) confirm(p Page) ConfirmView {
	t := v.Tenant
	c := ConfirmView{Cancel: templ.SafeURL("/tenants/" + t.Slug)}
	if v.Freeze {
		c.Title = text("Freeze " + t.Name + "?")
		if t.Frozen {
			c.Warning = text(t.Slug + " is already frozen. Confirming changes nothing.")
		}
		c.Effect = tenantFreezeEffect(t.Slug)
		c.Action = templ.SafeURL("/tenants/" + t.Slug + "/freeze")
		c.Submit, c.Danger = "Freeze "+t.Slug, true
		c.Fields = reasonField("freeze-reason", "Say why, e.g. the incident: it is shown on the tenant's page and on every action the freeze stops.", v.Reason, v.Errors)
		return c
	}
	c.Title = text("Unfreeze " + t.Name + "?")
	if !t.Frozen {
		c.Warning = text(t.Slug + " is not frozen. Confirming changes nothing.")
	}
	c.Effect = tenantUnfreezeEffect(t.Slug)
	c.Action = templ.SafeURL("/tenants/" + t.Slug + "/unfreeze")
	c.Submit = "Unfreeze " + t.Slug
	c.Fields = needsSecondAdmin(p, "unfreeze")
	return c
}

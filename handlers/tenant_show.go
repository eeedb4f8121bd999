package handlers

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

var tenantNotices = map[string]string{
	"created":              "Tenant created. Give it a budget and keys next.",
	"renamed":              "Tenant renamed.",
	"retention":            "Trace retention saved.",
	"frozen":               "Tenant frozen: its agents now get 403 tenant_frozen.",
	"unfrozen":             "Tenant unfrozen: its agents can call the API again.",
	"already_frozen":       "The tenant was already frozen; nothing changed.",
	"already_unfrozen":     "The tenant was not frozen; nothing changed.",
	"unchanged":            "That is the current value; nothing changed.",
	"dual_control":         "Dual-control threshold saved. It applies to actions requested from now on; actions already waiting keep the number of approvers they were created with.",
	"dual_control_off":     "Dual control switched off for that currency: one approver is enough for any amount requested from now on. Actions already waiting keep the number of approvers they were created with.",
	"dual_control_removed": "Threshold removed: actions in that currency now need two approvers for any amount.",
	"dual_control_window":  "Dual-control window saved. It applies to actions requested from now on; actions already waiting keep the number of approvers they were created with.",
	"model_settings":       "Model settings saved. They apply to model calls from now on.",
}

// TenantShow shows one tenant's settings: name, trace retention, freeze.
func (h *Console) TenantShow(c echo.Context) error {
	t, err := tenantInScope(c.Request().Context(), h.DB.Read(), CurrentPrincipal(c), c.Param("slug"))
	if err != nil {
		return err
	}
	v, err := tenantView(c.Request().Context(), h.DB.Read(), t)
	if err != nil {
		return err
	}
	v.Notice = doneNotice(c, tenantNotices)
	var status int
	v.OwnerForm, status = refusedOwnerForm(c)
	return renderTenantShow(c, status, v)
}

func renderTenantShow(c echo.Context, status int, v views.TenantView) error {
	page := PageFor(c, v.Tenant.Name+" · Tenants")
	page.Active = "/tenants"
	return Render(c, status, page, views.TenantShow(page, v))
}

// tenantFormPage re-renders the settings page with one form's errors; the
// other form shows the stored value.
func tenantFormPage(c echo.Context, q store.Querier, t tenants.Tenant, name, retention string, errs views.FieldErrors) error {
	v, err := tenantView(c.Request().Context(), q, t)
	if err != nil {
		return err
	}
	v.Name, v.Retention, v.Errors = name, retention, errs
	return renderTenantShow(c, http.StatusUnprocessableEntity, v)
}

// tenantSaved redirects to the tenant page after one settings form, with
// the notice done, or "unchanged" when the form changed nothing.
func tenantSaved(c echo.Context, t tenants.Tenant, changed bool, done string) error {
	if !changed {
		done = "unchanged"
	}
	return seeOther(c, "/tenants/"+t.Slug+"?done="+done)
}

// tenantView fills the settings forms with the tenant's current values.
func tenantView(ctx context.Context, q store.Querier, t tenants.Tenant) (views.TenantView, error) {
	ths, err := tenants.Thresholds(ctx, q, t.ID)
	if err != nil {
		return views.TenantView{}, err
	}
	v := views.TenantView{Tenant: t, Name: t.Name, Retention: strconv.Itoa(t.RetentionDays),
		DualControlCurrency: "USD", Window: strconv.Itoa(int(t.DualControlWindow / time.Hour))}
	if v.Pending, err = changes.PendingOn(ctx, q, t.Slug, time.Now(), changes.DualControl, changes.DualControlWindow, changes.BudgetLimit, changes.TenantFreeze); err != nil {
		return views.TenantView{}, err
	}
	if v.Owner, err = owners.Get(ctx, q, owners.Tenant, t.Slug); err != nil {
		return views.TenantView{}, err
	}
	if v.OwnerPending, err = changes.PendingOn(ctx, q, t.Slug, time.Now(), changes.OwnerChange); err != nil {
		return views.TenantView{}, err
	}
	if v.Freeze, err = tenants.FreezeOf(ctx, q, t.ID); err != nil {
		return views.TenantView{}, err
	}
	if v.Model, err = tenantModelForm(ctx, q, t.ID); err != nil {
		return views.TenantView{}, err
	}
	for _, th := range ths {
		cur, err := money.ParseCurrency(th.Currency)
		if err != nil {
			cur = money.Currency{Code: th.Currency, Exponent: 2}
		}
		a := money.Amount{Minor: th.Minor, Currency: cur}
		v.Thresholds = append(v.Thresholds, views.ThresholdRow{Currency: cur.Code, Shown: money.Format(a), Off: th.Minor == 0})
		if cur.Code == "USD" {
			v.DualControl = money.Decimal(a, false)
		}
	}
	return v, nil
}

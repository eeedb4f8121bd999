package handlers

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// TenantDualControl sets the amount from which a tenant's actions in one
// currency need two distinct approvers. The form takes the currency's
// major units ("1000.00", "1000.000" for KWD); 0 turns dual control off
// for that currency (one approver for any amount), which is the one
// surprising loosening, so it needs the form's confirm_off box ticked.
// Actions already requested keep the approver count they were created
// with; the notice says so.
func (h *Console) TenantDualControl(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	code := strings.ToUpper(strings.TrimSpace(c.FormValue("currency")))
	if code == "" {
		code = "USD"
	}
	typed := c.FormValue("dual_control")
	errs := views.FieldErrors{}
	cur, err := money.ParseCurrency(code)
	if err != nil {
		errs["currency"] = "Use an ISO 4217 currency code, such as USD, EUR or KWD."
	} else if typed == "" {
		errs["dual_control"] = "Enter an amount, such as " + money.Example(cur) + "."
	}
	var minor int64
	if len(errs) == 0 {
		if minor, err = money.ParseDecimal(typed, cur); err != nil {
			errs["dual_control"] = refusalSentence(err)
		} else if minor == 0 && c.FormValue("confirm_off") != "yes" {
			errs["confirm_off"] = "0 switches dual control off for " + cur.Code + ": one approver will be enough for any amount. Tick this box to confirm, or enter the amount from which two approvers decide."
		}
	}
	if len(errs) > 0 {
		return dualControlInvalid(c, h.DB, t, typed, code, errs)
	}
	before := changes.Threshold{Currency: cur.Code}
	switch old, err := tenants.ThresholdFor(ctx, h.DB.Read(), t.ID, cur.Code); {
	case err == nil:
		before.Set, before.Minor = true, old
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	after := changes.Threshold{Currency: cur.Code, Set: true, Minor: minor}
	before.Shown, after.Shown = before.Text(), after.Text()
	if ch, err := h.govern(c, user, changes.Proposal{Kind: changes.DualControl, TenantID: t.ID, TenantSlug: t.Slug, Subject: t.Slug,
		Summary: thresholdSummary(t.Slug, cur, before, after), Before: before, After: after}); err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	changed, err := tenants.SetThreshold(ctx, h.DB, principalActor(user), t.ID, tenants.Threshold{Currency: cur.Code, Minor: minor})
	if errs, ok := fieldErrors(err); ok {
		return dualControlInvalid(c, h.DB, t, typed, code, errs)
	}
	if err != nil {
		return err
	}
	done := "dual_control"
	if minor == 0 {
		done = "dual_control_off"
	}
	return tenantSaved(c, t, changed, done)
}

// dualControlInvalid re-renders the tenant page with the threshold form as
// typed and its errors.
func dualControlInvalid(c echo.Context, st *store.DB, t tenants.Tenant, typed, code string, errs views.FieldErrors) error {
	v, err := tenantView(c.Request().Context(), st.Read(), t)
	if err != nil {
		return err
	}
	v.DualControl, v.DualControlCurrency, v.Errors = typed, code, errs
	return renderTenantShow(c, 422, v)
}

// TenantDualControlRemove deletes a tenant's threshold in one currency:
// actions in it then need two approvers for any amount, so removing one
// can only make approval stricter and needs no confirmation.
func (h *Console) TenantDualControlRemove(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	code := strings.ToUpper(strings.TrimSpace(c.FormValue("currency")))
	changed, err := tenants.RemoveThreshold(ctx, h.DB, principalActor(user), t.ID, code)
	if err != nil {
		return err
	}
	return tenantSaved(c, t, changed, "dual_control_removed")
}

// TenantDualControlWindow sets, in hours, how far back actions on the same
// target add up for dual control.
func (h *Console) TenantDualControlWindow(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	typed := strings.TrimSpace(c.FormValue("window_hours"))
	hours, msg := formInt(typed, "not a number")
	if msg != "" {
		// Not a whole number ("+24" and "24.5" included): 0 hours is
		// refused in the same words as any number out of range.
		hours = 0
	}
	if msg == "" && tenants.ValidateDualControlHours(hours) == "" {
		before, after := changes.Window{Hours: int(t.DualControlWindow / time.Hour)}, changes.Window{Hours: hours}
		if ch, err := h.govern(c, user, changes.Proposal{Kind: changes.DualControlWindow, TenantID: t.ID, TenantSlug: t.Slug, Subject: t.Slug,
			Summary: fmt.Sprintf("Shorten %s's dual-control window from %d to %d hours", t.Slug, before.Hours, after.Hours),
			Before:  before, After: after}); err != nil || ch != nil {
			return changeRedirect(c, ch, err)
		}
	}
	changed, err := tenants.SetDualControlWindow(ctx, h.DB, principalActor(user), t.ID, hours)
	if errs, ok := fieldErrors(err); ok {
		v, err := tenantView(ctx, h.DB.Read(), t)
		if err != nil {
			return err
		}
		v.Window, v.Errors = typed, errs
		return renderTenantShow(c, 422, v)
	}
	if err != nil {
		return err
	}
	return tenantSaved(c, t, changed, "dual_control_window")
}

// thresholdSummary is the sentence a second admin reads about a threshold
// change.
func thresholdSummary(slug string, cur money.Currency, before, after changes.Threshold) string {
	return fmt.Sprintf("Change %s's dual-control threshold in %s from %s to %s", slug, cur.Code, before.Text(), after.Text())
}

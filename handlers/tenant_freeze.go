package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// TenantFreezeConfirm asks before freezing (freeze true) or unfreezing a
// tenant, saying what will happen to its agents; freezing asks for the
// reason.
func (h *Console) tenantFreezeConfirm(c echo.Context, freeze bool) error {
	t, err := tenantInScope(c.Request().Context(), h.DB.Read(), CurrentPrincipal(c), c.Param("slug"))
	if err != nil {
		return err
	}
	return renderFreeze(c, http.StatusOK, views.TenantFreezeView{Tenant: t, Freeze: freeze})
}

func renderFreeze(c echo.Context, status int, v views.TenantFreezeView) error {
	title := "Freeze "
	if !v.Freeze {
		title = "Unfreeze "
	}
	page := PageFor(c, title+v.Tenant.Slug)
	page.Active = "/tenants"
	return Render(c, status, page, views.TenantFreezeConfirm(page, v))
}

// TenantFreeze freezes a tenant; TenantUnfreeze unfreezes it. Pressing it
// again changes nothing and records nothing.
func (h *Console) TenantFreeze(c echo.Context) error   { return h.tenantFreeze(c, true) }
func (h *Console) TenantUnfreeze(c echo.Context) error { return h.tenantFreeze(c, false) }

// TenantFreezeConfirm and TenantUnfreezeConfirm ask before the change.
func (h *Console) TenantFreezeConfirm(c echo.Context) error   { return h.tenantFreezeConfirm(c, true) }
func (h *Console) TenantUnfreezeConfirm(c echo.Context) error { return h.tenantFreezeConfirm(c, false) }

func (h *Console) tenantFreeze(c echo.Context, freeze bool) error {
	done, noop := "frozen", "already_frozen"
	if !freeze {
		done, noop = "unfrozen", "already_unfrozen"
	}
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(c.FormValue("reason"))
	// Unfreezing loosens (docs/changes.md): a second admin approves it.
	if ch, err := h.govern(c, user, changes.Proposal{Kind: changes.TenantFreeze, TenantID: t.ID, TenantSlug: t.Slug, Subject: t.Slug,
		Summary: "Unfreeze tenant " + t.Slug, Before: changes.Frozen{Frozen: t.Frozen}, After: changes.Frozen{Frozen: freeze}}); err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	changed, err := tenants.SetFrozen(ctx, h.DB, principalActor(user), t.ID, freeze, reason)
	if p := problem.From(err); err != nil && p.Kind == problem.KindUnprocessable {
		return renderFreeze(c, http.StatusUnprocessableEntity, views.TenantFreezeView{Tenant: t, Freeze: freeze, Reason: reason, Errors: views.FieldErrors{"reason": p.Message}})
	}
	if err != nil {
		return err
	}
	result := done
	if !changed {
		result = noop
	}
	return seeOther(c, "/tenants/"+t.Slug+"?done="+result)
}

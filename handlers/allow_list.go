package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/allowlist"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// AllowList shows a tenant's allow-list (docs/redaction.md) to an admin
// whose scope holds the tenant.
func (h *Console) AllowList(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := tenantInScope(ctx, h.DB.Read(), CurrentPrincipal(c), c.Param("slug"))
	if err != nil {
		return err
	}
	v := views.AllowListView{Tenant: t}
	switch c.QueryParam("done") {
	case "added":
		v.Notice = "Term added."
	case "removed":
		v.Notice = "Term removed."
	}
	return h.renderAllowList(c, http.StatusOK, v)
}

func (h *Console) renderAllowList(c echo.Context, status int, v views.AllowListView) error {
	terms, err := allowlist.List(c.Request().Context(), h.DB.Read(), v.Tenant.ID)
	if err != nil {
		return err
	}
	v.Terms = terms
	page := PageFor(c, "Allow-list of "+v.Tenant.Slug)
	page.Active = "/tenants"
	return Render(c, status, page, views.AllowList(page, v))
}

// AllowListAdd puts a term on the tenant's list.
func (h *Console) AllowListAdd(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	typed := strings.TrimSpace(c.FormValue("term"))
	err = allowlist.Add(ctx, h.DB, principalActor(user), t.ID, t.Slug, typed)
	if errors.Is(err, allowlist.ErrBadTerm) || errors.Is(err, allowlist.ErrExists) || errors.Is(err, allowlist.ErrFull) {
		msg := err.Error()
		return h.renderAllowList(c, http.StatusUnprocessableEntity, views.AllowListView{Tenant: t, Typed: typed,
			Errors: views.FieldErrors{"term": strings.ToUpper(msg[:1]) + msg[1:] + "."}})
	}
	if err != nil {
		return err
	}
	return seeOther(c, "/tenants/"+t.Slug+"/allow-list?done=added")
}

// AllowListRemoveConfirm asks before taking a term off the list.
func (h *Console) AllowListRemoveConfirm(c echo.Context) error {
	t, err := tenantInScope(c.Request().Context(), h.DB.Read(), CurrentPrincipal(c), c.Param("slug"))
	if err != nil {
		return err
	}
	page := PageFor(c, "Remove a term")
	page.Active = "/tenants"
	return Render(c, http.StatusOK, page, views.AllowListRemoveConfirm(page, views.AllowListRemoveView{Tenant: t, Term: c.QueryParam("term")}))
}

// AllowListRemove takes a term off the list.
func (h *Console) AllowListRemove(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	err = allowlist.Remove(ctx, h.DB, principalActor(user), t.ID, t.Slug, c.FormValue("term"))
	if errors.Is(err, store.ErrNotFound) {
		return problem.NotFound("not_found", "That term is not on the allow-list.")
	}
	if err != nil {
		return err
	}
	return seeOther(c, "/tenants/"+t.Slug+"/allow-list?done=removed")
}

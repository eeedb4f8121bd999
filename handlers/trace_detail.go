package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/views"
)

// TraceDetail shows one journey: who asked, under which release, what it
// cost, and each step of its journal. 404 when unknown, and the same 404
// when its tenant is outside the user's scope (which ids exist in other
// tenants is not theirs to learn).
func (h *Console) TraceDetail(c echo.Context) error {
	ctx := c.Request().Context()
	j, err := journeys.GetJourney(ctx, h.DB.Read(), c.Param("id"))
	if err != nil {
		return err
	}
	if p := CurrentPrincipal(c); p == nil || !p.InTenant(j.TenantSlug) {
		return journeys.ErrNotFound
	}
	v := views.TraceView{Journey: j, Now: time.Now()}
	if v.PrincipalName, err = principals.NameOf(ctx, h.DB, j.PrincipalID); err != nil {
		return err
	}
	switch a, err := approvals.ByJourney(ctx, h.DB.Read(), j.ID); {
	case err == nil:
		v.ActionID = a.ID
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if v.ModelCalls, err = models.CallsOfJourney(ctx, h.DB.Read(), j.ID); err != nil {
		return err
	}
	page := PageFor(c, "Journey "+j.ID)
	page.Active = "/traces"
	return Render(c, http.StatusOK, page, views.TraceDetail(page, v))
}

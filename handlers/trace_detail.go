package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/views"
)

// TraceDetail shows one journey: who asked, under which release, what it
// cost, how its route was labelled, and each step of its journal. 404
// when unknown, and the same 404 when its tenant is outside the user's
// scope (which ids exist in other tenants is not theirs to learn).
func (h *Console) TraceDetail(c echo.Context) error {
	j, err := h.journeyInScope(c)
	if err != nil {
		return err
	}
	v, err := h.traceView(c, j)
	if err != nil {
		return err
	}
	v.Notice = doneNotice(c, map[string]string{"labelled": "Label saved.", "label_unchanged": "That was already the label; nothing changed."})
	return h.renderTrace(c, http.StatusOK, v)
}

// journeyInScope loads the journey named in the path, or the same 404 for
// one outside the user's tenants.
func (h *Console) journeyInScope(c echo.Context) (journeys.Journey, error) {
	j, err := journeys.GetJourney(c.Request().Context(), h.DB.Read(), c.Param("id"))
	if err != nil {
		return journeys.Journey{}, err
	}
	if p := CurrentPrincipal(c); p == nil || !p.InTenant(j.TenantSlug) {
		return journeys.Journey{}, journeys.ErrNotFound
	}
	return j, nil
}

func (h *Console) traceView(c echo.Context, j journeys.Journey) (views.TraceView, error) {
	ctx := c.Request().Context()
	v := views.TraceView{Journey: j, Now: time.Now()}
	var err error
	if v.PrincipalName, err = principals.NameOf(ctx, h.DB, j.PrincipalID); err != nil {
		return v, err
	}
	switch a, err := approvals.ByJourney(ctx, h.DB.Read(), j.ID); {
	case err == nil:
		v.ActionID = a.ID
	case !errors.Is(err, store.ErrNotFound):
		return v, err
	}
	if v.ModelCalls, err = models.CallsOfJourney(ctx, h.DB.Read(), j.ID); err != nil {
		return v, err
	}
	switch l, err := routelabels.Get(ctx, h.DB.Read(), j.ID); {
	case err == nil:
		v.Label = &l
		v.LabelForm.Verdict = map[bool]string{true: "right", false: "wrong"}[l.Correct]
		if !l.Correct {
			v.LabelForm.Expected = l.Expected
			if l.Expected == "" {
				v.LabelForm.Expected = routelabels.NoSkill
			}
		}
	case !errors.Is(err, routelabels.ErrNotLabelled):
		return v, err
	}
	user := CurrentPrincipal(c)
	v.CanLabel = h.Runtime != nil && user.HasAnyRole(identity.RoleOncall, identity.RoleAdmin) &&
		j.Status != journeys.StatusRunning && j.Status != journeys.StatusAwaitingApproval
	if v.CanLabel {
		if v.LabelSkills, err = h.Runtime.SkillNames(ctx); err != nil {
			return v, err
		}
	}
	return v, nil
}

func (h *Console) renderTrace(c echo.Context, status int, v views.TraceView) error {
	page := PageFor(c, "Journey "+v.Journey.ID)
	page.Active = "/traces"
	return Render(c, status, page, views.TraceDetail(page, v))
}

package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/views"
)

// RunbookActionConfirm asks before a runbook's action runs: it says
// exactly what will change (for a rollback, from which release to which,
// with the diff) and asks for a reason. The form carries a one-time token
// made now, which Run keeps as the run's idempotency key.
func (h *Console) RunbookActionConfirm(c echo.Context) error {
	v, err := h.runbookConfirmView(c)
	if err != nil {
		return err
	}
	v.Token = newRunToken()
	return renderRunbookConfirm(c, http.StatusOK, v)
}

// RunbookAction runs the action once per token and shows its result (303).
// Without a reason the confirmation comes back with a 422 and nothing
// changes.
func (h *Console) RunbookAction(c echo.Context) error {
	rb, actionID := c.Param("id"), c.Param("action")
	reason, token := c.FormValue("reason"), c.FormValue("token")
	params, _, err := h.alertParams(c)
	if err != nil {
		return err
	}
	run, err := runbooks.RunWith(c.Request().Context(), h.runbookDeps(), CurrentPrincipal(c), rb, actionID, params, reason, token)
	if errors.Is(err, runbooks.ErrReasonRequired) || errors.Is(err, runbooks.ErrReasonTooLong) {
		v, verr := h.runbookConfirmView(c)
		if verr != nil {
			return verr
		}
		v.Token, v.Reason = token, reason
		v.Errors = views.FieldErrors{"reason": err.(*problem.Error).Message}
		return renderRunbookConfirm(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	return seeOther(c, "/runbooks/"+run.Runbook+"/runs/"+run.ID)
}

func (h *Console) runbookConfirmView(c echo.Context) (views.RunbookConfirmView, error) {
	if !CurrentPrincipal(c).HasAnyRole(runbooks.Roles...) {
		return views.RunbookConfirmView{}, Forbidden("Only on-call and admins may press a runbook's buttons.")
	}
	rb, err := h.runbook(c.Param("id"))
	if err != nil {
		return views.RunbookConfirmView{}, err
	}
	a := rb.Action(c.Param("action"))
	if a == nil {
		return views.RunbookConfirmView{}, problem.NotFound("not_found", "Runbook "+rb.Title+" has no such action.")
	}
	ctx := c.Request().Context()
	params, from, err := h.alertParams(c)
	if err != nil {
		return views.RunbookConfirmView{}, err
	}
	filled, missing := a.Fill(params)
	if len(missing) > 0 {
		return views.RunbookConfirmView{}, runbooks.ErrMissingParams(missing)
	}
	plan, err := runbooks.PlanAction(ctx, h.runbookDeps(), filled)
	if err != nil {
		return views.RunbookConfirmView{}, err
	}
	v := views.RunbookConfirmView{Runbook: rb, Action: filled, Plan: plan}
	if from != nil {
		v.Alert = from.Alert.ID
	}
	if plan.From != "" {
		from, err := releases.Get(ctx, h.DB.Read(), plan.From)
		if err != nil {
			return v, err
		}
		to, err := releases.Get(ctx, h.DB.Read(), plan.To)
		if err != nil {
			return v, err
		}
		v.Diff = &views.ReleaseDiff{From: from, To: to, Changed: plan.Diff}
	}
	return v, nil
}

func renderRunbookConfirm(c echo.Context, status int, v views.RunbookConfirmView) error {
	page := PageFor(c, strings.TrimSuffix(v.Action.Label, "?"))
	page.Active = "/runbooks"
	return Render(c, status, page, views.RunbookConfirm(page, v))
}

// newRunToken is a confirmation page's one-time token.
func newRunToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

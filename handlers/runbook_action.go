package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
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
	v.Seal = h.sealBound(v)
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
	confirmed, err := h.checkBound(c, rb, actionID, params, token)
	if err != nil {
		return err
	}
	// What runs is exactly what the confirmation showed.
	for name, v := range confirmed {
		params[name] = v
	}
	run, err := runbooks.RunWith(c.Request().Context(), h.runbookDeps(), CurrentPrincipal(c), rb, actionID, params, reason, token)
	if errors.Is(err, runbooks.ErrReasonRequired) || errors.Is(err, runbooks.ErrReasonTooLong) {
		v, verr := h.runbookConfirmView(c)
		if verr != nil {
			return verr
		}
		v.Token, v.Reason = token, reason
		v.Seal = h.sealBound(v)
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
	if err := runbooks.CheckPublished(ctx, h.DB.Read(), rb, *a); err != nil {
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
	v := views.RunbookConfirmView{Runbook: rb, Action: filled, Plan: plan, Bound: bound(*a, params)}
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

// bound are the values the action's parameters resolved to from the
// alert ($tool → lookup_order): what the confirmation shows and the press
// must carry back unchanged. Empty for an action without parameters.
func bound(a runbooks.Action, params map[string]string) map[string]string {
	needs := a.Needs()
	if len(needs) == 0 {
		return nil
	}
	out := make(map[string]string, len(needs))
	for _, name := range needs {
		out[name] = params[name]
	}
	return out
}

// boundText is bound values in one fixed order, as sealed.
func boundText(m map[string]string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(name + "=" + m[name] + "\n")
	}
	return b.String()
}

// boundAAD ties sealed values to one confirmation: its runbook, action,
// alert and one-time token.
func boundAAD(runbook, action, alert, token string) string {
	return "runbook-confirm\x00" + runbook + "\x00" + action + "\x00" + alert + "\x00" + token
}

// sealBound seals the confirmation's values, so a press can tell values
// altered in the form from an alert that changed since.
func (h *Console) sealBound(v views.RunbookConfirmView) string {
	if len(v.Bound) == 0 || h.Sealer == nil {
		return ""
	}
	return h.Sealer.Seal([]byte(boundText(v.Bound)), boundAAD(v.Runbook.ID, v.Action.ID, v.Alert, v.Token))
}

// Refusals of a press whose confirmed values no longer hold.
var errBoundAltered = problem.Invalid("confirmation_altered",
	"The values this confirmation showed were altered in the form: nothing was changed. Open the action again from the alert and confirm from there.")

// checkBound refuses a press whose parameters differ from what its
// confirmation showed: values altered in the form (400), or an alert that
// now resolves to other values than were confirmed (409, naming both).
// Either way nothing runs. It returns the confirmed values; an action
// without parameters, or a press without an alert (refused later as
// missing_parameters), passes with none.
func (h *Console) checkBound(c echo.Context, runbookID, actionID string, params map[string]string, token string) (map[string]string, error) {
	rb, err := h.runbook(runbookID)
	if err != nil {
		return nil, err
	}
	a := rb.Action(actionID)
	if a == nil || len(a.Needs()) == 0 || params == nil {
		return nil, nil
	}
	form, err := c.FormParams()
	if err != nil {
		return nil, errBoundAltered
	}
	confirmed := map[string]string{}
	for _, name := range a.Needs() {
		v, ok := form["param_"+name]
		if !ok || len(v) != 1 {
			return nil, errBoundAltered
		}
		confirmed[name] = v[0]
	}
	if h.Sealer != nil {
		pt, err := h.Sealer.Open(c.FormValue("bound"), boundAAD(rb.ID, a.ID, params["alert"], token))
		if err != nil || string(pt) != boundText(confirmed) {
			return nil, errBoundAltered
		}
	}
	var changed []string
	for _, name := range a.Needs() {
		if params[name] != confirmed[name] {
			now := params[name]
			if now == "" {
				now = "nothing"
			}
			changed = append(changed, fmt.Sprintf("%s is now %s (you confirmed %s)", name, now, confirmed[name]))
		}
	}
	if len(changed) > 0 {
		return nil, problem.Conflict("alert_changed", "The alert changed since you confirmed: "+strings.Join(changed, ", ")+
			". Nothing was changed. Open the action again from the alert to confirm what it names now.")
	}
	return confirmed, nil
}

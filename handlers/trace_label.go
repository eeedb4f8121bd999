package handlers

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/views"
)

// TraceLabel labels a journey's route right or wrong (and where it should
// have gone). A bad label comes back on the trace page with a 422 and the
// reviewer's choice; a journey outside their tenants is a 404.
func (h *Console) TraceLabel(c echo.Context) error {
	j, err := h.journeyInScope(c)
	if err != nil {
		return err
	}
	user := CurrentPrincipal(c)
	by := routelabels.Who{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: user.ID}, Name: user.DisplayName()}
	form := views.LabelForm{Verdict: c.FormValue("verdict"), Expected: c.FormValue("expected")}
	changed, err := h.Runtime.LabelRoute(c.Request().Context(), by, j, form.Verdict, form.Expected)
	var inv *store.ValidationError
	switch {
	case errors.As(err, &inv):
		v, err := h.traceView(c, j)
		if err != nil {
			return err
		}
		form.Errors = views.FieldErrors(inv.Fields)
		v.LabelForm = form
		return h.renderTrace(c, http.StatusUnprocessableEntity, v)
	case err != nil:
		return err
	}
	done := map[bool]string{true: "labelled", false: "label_unchanged"}[changed]
	return seeOther(c, "/traces/"+url.PathEscape(j.ID)+"?done="+done)
}

package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// ModelDisableConfirm asks before switching a deployment off, like every
// other switch: it says what stops (the alias's calls go to its other
// deployments, or fail when it is the last one on) and asks for the
// reason.
func (h *Console) ModelDisableConfirm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), modelChange); err != nil {
		return err
	}
	v, err := h.modelSwitchView(c)
	if err != nil {
		return err
	}
	return renderModelDisable(c, http.StatusOK, v)
}

// ModelDisable switches a deployment off with the reason typed, redacted
// as every switch's reason is (it is kept in the audit trail). Without a
// reason the confirmation comes back with a 422 and nothing changes;
// pressing it again changes and records nothing.
func (h *Console) ModelDisable(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, modelChange); err != nil {
		return err
	}
	v, err := h.modelSwitchView(c)
	if err != nil {
		return err
	}
	v.Reason = c.FormValue("reason")
	changed, err := models.Switch(c.Request().Context(), h.DB, principalActor(user), v.Deployment.Name, false, h.redact(v.Reason))
	if p := problem.From(err); err != nil && p.Kind == problem.KindUnprocessable {
		v.Errors = views.FieldErrors{"reason": p.Message}
		return renderModelDisable(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	if !changed {
		return seeOther(c, "/models?done=already_off")
	}
	return seeOther(c, "/models?done=disabled")
}

// ModelEnable switches a deployment on again: one press, no confirmation
// (it restores what was running before). Pressing it again changes and
// records nothing.
func (h *Console) ModelEnable(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, modelChange); err != nil {
		return err
	}
	changed, err := models.Switch(c.Request().Context(), h.DB, principalActor(user), c.Param("name"), true, "")
	if err != nil {
		return err
	}
	if !changed {
		return seeOther(c, "/models?done=already_on")
	}
	return seeOther(c, "/models?done=enabled")
}

// modelSwitchView is the deployment a switch URL names, with the other
// deployments of its alias that are on: 404 when there is none.
func (h *Console) modelSwitchView(c echo.Context) (views.ModelSwitchView, error) {
	ctx := c.Request().Context()
	d, err := models.Get(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return views.ModelSwitchView{}, err
	}
	all, err := models.List(ctx, h.DB.Read())
	if err != nil {
		return views.ModelSwitchView{}, err
	}
	v := views.ModelSwitchView{Deployment: d}
	for _, o := range all {
		if o.Alias == d.Alias && o.Name != d.Name && o.Enabled {
			v.Others = append(v.Others, o.Name)
		}
	}
	return v, nil
}

func renderModelDisable(c echo.Context, status int, v views.ModelSwitchView) error {
	page := PageFor(c, "Switch off "+v.Deployment.Name)
	page.Active = "/models"
	return Render(c, status, page, views.ModelDisableConfirm(page, v))
}

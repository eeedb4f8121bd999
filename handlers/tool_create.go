package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/views"
)

const catalogChange = "Changing the tool catalog"

// ToolNew shows the form that adds a tool.
func (h *Console) ToolNew(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), catalogChange); err != nil {
		return err
	}
	form := views.ToolForm{
		Impact: string(risk.ImpactLow), Reversibility: string(risk.Reversible), Provider: tools.ProviderBuiltin,
		Timeout: "5000", MaxAttempts: "3", ApprovalTTL: "86400", UnitCost: "0.00",
		ArgsSchema: `{"type": "object"}`, Enabled: true,
	}
	return renderToolForm(c, h.DB, http.StatusOK, views.ToolFormView{New: true, Form: form})
}

// ToolCreate adds a tool to the catalog.
func (h *Console) ToolCreate(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, catalogChange); err != nil {
		return err
	}
	form, t, errs := parseToolForm(ctx, c, h.DB, strings.TrimSpace(c.FormValue("name")))
	if len(errs) == 0 {
		err := catalog.Create(ctx, h.DB, principalActor(user), t)
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case errors.Is(err, catalog.ErrExists):
			errs["name"] = "There is already a tool " + t.Name + ". Edit it from the catalog instead."
		case err != nil:
			return err
		default:
			return seeOther(c, "/tools?done=created")
		}
	}
	return renderToolForm(c, h.DB, http.StatusUnprocessableEntity, views.ToolFormView{New: true, Form: form, Errors: errs})
}

package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/views"
)

// ToolEditForm shows a tool's definition for editing.
func (h *Console) ToolEditForm(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireAllTenants(CurrentPrincipal(c), catalogChange); err != nil {
		return err
	}
	t, err := catalog.Get(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	return renderToolForm(c, h.DB, http.StatusOK, views.ToolFormView{Form: toolForm(t), Enabled: t.Enabled})
}

// ToolUpdate saves a tool's definition. Its switch is left as it is: it
// has its own buttons and audit verbs.
func (h *Console) ToolUpdate(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, catalogChange); err != nil {
		return err
	}
	current, err := catalog.Get(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	form, t, errs := parseToolForm(ctx, c, h.DB, current.Name)
	if len(errs) > 0 {
		return renderToolForm(c, h.DB, http.StatusUnprocessableEntity, views.ToolFormView{Form: form, Enabled: current.Enabled, Errors: errs})
	}
	changed, err := catalog.Update(ctx, h.DB, principalActor(user), t)
	if errs, ok := fieldErrors(err); ok {
		return renderToolForm(c, h.DB, http.StatusUnprocessableEntity, views.ToolFormView{Form: form, Enabled: current.Enabled, Errors: errs})
	}
	if err != nil {
		return err
	}
	done := "updated"
	if len(changed) == 0 {
		done = "unchanged"
	}
	return seeOther(c, "/tools?done="+done)
}

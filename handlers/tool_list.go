package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

var toolNotices = map[string]string{
	"created":     "Tool added to the catalog.",
	"updated":     "Tool saved.",
	"unchanged":   "Nothing was different; nothing changed.",
	"enabled":     "Tool switched on.",
	"disabled":    "Tool switched off: calls to it now fail with 403 tool_disabled.",
	"already_on":  "The tool was already on; nothing changed.",
	"already_off": "The tool was already off; nothing changed.",
}

// ToolList shows the tool catalog with each tool's switch.
func (h *Console) ToolList(c echo.Context) error {
	ts, err := catalog.List(c.Request().Context(), h.DB.Read())
	if err != nil {
		return err
	}
	page := PageFor(c, "Tool catalog")
	v := views.ToolsView{Tools: ts, CanEdit: CurrentPrincipal(c).AllTenantScope(), Notice: doneNotice(c, toolNotices)}
	if v.Switches, err = catalog.SwitchStates(c.Request().Context(), h.DB.Read()); err != nil {
		return err
	}
	if v.Owners, err = owners.Of(c.Request().Context(), h.DB.Read(), owners.Tool); err != nil {
		return err
	}
	return Render(c, http.StatusOK, page, views.ToolList(page, v))
}

func renderToolForm(c echo.Context, st *store.DB, status int, v views.ToolFormView) error {
	ts, err := catalog.List(c.Request().Context(), st.Read())
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Name != v.Form.Name {
			v.ToolNames = append(v.ToolNames, t.Name)
		}
	}
	title := "Add a tool"
	if !v.New {
		title = "Edit " + v.Form.Name
	}
	page := PageFor(c, title)
	page.Active = "/tools"
	return Render(c, status, page, views.ToolEdit(page, v))
}

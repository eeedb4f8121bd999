package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/owners"
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
	pending, err := changes.PendingOn(ctx, h.DB.Read(), t.Name, time.Now(), changes.ToolRisk, changes.ToolSwitch)
	if err != nil {
		return err
	}
	v := views.ToolFormView{Form: toolForm(t), Enabled: t.Enabled, Pending: pending}
	if v.Owner, err = owners.Get(ctx, h.DB.Read(), owners.Tool, t.Name); err != nil {
		return err
	}
	if v.OwnerPending, err = changes.PendingOn(ctx, h.DB.Read(), t.Name, time.Now(), changes.OwnerChange); err != nil {
		return err
	}
	var status int
	v.OwnerForm, status = refusedOwnerForm(c)
	return renderToolForm(c, h.DB, status, v)
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
	whole, err := json.Marshal(t)
	if err != nil {
		return err
	}
	before := changes.ToolRiskValue{Impact: current.Impact, Reversibility: current.Reversibility}
	after := changes.ToolRiskValue{Impact: t.Impact, Reversibility: t.Reversibility, Tool: whole}
	if ch, err := h.govern(c, user, changes.Proposal{Kind: changes.ToolRisk, Subject: t.Name,
		Summary: fmt.Sprintf("Change tool %s from %s impact, %s to %s impact, %s", t.Name, before.Impact, before.Reversibility, after.Impact, after.Reversibility),
		Before:  before, After: after}); err != nil || ch != nil {
		return changeRedirect(c, ch, err)
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

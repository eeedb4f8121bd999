package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/money"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/views"
)

// BudgetEdit sets a tenant's budget: period, limit and alert threshold.
// The limit is typed in currency units and kept as exact micro-units.
func (h *Console) BudgetEdit(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("tenant"))
	if err != nil {
		return err
	}
	form := views.BudgetForm{Period: c.FormValue("period"), Limit: c.FormValue("limit"), AlertPercent: c.FormValue("alert_percent")}
	spec := budgets.Spec{TenantID: t.ID, Period: strings.TrimSpace(form.Period)}
	errs := views.FieldErrors{}
	if micros, msg := money.ParseMicros(form.Limit); msg != "" {
		errs["limit"] = msg
	} else {
		spec.LimitMicros = micros
	}
	if n, msg := formInt(form.AlertPercent, "Enter a whole percentage from 1 to 100."); msg != "" {
		errs["alert_percent"] = msg
	} else {
		spec.AlertPercent = n
	}
	for field, msg := range spec.Validate() {
		if _, seen := errs[field]; !seen {
			errs[field] = msg
		}
	}
	if len(errs) > 0 {
		return renderBudgets(c, h.DB, http.StatusUnprocessableEntity, "", t.ID, form, errs)
	}
	before := changes.Budget{}
	switch b, err := budgets.Get(ctx, h.DB.Read(), t.ID); {
	case err == nil:
		before = changes.Budget{Exists: true, Period: b.Period, LimitMicros: b.LimitMicros, AlertPercent: b.AlertPercent}
	case !errors.Is(err, budgets.ErrNoBudget):
		return err
	}
	after := changes.Budget{Exists: true, Period: spec.Period, LimitMicros: spec.LimitMicros, AlertPercent: spec.AlertPercent}
	before.Shown, after.Shown = before.Text(), after.Text()
	if ch, err := h.govern(c, user, changes.Proposal{Kind: changes.BudgetLimit, TenantID: t.ID, TenantSlug: t.Slug, Subject: t.Slug,
		Summary: budgetSummary(t.Slug, before, after), Before: before, After: after}); err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	changed, err := budgets.SetAudited(ctx, h.DB, principalActor(user), spec, time.Now())
	if errs, ok := fieldErrors(err); ok {
		return renderBudgets(c, h.DB, http.StatusUnprocessableEntity, "", t.ID, form, errs)
	}
	if err != nil {
		return err
	}
	done := "saved"
	if !changed {
		done = "unchanged"
	}
	return seeOther(c, "/budgets?done="+done+"#budget-"+t.Slug)
}

// budgetSummary is the sentence a second admin reads about a budget change.
func budgetSummary(slug string, before, after changes.Budget) string {
	return fmt.Sprintf("Change %s's budget from %s to %s", slug, before.Text(), after.Text())
}

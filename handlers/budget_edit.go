package handlers

import (
	"database/sql"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/budget"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/views"
)

// BudgetEdit sets a tenant's budget: period, limit and alert threshold.
// The limit is typed in currency units and kept as exact micro-units.
func BudgetEdit(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		t, err := tenantInScope(ctx, st.Read(), user, c.Param("tenant"))
		if err != nil {
			return err
		}
		form := views.BudgetForm{Period: c.FormValue("period"), Limit: c.FormValue("limit"), AlertPercent: c.FormValue("alert_percent")}
		spec := budget.Spec{TenantID: t.ID, Period: strings.TrimSpace(form.Period)}
		errs := views.FieldErrors{}
		if micros, msg := parseMicros(form.Limit); msg != "" {
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
			return renderBudgets(c, st, http.StatusUnprocessableEntity, "", t.ID, form, errs)
		}

		changed := true
		err = st.Transact(ctx, func(tx *sql.Tx) error {
			details := map[string]any{"period": spec.Period, "limit_micros": spec.LimitMicros, "alert_percent": spec.AlertPercent}
			prev, err := budget.Get(ctx, tx, t.ID)
			switch {
			case errors.Is(err, budget.ErrNoBudget):
			case err != nil:
				return err
			case prev.Period == spec.Period && prev.LimitMicros == spec.LimitMicros && prev.AlertPercent == spec.AlertPercent:
				changed = false
				return nil
			default:
				details["previous_period"] = prev.Period
				details["previous_limit_micros"] = prev.LimitMicros
				details["previous_alert_percent"] = prev.AlertPercent
			}
			if err := budget.Set(ctx, tx, spec, time.Now()); err != nil {
				return err
			}
			_, err = audit.Append(ctx, tx, audit.Event{
				Actor:   principalActor(user),
				Tenant:  t.Slug,
				Verb:    "budget.set",
				Subject: audit.Subject{Type: "budget", ID: t.ID},
				Details: details,
			})
			return err
		})
		if err != nil {
			return err
		}
		done := "saved"
		if !changed {
			done = "unchanged"
		}
		return seeOther(c, "/budgets?done="+done+"#budget-"+t.Slug)
	}
}

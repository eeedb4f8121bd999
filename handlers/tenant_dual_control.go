package handlers

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/money"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// TenantDualControl sets the amount from which a tenant's actions in one
// currency need two distinct approvers. The form takes the currency's
// major units ("1000.00", "1000.000" for KWD); 0 turns dual control off
// for that currency.
func TenantDualControl(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		t, err := tenantInScope(ctx, st.Read(), CurrentPrincipal(c), c.Param("slug"))
		if err != nil {
			return err
		}
		code := strings.ToUpper(strings.TrimSpace(c.FormValue("currency")))
		if code == "" {
			code = "USD"
		}
		typed := c.FormValue("dual_control")
		errs := views.FieldErrors{}
		cur, err := money.ParseCurrency(code)
		if err != nil {
			errs["currency"] = "Use an ISO 4217 currency code, such as USD, EUR or KWD."
		} else if typed == "" {
			errs["dual_control"] = "Enter an amount, such as " + money.Example(cur) + "."
		}
		var minor int64
		if len(errs) == 0 {
			if minor, err = money.ParseDecimal(typed, cur); err != nil {
				errs["dual_control"] = refusalSentence(err)
			}
		}
		if len(errs) > 0 {
			v, err := tenantView(ctx, st.Read(), t)
			if err != nil {
				return err
			}
			v.DualControl, v.DualControlCurrency, v.Errors = typed, code, errs
			return renderTenantShow(c, 422, v)
		}
		from, err := store.ThresholdFor(ctx, st.Read(), t.ID, cur.Code)
		details := map[string]any{"currency": cur.Code, "to_minor": minor}
		if err == nil {
			details["from_minor"] = from
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return saveTenantSetting(c, st, t, "tenant.dual_control", "dual_control", details,
			func(ctx context.Context, tx *sql.Tx) (bool, error) {
				return store.SetThreshold(ctx, tx, t.ID, store.Threshold{Currency: cur.Code, Minor: minor})
			})
	}
}

// TenantDualControlRemove deletes a tenant's threshold in one currency:
// actions in it then need two approvers for any amount, so removing one
// can only make approval stricter and needs no confirmation.
func TenantDualControlRemove(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		t, err := tenantInScope(ctx, st.Read(), CurrentPrincipal(c), c.Param("slug"))
		if err != nil {
			return err
		}
		code := strings.ToUpper(strings.TrimSpace(c.FormValue("currency")))
		return saveTenantSetting(c, st, t, "tenant.dual_control_removed", "dual_control_removed", map[string]any{"currency": code},
			func(ctx context.Context, tx *sql.Tx) (bool, error) { return store.RemoveThreshold(ctx, tx, t.ID, code) })
	}
}

// TenantDualControlWindow sets, in hours, how far back actions on the same
// target add up for dual control.
func TenantDualControlWindow(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		t, err := tenantInScope(ctx, st.Read(), CurrentPrincipal(c), c.Param("slug"))
		if err != nil {
			return err
		}
		typed := strings.TrimSpace(c.FormValue("window_hours"))
		hours, err := strconv.Atoi(typed)
		// Range-check the number before it becomes a duration, which
		// would overflow for a large one.
		ok := err == nil && hours >= int(store.MinDualControlWindow/time.Hour) && hours <= int(store.MaxDualControlWindow/time.Hour)
		window := time.Duration(hours) * time.Hour
		if !ok {
			v, err := tenantView(ctx, st.Read(), t)
			if err != nil {
				return err
			}
			v.Window = typed
			v.Errors = views.FieldErrors{"window_hours": "Use a whole number of hours from 1 to 2160 (90 days)."}
			return renderTenantShow(c, 422, v)
		}
		return saveTenantSetting(c, st, t, "tenant.dual_control_window", "dual_control_window",
			map[string]any{"from_hours": int64(t.DualControlWindow / time.Hour), "to_hours": hours},
			func(ctx context.Context, tx *sql.Tx) (bool, error) {
				return store.SetDualControlWindow(ctx, tx, t.ID, window)
			})
	}
}

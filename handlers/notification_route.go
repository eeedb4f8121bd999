package handlers

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// NotificationRouteAdd adds a route.
func (h *Console) NotificationRouteAdd(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, notifyChange); err != nil {
		return err
	}
	f := views.RouteForm{Event: c.FormValue("event"), TenantID: c.FormValue("tenant"), ChannelID: c.FormValue("channel"),
		MinAmount: strings.TrimSpace(c.FormValue("min_amount")), Tools: strings.TrimSpace(c.FormValue("tools")), MinSeverity: c.FormValue("min_severity"),
		Recipients: strings.TrimSpace(c.FormValue("recipients"))}
	r := notify.Route{Event: f.Event, TenantID: f.TenantID, ChannelID: f.ChannelID, Tools: notify.SplitList(f.Tools), MinSeverity: f.MinSeverity,
		Recipients: notify.SplitList(f.Recipients)}
	errs := views.FieldErrors{}
	if f.MinAmount != "" {
		// In the action's currency, read with two decimals: the amount
		// routes compare is the action's minor units.
		minor, err := money.ParseDecimal(f.MinAmount, money.Currency{Exponent: 2})
		if err != nil {
			// The other fields' errors too, so one send shows them all.
			errs = views.FieldErrors(notify.ValidateRoute(r))
			errs["min_amount"] = "Enter the amount as a number such as 1000 or 1000.00."
		} else {
			r.MinAmountMinor = &minor
		}
	}
	if len(errs) == 0 {
		_, err := notify.AddRoute(c.Request().Context(), h.DB, principalActor(user), r, time.Now())
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case err != nil:
			return err
		default:
			return seeOther(c, "/notifications?done=route_added")
		}
	}
	return h.renderNotifications(c, http.StatusUnprocessableEntity, views.NotificationsView{RouteForm: f, RouteErrs: errs,
		Form: views.ChannelForm{Kind: notify.Slack, Port: "587", TLS: "starttls"}})
}

// NotificationRouteDeleteConfirm asks before removing a route, saying who
// stops hearing of what.
func (h *Console) NotificationRouteDeleteConfirm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), notifyChange); err != nil {
		return err
	}
	ctx := c.Request().Context()
	routes, err := notify.Routes(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	i := slices.IndexFunc(routes, func(r notify.Route) bool { return r.ID == c.Param("id") })
	if i < 0 {
		return notify.ErrRouteNotFound
	}
	v := views.RouteDeleteView{Route: routes[i]}
	if v.Route.TenantID != "" {
		t, err := tenants.ByID(ctx, h.DB.Read(), v.Route.TenantID)
		if err != nil {
			return err
		}
		v.Tenant = t.Slug
	}
	page := PageFor(c, "Remove route")
	page.Active = "/notifications"
	return Render(c, http.StatusOK, page, views.NotificationRouteDeleteConfirm(page, v))
}

// NotificationRouteDelete removes a route.
func (h *Console) NotificationRouteDelete(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, notifyChange); err != nil {
		return err
	}
	if err := notify.DeleteRoute(c.Request().Context(), h.DB, principalActor(user), c.Param("id")); err != nil {
		return err
	}
	return seeOther(c, "/notifications?done=route_deleted")
}

// NotificationSettingsSet changes the quiet time of alert pages, the
// reminder wait and the share of an action's lifetime after which it
// escalates.
func (h *Console) NotificationSettingsSet(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, notifyChange); err != nil {
		return err
	}
	quiet, esc, remind := strings.TrimSpace(c.FormValue("quiet_seconds")), strings.TrimSpace(c.FormValue("escalate_percent")), strings.TrimSpace(c.FormValue("remind_minutes"))
	errs := views.FieldErrors{}
	secs, msg := formInt(quiet, "The quiet time is a whole number of seconds from 0 to 86400.")
	if msg != "" {
		errs["quiet_seconds"] = msg
	}
	pct, msg := formInt(esc, "Escalate after 1 to 99 percent of an action's lifetime.")
	if msg != "" {
		errs["escalate_percent"] = msg
	}
	if remind == "" {
		remind = "0"
	}
	mins, msg := formInt(remind, "Remind after a whole number of minutes from 0 (never) to 10080 (a week).")
	if msg != "" {
		errs["remind_minutes"] = msg
	}
	// A blank Take time (a form from before it existed) keeps the current one.
	claim := strings.TrimSpace(c.FormValue("claim_minutes"))
	claimMins := -1
	if claim != "" {
		if claimMins, msg = formInt(claim, "A Take holds for a whole number of minutes from 1 to 1440."); msg != "" {
			errs["claim_minutes"] = msg
		}
	}
	if len(errs) == 0 {
		ctx := c.Request().Context()
		err := h.DB.Transact(ctx, func(tx *store.Tx) error {
			if claimMins >= 0 {
				if err := notify.SetClaimTime(ctx, tx, principalActor(user), time.Duration(claimMins)*time.Minute); err != nil {
					return err
				}
			}
			if err := notify.SetQuietTime(ctx, tx, principalActor(user), time.Duration(secs)*time.Second); err != nil {
				return err
			}
			if err := notify.SetReminderWait(ctx, tx, principalActor(user), time.Duration(mins)*time.Minute); err != nil {
				return err
			}
			return notify.SetEscalationPercent(ctx, tx, principalActor(user), pct)
		})
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case err != nil:
			return err
		default:
			return seeOther(c, "/notifications?done=settings_saved")
		}
	}
	return h.renderNotifications(c, http.StatusUnprocessableEntity, views.NotificationsView{Quiet: quiet, Escalate: esc, Remind: remind, Claim: claim, QuietErrs: errs,
		Form: views.ChannelForm{Kind: notify.Slack, Port: "587", TLS: "starttls"}})
}

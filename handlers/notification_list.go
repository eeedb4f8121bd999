package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// notifyChange is what changing notifications is called in refusals:
// channels and routes serve every tenant.
const notifyChange = "Changing notifications"

var notifyNotices = map[string]string{
	"created":        "Channel added. Send a test, then add a route so it hears something.",
	"saved":          "Channel saved.",
	"deleted":        "Channel deleted with its routes.",
	"test_ok":        "The test message was accepted by the channel.",
	"test_failed":    "The test message did not get through; the channel's error is shown with it.",
	"route_added":    "Route added. It counts from the next event.",
	"route_deleted":  "Route removed.",
	"settings_saved": "Timing saved.",
	"test_refused":   "The channel's breaker is open after repeated failures; the test was not sent. Try again in half a minute.",
	"channel_absent": "There is no such channel any more.",
}

// NotificationList shows the channels with their health, the routes and
// the quiet time; ?edit=NAME fills the channel form with that channel.
func (h *Console) NotificationList(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), notifyChange); err != nil {
		return err
	}
	done := c.QueryParam("done")
	v := views.NotificationsView{Notice: doneNotice(c, notifyNotices), Failed: done == "test_failed" || done == "test_refused",
		Form: views.ChannelForm{Kind: notify.Slack, Port: "587", TLS: "starttls"}}
	if name := c.QueryParam("edit"); name != "" {
		ch, err := notify.GetChannel(c.Request().Context(), h.DB.Read(), name)
		if err != nil {
			return err
		}
		v.Form = channelForm(ch)
	}
	return h.renderNotifications(c, http.StatusOK, v)
}

// channelForm is a channel's form, secrets left out.
func channelForm(ch notify.Channel) views.ChannelForm {
	f := views.ChannelForm{Existing: ch.Name, Name: ch.Name, Kind: ch.Kind, HasSecret: ch.HasSecret, Port: "587", TLS: "starttls"}
	if ch.Kind == notify.Email {
		f.Host, f.Port, f.TLS, f.Auth, f.Username, f.From, f.To = ch.Config.Host, strconv.Itoa(ch.Config.Port), ch.Config.TLS,
			ch.Config.Auth, ch.Config.Username, ch.Config.From, strings.Join(ch.Config.To, ", ")
	}
	return f
}

func (h *Console) renderNotifications(c echo.Context, status int, v views.NotificationsView) error {
	ctx := c.Request().Context()
	q := h.DB.Read()
	chans, err := notify.Channels(ctx, q)
	if err != nil {
		return err
	}
	var health = map[string]string{}
	if h.Notify != nil {
		for name, d := range h.Notify.Health() {
			health[name] = d.State
		}
	}
	for _, ch := range chans {
		v.Channels = append(v.Channels, views.ChannelRow{Channel: ch, Breaker: health[ch.Name]})
	}
	if v.Routes, err = notify.Routes(ctx, q); err != nil {
		return err
	}
	ts, err := tenants.List(ctx, h.DB, nil)
	if err != nil {
		return err
	}
	for _, t := range ts {
		v.Tenants = append(v.Tenants, views.TenantOption{ID: t.ID, Slug: t.Slug})
	}
	if v.Quiet == "" {
		quiet, err := notify.QuietTime(ctx, q)
		if err != nil {
			return err
		}
		v.Quiet = strconv.FormatInt(int64(quiet.Seconds()), 10)
	}
	if v.Escalate == "" {
		p, err := notify.EscalationPercent(ctx, q)
		if err != nil {
			return err
		}
		v.Escalate = strconv.Itoa(p)
	}
	if v.Remind == "" {
		d, err := notify.ReminderWait(ctx, q)
		if err != nil {
			return err
		}
		v.Remind = strconv.FormatInt(int64(d.Minutes()), 10)
	}
	if v.Claim == "" {
		d, err := notify.ClaimTime(ctx, q)
		if err != nil {
			return err
		}
		v.Claim = strconv.FormatInt(int64(d.Minutes()), 10)
	}
	page := PageFor(c, "Notifications")
	page.Active = "/notifications"
	return Render(c, status, page, views.NotificationList(page, v))
}

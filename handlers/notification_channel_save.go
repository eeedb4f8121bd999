package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// NotificationChannelCreate adds a channel.
func (h *Console) NotificationChannelCreate(c echo.Context) error {
	return h.saveChannel(c, "")
}

// NotificationChannelUpdate changes a channel; secret fields left blank
// keep the current secrets.
func (h *Console) NotificationChannelUpdate(c echo.Context) error {
	return h.saveChannel(c, c.Param("name"))
}

func (h *Console) saveChannel(c echo.Context, existing string) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, notifyChange); err != nil {
		return err
	}
	if h.Notify == nil {
		return problem.Unavailable("unavailable", "Notifications are not available in this Warden.", 0)
	}
	f := views.ChannelForm{Existing: existing, Name: strings.TrimSpace(c.FormValue("name")), Kind: c.FormValue("kind"),
		Host: strings.TrimSpace(c.FormValue("host")), Port: strings.TrimSpace(c.FormValue("port")), TLS: c.FormValue("tls"),
		Auth: c.FormValue("auth"), Username: strings.TrimSpace(c.FormValue("username")), From: strings.TrimSpace(c.FormValue("from")),
		To: strings.TrimSpace(c.FormValue("to"))}
	in := notify.Input{Name: f.Name, Kind: f.Kind,
		Config: notify.Config{Host: f.Host, TLS: f.TLS, Auth: f.Auth, Username: f.Username, From: f.From, To: notify.SplitList(f.To)},
		Secret: notify.Secret{URL: c.FormValue("url"), Password: c.FormValue("password"), SigningSecret: c.FormValue("signing_secret"),
			RoutingKey: c.FormValue("routing_key")}}
	errs := views.FieldErrors{}
	if f.Kind == notify.Email {
		if port, err := strconv.Atoi(f.Port); err == nil {
			in.Config.Port = port
		} else {
			errs["port"] = "The port is a number from 1 to 65535 (587 for STARTTLS, 465 for TLS)."
		}
	}
	if existing != "" {
		if ch, err := notify.GetChannel(c.Request().Context(), h.DB.Read(), existing); err == nil {
			f.HasSecret = ch.HasSecret && ch.Kind == f.Kind
		}
	}
	if len(errs) == 0 {
		_, err := h.Notify.SaveChannel(c.Request().Context(), principalActor(user), existing, in)
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case errors.Is(err, notify.ErrExists):
			errs["name"] = "There is already a channel " + f.Name + "."
		case err != nil:
			return err
		case existing != "":
			return seeOther(c, "/notifications?done=saved")
		default:
			return seeOther(c, "/notifications?done=created")
		}
	}
	return h.renderNotifications(c, http.StatusUnprocessableEntity, views.NotificationsView{Form: f, Errors: errs})
}

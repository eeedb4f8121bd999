package handlers

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/sessions"
	"github.com/wardenhq/warden/views"
)

const sessionPageSize = 50

var sessionListNotices = map[string]string{
	"revoked":        "Session revoked. Its next request lands on the sign-in page.",
	"already_ended":  "That session had already ended; nothing changed.",
	"revoked_all":    "All of the user's sessions are revoked. Their next request lands on the sign-in page.",
	"none_to_revoke": "The user had no session left; nothing changed.",
}

// SessionList lists the live console sessions, newest sign-in first, a
// page at a time: who, since when, last seen, from which address. It may
// be filtered to one user (?principal=).
func (h *Console) SessionList(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireAllTenants(CurrentPrincipal(c), sessionsScope); err != nil {
		return err
	}
	page, err := listPage(c, sessionPageSize)
	if err != nil {
		return err
	}
	principal := c.QueryParam("principal")
	paged, total, err := sessions.Active(ctx, h.DB.Read(), principal, h.SessionClock(), h.SessionPolicy, page)
	if err != nil {
		return err
	}
	v := views.SessionsView{Rows: paged.Rows, Total: total, Principal: principal, Notice: doneNotice(c, sessionListNotices), Self: currentSessionID(c), Now: time.Now()}
	if principal != "" {
		if v.PrincipalName, err = principals.NameOf(ctx, h.DB, principal); err != nil {
			return err
		}
	}
	v.NextPage, v.PrevPage = pageLinks("/sessions", url.Values{"principal": {principal}}, paged)
	p := PageFor(c, "Sessions")
	return Render(c, http.StatusOK, p, views.SessionList(p, v))
}

// sessionsScope: a user's sessions are bound to no one tenant, so only an
// admin of every tenant lists and revokes them.
const sessionsScope = "Signing people out"

// keySessionID is where the web package puts the request's session id.
const keySessionID = "warden.session_id"

// SetSessionID records the id of the request's session, so a page can
// tell the user's own session apart.
func SetSessionID(c echo.Context, id string) { c.Set(keySessionID, id) }

func currentSessionID(c echo.Context) string {
	id, _ := c.Get(keySessionID).(string)
	return id
}

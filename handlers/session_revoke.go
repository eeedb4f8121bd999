package handlers

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/sessions"
	"github.com/wardenhq/warden/views"
)

// SessionRevokeConfirm asks before revoking one session, saying whose.
func (h *Console) SessionRevokeConfirm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), sessionsScope); err != nil {
		return err
	}
	r, live, err := sessions.ByID(c.Request().Context(), h.DB.Read(), c.Param("id"), h.SessionClock(), h.SessionPolicy)
	if err != nil {
		return err
	}
	page := PageFor(c, "Revoke session")
	page.Active = "/sessions"
	return Render(c, http.StatusOK, page, views.SessionRevokeConfirm(page, views.SessionRevokeView{Session: r, Live: live, Own: r.ID == currentSessionID(c)}))
}

// SessionRevoke ends one session at once; it is audited. Revoking an
// ended session changes and records nothing.
func (h *Console) SessionRevoke(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), sessionsScope); err != nil {
		return err
	}
	changed, err := sessions.Revoke(c.Request().Context(), h.DB, principalActor(CurrentPrincipal(c)), c.Param("id"), h.SessionClock())
	if err != nil {
		return err
	}
	if !changed {
		return seeOther(c, "/sessions?done=already_ended")
	}
	return seeOther(c, "/sessions?done=revoked")
}

// SessionRevokeAllConfirm asks before revoking every session of a user.
func (h *Console) SessionRevokeAllConfirm(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireAllTenants(CurrentPrincipal(c), sessionsScope); err != nil {
		return err
	}
	id := c.Param("principal")
	if _, err := principals.ByID(ctx, h.DB, id); err != nil {
		return err
	}
	name, err := principals.NameOf(ctx, h.DB, id)
	if err != nil {
		return err
	}
	_, total, err := sessions.Active(ctx, h.DB.Read(), id, h.SessionClock(), h.SessionPolicy, store.Page{Size: 1})
	if err != nil {
		return err
	}
	page := PageFor(c, "Revoke sessions of "+name)
	page.Active = "/sessions"
	return Render(c, http.StatusOK, page, views.SessionRevokeAllConfirm(page, views.SessionRevokeAllView{
		PrincipalID: id, Name: name, Live: total, Own: id == CurrentPrincipal(c).ID,
	}))
}

// SessionRevokeAll ends every session of one user at once, with one audit
// event; with none left, nothing is recorded.
func (h *Console) SessionRevokeAll(c echo.Context) error {
	ctx := c.Request().Context()
	if err := requireAllTenants(CurrentPrincipal(c), sessionsScope); err != nil {
		return err
	}
	id := c.Param("principal")
	n, err := sessions.RevokeAll(ctx, h.DB, principalActor(CurrentPrincipal(c)), id, h.SessionClock())
	if err != nil {
		return err
	}
	done := "revoked_all"
	if n == 0 {
		done = "none_to_revoke"
	}
	return seeOther(c, "/sessions?"+url.Values{"done": {done}}.Encode())
}

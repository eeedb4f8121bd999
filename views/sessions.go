package views

import (
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/sessions"
)

// SessionsView is one page of the live console sessions.
type SessionsView struct {
	Rows          []sessions.Row
	Total         int    // live sessions matching the filter
	Principal     string // filter: one user's id, or empty for everyone
	PrincipalName string // the filtered user's display name
	Self          string // the viewer's own session id
	PrevPage      string
	NextPage      string
	Notice        string
	Now           time.Time // for "how long ago"
}

// SessionRevokeView asks before revoking one session.
type SessionRevokeView struct {
	Session sessions.Row
	Live    bool // false: it has already ended, confirming changes nothing
	Own     bool // the admin's own session
}

func (v SessionRevokeView) confirm() ConfirmView {
	c := ConfirmView{
		Back:      "/sessions",
		BackLabel: "← Sessions",
		Title:     text("Revoke this session of " + v.Session.Name + "?"),
		Facts:     sessionFacts(v.Session),
		Effect:    text("The session ends at once: its next request, from wherever its cookie is, lands on the sign-in page. The user's other sessions go on. The revocation is recorded in the audit trail."),
		Action:    templ.SafeURL("/sessions/" + v.Session.ID + "/revoke"),
		Submit:    "Revoke session",
		Danger:    true,
		Cancel:    "/sessions",
	}
	switch {
	case !v.Live:
		c.Warning, c.WarningID = text("This session has already ended. Confirming changes nothing."), "session-ended"
	case v.Own:
		c.Warning, c.WarningID = text("This is your own session: you will be signed out."), "session-own"
	}
	return c
}

// SessionRevokeAllView asks before revoking every session of one user.
type SessionRevokeAllView struct {
	PrincipalID string
	Name        string
	Live        int  // live sessions now
	Own         bool // the admin's own sessions
}

func (v SessionRevokeAllView) confirm() ConfirmView {
	c := ConfirmView{
		Back:      "/sessions",
		BackLabel: "← Sessions",
		Title:     text("Revoke every session of " + v.Name + "?"),
		Summary:   v.Name + " has " + strconv.Itoa(v.Live) + " live session(s).",
		Effect:    text("Every session of this user ends at once, in every browser: their next request lands on the sign-in page. Signing in again reads their roles afresh from the identity provider. The revocation is recorded in the audit trail."),
		Action:    templ.SafeURL("/sessions/users/" + v.PrincipalID + "/revoke"),
		Submit:    "Revoke all sessions",
		Danger:    true,
		Cancel:    "/sessions",
	}
	switch {
	case v.Live == 0:
		c.Warning, c.WarningID = text("This user has no live session. Confirming changes nothing."), "session-none"
	case v.Own:
		c.Warning, c.WarningID = text("These are your own sessions: you will be signed out."), "session-own"
	}
	return c
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/views"
)

// ReleaseRollbackConfirm asks before a rollback: it shows what changes
// between the active release and the chosen one, and asks for a reason.
func (h *Console) ReleaseRollbackConfirm(c echo.Context) error {
	return h.switchConfirm(c, releases.KindRolledBack)
}

// ReleaseActivateConfirm asks before activating a published release
// (admins, after publishing one): the same page as a rollback's.
func (h *Console) ReleaseActivateConfirm(c echo.Context) error {
	return h.switchConfirm(c, releases.KindActivated)
}

func (h *Console) switchConfirm(c echo.Context, kind string) error {
	v, err := h.switchView(c.Request().Context(), kind, c.QueryParam("agent"), c.QueryParam("env"), c.QueryParam("digest"))
	if err != nil {
		return err
	}
	v.Published = c.QueryParam("published") == "1"
	return h.renderSwitch(c, http.StatusOK, v)
}

// ReleaseRollback points the agent back at the chosen release: a new
// history row, nothing edited. Without a reason the confirmation comes
// back with a 422 and nothing changes; pressing twice has one effect; if
// the active release changed since the page was shown (the diff the
// person confirmed is stale) it is a 409 and nothing changes.
func (h *Console) ReleaseRollback(c echo.Context) error {
	return h.switchRelease(c, releases.KindRolledBack)
}

// ReleaseActivate makes a published release active, as ReleaseRollback
// does for an earlier one.
func (h *Console) ReleaseActivate(c echo.Context) error {
	return h.switchRelease(c, releases.KindActivated)
}

func (h *Console) switchRelease(c echo.Context, kind string) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	m := releases.Move{Agent: c.FormValue("agent"), Env: c.FormValue("env"), From: c.FormValue("from"), To: c.FormValue("digest"), Reason: c.FormValue("reason")}
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: user.ID}, Name: user.DisplayName()}
	move := releases.RollbackConfirmed
	if kind == releases.KindActivated {
		move = releases.ActivateConfirmed
	}
	// Activating or rolling forward to a release whose diff touches
	// prompt, skills, routing, tools or approval policy waits for a second
	// admin (docs/changes.md); rolling back applies at once.
	if kind == releases.KindActivated || strings.TrimSpace(m.Reason) != "" {
		pr, ok, err := h.releaseProposal(ctx, m.Agent, m.Env, m.From, m.To, kind, m.Reason, user.DisplayName())
		if err != nil {
			return err
		}
		if ok {
			if ch, err := h.govern(c, user, pr); err != nil || ch != nil {
				return changeRedirect(c, ch, err)
			}
		}
	}
	_, changed, err := move(ctx, h.DB, by, m)
	var inv *store.ValidationError
	switch {
	case errors.Is(err, releases.ErrReasonRequired), errors.As(err, &inv) && inv.Fields["reason"] != "":
		v, verr := h.switchView(ctx, kind, m.Agent, m.Env, m.To)
		if verr != nil {
			return verr
		}
		v.Reason = m.Reason
		v.Errors = views.FieldErrors{"reason": "Say why; the reason is kept in the history and the audit trail."}
		if inv != nil {
			v.Errors = views.FieldErrors{"reason": inv.Fields["reason"]}
		}
		return h.renderSwitch(c, http.StatusUnprocessableEntity, v)
	case err != nil:
		return err
	}
	done := kind
	if !changed {
		done = "already_active"
	}
	return seeOther(c, "/releases?"+url.Values{"agent": {m.Agent}, "env": {m.Env}, "done": {done}}.Encode())
}

// switchView is the confirmation of moving agent's pointer in env to
// digest: the diff from the release active now, which the form pins.
func (h *Console) switchView(ctx context.Context, kind, agent, env, digest string) (views.ReleaseSwitchView, error) {
	target, err := releases.Get(ctx, h.DB.Read(), digest)
	if err != nil {
		return views.ReleaseSwitchView{}, err
	}
	v := views.ReleaseSwitchView{Kind: kind, Agent: agent, Env: env, Target: target, From: releases.NoneActive}
	from := target
	if p, err := releases.Active(ctx, h.DB.Read(), agent, env); err == nil {
		if from, err = releases.Get(ctx, h.DB.Read(), p.Digest); err != nil {
			return v, err
		}
		v.From = p.Digest
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	if v.Diff, err = releaseDiffOf(ctx, h.DB.Read(), from, target); err != nil {
		return v, err
	}
	earlier := false
	if kind == releases.KindRolledBack {
		if earlier, err = releases.Earlier(ctx, h.DB.Read(), agent, env, v.From, digest); err != nil {
			return v, err
		}
	}
	if !earlier {
		v.Governed = changes.GovernedSurfaces(v.Diff.Changed)
	}
	return v, nil
}

func (h *Console) renderSwitch(c echo.Context, status int, v views.ReleaseSwitchView) error {
	title := "Roll back " + v.Agent
	if v.Kind == releases.KindActivated {
		title = "Activate a release of " + v.Agent
	}
	page := PageFor(c, title)
	page.Active = "/releases"
	return Render(c, status, page, views.ReleaseSwitchConfirm(page, v))
}

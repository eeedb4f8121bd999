package handlers

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/releases"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// ReleaseRollbackConfirm asks before a rollback: it shows what changes
// between the active release and the chosen one, and asks for a reason.
func (h *Console) ReleaseRollbackConfirm(c echo.Context) error {
	v, err := h.rollbackView(c, c.QueryParam("agent"), c.QueryParam("env"), c.QueryParam("digest"))
	if err != nil {
		return err
	}
	return h.renderRollback(c, http.StatusOK, v)
}

// ReleaseRollback points the agent back at the chosen release: a new
// history row, nothing edited. Without a reason the confirmation comes
// back with a 422 and nothing changes; pressing twice has one effect.
func (h *Console) ReleaseRollback(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	agent, env, digest, reason := c.FormValue("agent"), c.FormValue("env"), c.FormValue("digest"), c.FormValue("reason")
	by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: user.ID}, Name: user.DisplayName()}
	_, changed, err := releases.Rollback(ctx, h.DB, by, agent, env, digest, reason)
	var inv *store.ValidationError
	switch {
	case errors.Is(err, releases.ErrReasonRequired), errors.As(err, &inv) && inv.Fields["reason"] != "":
		v, verr := h.rollbackView(c, agent, env, digest)
		if verr != nil {
			return verr
		}
		v.Reason = reason
		v.Errors = views.FieldErrors{"reason": "Say why you are rolling back; the reason is kept in the history and the audit trail."}
		if inv != nil {
			v.Errors = views.FieldErrors{"reason": inv.Fields["reason"]}
		}
		return h.renderRollback(c, http.StatusUnprocessableEntity, v)
	case err != nil:
		return err
	}
	done := "rolled_back"
	if !changed {
		done = "already_active"
	}
	return seeOther(c, "/releases?"+url.Values{"agent": {agent}, "env": {env}, "done": {done}}.Encode())
}

func (h *Console) rollbackView(c echo.Context, agent, env, digest string) (views.ReleaseRollbackView, error) {
	ctx := c.Request().Context()
	target, err := releases.Get(ctx, h.DB.Read(), digest)
	if err != nil {
		return views.ReleaseRollbackView{}, err
	}
	v := views.ReleaseRollbackView{Agent: agent, Env: env, Target: target}
	from := target
	if p, err := releases.Active(ctx, h.DB.Read(), agent, env); err == nil {
		if from, err = releases.Get(ctx, h.DB.Read(), p.Digest); err != nil {
			return v, err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	v.Diff = views.ReleaseDiff{From: from, To: target, Changed: releases.Diff(from.Bundle, target.Bundle)}
	return v, nil
}

func (h *Console) renderRollback(c echo.Context, status int, v views.ReleaseRollbackView) error {
	page := PageFor(c, "Roll back "+v.Agent)
	page.Active = "/releases"
	return Render(c, status, page, views.ReleaseRollbackConfirm(page, v))
}

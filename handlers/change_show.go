package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/views"
)

var changeNotices = map[string]string{
	"requested":   "This change loosens a control, so it waits for a second admin. It applies once another admin approves it.",
	"break_glass": "Applied at once by break glass. On-call was told; another admin reviews it afterwards.",
	"applied":     "Approved and applied.",
	"rejected":    "Rejected; nothing changed.",
	"reviewed":    "Marked reviewed.",
}

// ChangeShow is one change's page: its diff, who asked and why, and the
// decision forms for an admin who may decide it. An admin whose scope
// lacks the change's tenant is told it does not exist.
func (h *Console) ChangeShow(c echo.Context) error {
	ch, err := changeInScope(c, h)
	if err != nil {
		return err
	}
	return h.renderChange(c, http.StatusOK, ch, changeNotices[c.QueryParam("done")], "", nil)
}

func changeInScope(c echo.Context, h *Console) (changes.Change, error) {
	ch, err := changes.Get(c.Request().Context(), h.DB.Read(), c.Param("id"))
	if err != nil {
		return changes.Change{}, err
	}
	if !CurrentPrincipal(c).InTenant(ch.TenantSlug) {
		return changes.Change{}, changes.ErrNotFound
	}
	return ch, nil
}

func (h *Console) renderChange(c echo.Context, status int, ch changes.Change, notice, comment string, errs views.FieldErrors) error {
	user := CurrentPrincipal(c)
	now := time.Now()
	v := views.ChangeView{Change: ch, Status: ch.StatusAt(now), Diff: views.ChangeDiff(ch.Before, ch.After), Notice: notice, Comment: comment, Errors: errs}
	if v.Status == changes.Pending {
		switch {
		case ch.RequestedBy == user.ID:
			v.Why = "You asked for this change, so another admin must decide it."
		case !user.HasRole(identity.RoleAdmin):
			v.Why = "An admin decides this change."
		default:
			v.MayDecide = true
		}
		groups, err := principals.GroupsOf(c.Request().Context(), h.DB.Read(), user.ID)
		if err != nil {
			return err
		}
		// An approver sees before pressing approve that the object moved
		// since the change was asked (the approval would be refused).
		moved, err := h.changeApplier().Moved(c.Request().Context(), h.DB.Read(), ch)
		if err != nil {
			return err
		}
		if moved != nil {
			v.OutOfDate = moved.Sentence()
		}
		for _, o := range changes.OwnersNeeded(ch) {
			if !identity.Owns(o.Owner, user.Email, groups) && v.MayDecide {
				v.MayDecide = false
				v.Why = "This change needs the owner of the high-risk skill " + o.Skill + " (" + o.Owner + "), and you are not: ask its owner to approve it."
			}
		}
	}
	v.Owners = changes.OwnersNeeded(ch)
	if ch.Kind == changes.RunbookPublish {
		v.Buttons = views.ButtonsDiff(ch.Before, ch.After)
	}
	if ch.Kind == changes.ReleaseActivate {
		d, err := h.changeReleaseDiff(c.Request().Context(), ch)
		if err != nil {
			return err
		}
		v.ReleaseDiff = d
	}
	v.MayReview = ch.BreakGlass && ch.ReviewedAt == nil && ch.RequestedBy != user.ID && user.HasRole(identity.RoleAdmin)
	page := PageFor(c, "Change")
	page.Active = "/changes"
	return Render(c, status, page, views.ChangeShow(page, v))
}

// changeReleaseDiff is a release move's diff as the Releases page shows
// it: each changed surface, and a line diff of each held content.
func (h *Console) changeReleaseDiff(ctx context.Context, ch changes.Change) (*views.ReleaseDiff, error) {
	a, err := changes.Value[changes.Release](ch.After)
	if err != nil {
		return nil, err
	}
	q := h.DB.Read()
	to, err := releases.Get(ctx, q, a.Digest)
	if err != nil {
		return nil, err
	}
	from := releases.Published{Digest: releases.NoneActive}
	if a.From != "" && a.From != releases.NoneActive {
		if from, err = releases.Get(ctx, q, a.From); err != nil {
			return nil, err
		}
	}
	d, err := releaseDiffOf(ctx, q, from, to)
	return &d, err
}

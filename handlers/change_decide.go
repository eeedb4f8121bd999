package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/views"
)

// ChangeDecide records a second admin's decision on a pending change and,
// when it approves, applies the change at once (docs/changes.md). The
// rules — not the requester, an admin of its tenant or of all tenants,
// the digest seen, the object still as the change's before says — are the
// domain's (changes.Decide).
func (h *Console) ChangeDecide(c echo.Context) error {
	ctx := c.Request().Context()
	ch, err := changeInScope(c, h)
	if err != nil {
		return err
	}
	comment := c.FormValue("comment")
	ch, err = changes.Decide(ctx, h.DB, changes.Decision{Principal: *CurrentPrincipal(c), ChangeID: ch.ID,
		Decision: c.FormValue("decision"), Comment: h.redact(comment), Digest: c.FormValue("digest"),
		Check: h.changeApplier().Check}, time.Now())
	if p := problem.From(err); err != nil && p.Kind == problem.KindUnprocessable {
		cur, gerr := changes.Get(ctx, h.DB.Read(), c.Param("id"))
		if gerr != nil {
			return gerr
		}
		return h.renderChange(c, http.StatusUnprocessableEntity, cur, "", comment, views.FieldErrors{"comment": p.Message})
	}
	if err != nil {
		return err
	}
	done := "rejected"
	if c.FormValue("decision") == approvals.Approve {
		if ch, err = h.changeApplier().ApplyApproved(ctx, ch); err != nil {
			return err
		}
		done = ch.Status
	}
	return seeOther(c, "/changes/"+ch.ID+"?done="+done)
}

// ChangeReview marks a break-glass change reviewed by another admin.
func (h *Console) ChangeReview(c echo.Context) error {
	ch, err := changeInScope(c, h)
	if err != nil {
		return err
	}
	if _, err := changes.Review(c.Request().Context(), h.DB, *CurrentPrincipal(c), ch.ID, h.redact(c.FormValue("note")), time.Now()); err != nil {
		return err
	}
	return seeOther(c, "/changes/"+ch.ID+"?done=reviewed")
}

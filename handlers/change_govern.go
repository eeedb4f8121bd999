package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/app"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
)

// govern is the step every form that may loosen a control takes before it
// writes (docs/changes.md): a change that tightens or keeps a control
// returns nil and the handler applies it as before; one that loosens is
// recorded as a pending change for a second admin — or, when the form
// asked for break glass (break_glass=yes) and the installation allows it,
// applied at once and recorded as break_glass — and the handler redirects
// to the returned change's page. The form's change_reason is the reason
// the second admin reads (required for break glass).
func (h *Console) govern(c echo.Context, user *identity.Principal, p changes.Proposal) (*changes.Change, error) {
	loosens, err := changes.Loosens(p.Kind, p.Before, p.After)
	if err != nil || !loosens {
		return nil, err
	}
	ctx := c.Request().Context()
	// A form with its own reason field (a release move) passes it in p.
	if r := c.FormValue("change_reason"); r != "" || p.Reason == "" {
		p.Reason = r
	}
	p.Reason = h.redact(p.Reason)
	now := time.Now()
	if c.FormValue("break_glass") == "yes" {
		if err := changes.CheckBreakGlass(h.BreakGlass, p.Reason); err != nil {
			return nil, err
		}
		after, err := json.Marshal(p.After)
		if err != nil {
			return nil, err
		}
		if err := h.changeApplier().Apply(ctx, principalActor(user), p.Kind, p.TenantID, p.TenantSlug, p.Subject, after); err != nil {
			return nil, err
		}
		ch, err := changes.BreakGlass(ctx, h.DB, *user, p, h.BreakGlass, now)
		return &ch, err
	}
	ch, err := changes.Request(ctx, h.DB, *user, p, now)
	return &ch, err
}

// pendingOfKinds lists the changes of kinds waiting for a second admin
// that user may see, for the page of what they change.
func (h *Console) pendingOfKinds(ctx context.Context, user *identity.Principal, kinds ...string) ([]changes.Change, error) {
	pending, _, err := changes.Queue(ctx, h.DB.Read(), *user, time.Now())
	if err != nil {
		return nil, err
	}
	var out []changes.Change
	for _, c := range pending {
		if slices.Contains(kinds, c.Kind) {
			out = append(out, c)
		}
	}
	return out, nil
}

// changeRedirect ends a handler whose change govern recorded: err as the
// handler's error, or 303 to the change's page.
func changeRedirect(c echo.Context, ch *changes.Change, err error) error {
	if err != nil {
		return err
	}
	done := "requested"
	if ch.BreakGlass {
		done = "break_glass"
	}
	return seeOther(c, "/changes/"+ch.ID+"?done="+done)
}

// changeApplier is the app's applier of governed changes, over the
// console's database, runtime and sealer.
func (h *Console) changeApplier() *app.ChangeApplier {
	return &app.ChangeApplier{DB: h.DB, Skills: h.Runtime, Sealer: h.Sealer, Runbooks: h.Runbooks}
}

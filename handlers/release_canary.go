package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/views"
)

// ReleaseCanaryStart starts a canary of a published release for a share
// of new journeys. A bad share or floor comes back on the page with a 422
// and the user's input; starting the same canary twice has one effect.
func (h *Console) ReleaseCanaryStart(c echo.Context) error {
	ctx := c.Request().Context()
	agent, env := c.FormValue("agent"), c.FormValue("env")
	form := views.CanaryForm{Candidate: c.FormValue("candidate"), Share: strings.TrimSpace(c.FormValue("share")),
		Floor: strings.TrimSpace(c.FormValue("floor")), Reason: c.FormValue("reason"), RequireLabels: c.FormValue("require_labels") != ""}
	share, floor, errs := parseCanaryForm(form)
	if len(errs) == 0 && share == 100 {
		// A canary on every journey is an activation in all but name: when
		// the candidate's diff needs a second admin, it goes through
		// Activate or Promote (docs/changes.md).
		// Read as a rollback: a candidate that ran before the active
		// release is going back (at once); any other is going forward.
		if pr, ok, err := h.releaseProposal(ctx, agent, env, "", form.Candidate, releases.KindRolledBack, "", ""); err != nil {
			return err
		} else if loosens, _ := changes.Loosens(pr.Kind, pr.Before, pr.After); ok && loosens {
			errs["share"] = "A canary on 100 % of journeys is an activation, and this release changes what needs a second admin: choose a smaller share, or activate it."
		}
	}
	if len(errs) == 0 {
		_, changed, err := releases.StartCanary(ctx, h.DB, releaseAuthor(c), agent, env, form.Candidate, share, floor, form.Reason,
			releases.CanaryOptions{RequireLabels: form.RequireLabels})
		var inv *store.ValidationError
		switch {
		case errors.As(err, &inv):
			errs = views.FieldErrors(inv.Fields)
		case err != nil:
			return err
		default:
			return seeOther(c, releasesDone(agent, env, map[bool]string{true: "canary_started", false: "canary_unchanged"}[changed]))
		}
	}
	v, err := h.releasesView(c, agent, env)
	if err != nil {
		return err
	}
	form.Errors = errs
	v.CanaryForm = form
	return h.renderReleases(c, http.StatusUnprocessableEntity, v)
}

// parseCanaryForm reads the share (a whole percentage) and the floor (a
// rate); what cannot be read is a field error.
func parseCanaryForm(f views.CanaryForm) (share int, floor float64, errs views.FieldErrors) {
	errs = views.FieldErrors{}
	share, err := strconv.Atoi(f.Share)
	if err != nil || share < 1 || share > 100 {
		errs["share"] = "The share is a whole percentage from 1 to 100."
	}
	floor, err = strconv.ParseFloat(f.Floor, 64)
	if err != nil || !(floor > 0 && floor <= 1) {
		errs["floor"] = "The floor is a success rate above 0 and at most 1, such as 0.90."
	}
	if f.Candidate == "" {
		errs["candidate"] = "Choose the release to run as the canary."
	}
	return share, floor, errs
}

// ReleaseCanaryRollback rolls the running canary back; it needs a reason.
// When that canary no longer runs nothing changes.
func (h *Console) ReleaseCanaryRollback(c echo.Context) error {
	agent, env := c.FormValue("agent"), c.FormValue("env")
	_, changed, err := releases.StopCanary(c.Request().Context(), h.DB, releaseAuthor(c), agent, env,
		c.FormValue("candidate"), c.FormValue("reason"))
	if err != nil {
		return err
	}
	return seeOther(c, releasesDone(agent, env, map[bool]string{true: "canary_rolled_back", false: "no_canary"}[changed]))
}

// ReleasePromote makes the canary's candidate the active release; the
// gate decides again when the button is pressed (422 while it holds).
func (h *Console) ReleasePromote(c echo.Context) error {
	ctx := c.Request().Context()
	agent, env := c.FormValue("agent"), c.FormValue("env")
	// Promotion puts the candidate on 100 % of journeys: an activation,
	// governed as one (docs/changes.md). The gate decides again when a
	// second admin approves.
	if cur, err := releases.Active(ctx, h.DB.Read(), agent, env); err == nil && cur.Candidate != "" && cur.Candidate == c.FormValue("candidate") {
		if v, err := releases.EvaluateCanary(ctx, h.DB.Read(), agent, env); err == nil && !v.Promote {
			held := *releases.ErrCanaryHeld
			held.Message = "The canary gate holds: " + strings.Join(v.Reasons, "; ") + "."
			return &held
		}
		user := CurrentPrincipal(c)
		pr, ok, err := h.releaseProposal(ctx, agent, env, cur.Digest, cur.Candidate, releases.KindPromoted, c.FormValue("reason"), user.DisplayName())
		if err != nil {
			return err
		}
		if ok {
			if ch, err := h.govern(c, user, pr); err != nil || ch != nil {
				return changeRedirect(c, ch, err)
			}
		}
	}
	_, _, err := releases.Promote(ctx, h.DB, releaseAuthor(c), agent, env,
		c.FormValue("candidate"), c.FormValue("reason"))
	if err != nil {
		return err
	}
	return seeOther(c, releasesDone(agent, env, "promoted"))
}

func releaseAuthor(c echo.Context) releases.Author {
	user := CurrentPrincipal(c)
	return releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: user.ID}, Name: user.DisplayName()}
}

func releasesDone(agent, env, done string) string {
	return "/releases?" + url.Values{"agent": {agent}, "env": {env}, "done": {done}}.Encode()
}

package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/views"
)

// releasePageSize is the history rows a Releases page shows.
const releasePageSize = 25

// ReleaseList shows one agent's release in one environment (the default
// agent's unless ?agent= and ?env= say otherwise): the active bundle, a
// page of its history with "Roll back" on earlier releases, and, when
// ?a= and ?b= name two bundles, the surfaces that differ between them.
func (h *Console) ReleaseList(c echo.Context) error {
	v, err := h.releasesView(c, c.QueryParam("agent"), c.QueryParam("env"))
	if err != nil {
		return err
	}
	v.Notice = doneNotice(c, map[string]string{
		"rolled_back":        "Rolled back. New journeys run under the release shown as active.",
		"already_active":     "That release was already active; nothing changed.",
		"canary_started":     "Canary started. Its share of new journeys runs under the candidate.",
		"canary_unchanged":   "That canary was already running; nothing changed.",
		"canary_rolled_back": "Canary rolled back. New journeys all run under the active release.",
		"no_canary":          "No canary of that release was running; nothing changed.",
		"promoted":           "Promoted. New journeys all run under the candidate, now the active release.",
		"activated":          "Activated. New journeys run under the release shown as active.",
	})
	return h.renderReleases(c, http.StatusOK, v)
}

func (h *Console) renderReleases(c echo.Context, status int, v views.ReleasesView) error {
	pg := PageFor(c, "Releases")
	pg.Active = "/releases"
	return Render(c, status, pg, views.Releases(pg, v))
}

// releasesView is the Releases page of agent in env, with its canary's
// verdict when one runs.
func (h *Console) releasesView(c echo.Context, agent, env string) (views.ReleasesView, error) {
	ctx := c.Request().Context()
	page, err := listPage(c, releasePageSize)
	if err != nil {
		return views.ReleasesView{}, err
	}
	v := views.ReleasesView{Agent: agent, Env: env, CanaryForm: views.CanaryForm{Share: "10", Floor: "0.90"}}
	if v.Targets, err = releases.Targets(ctx, h.DB.Read()); err != nil {
		return v, err
	}
	if v.Agent == "" && v.Env == "" {
		v.Agent, v.Env = releases.DefaultAgent, releases.DefaultEnv
		if len(v.Targets) > 0 {
			v.Agent, v.Env = v.Targets[0].Agent, v.Targets[0].Env
		}
	}
	if p, err := releases.Active(ctx, h.DB.Read(), v.Agent, v.Env); err == nil {
		b, err := releases.Get(ctx, h.DB.Read(), p.Digest)
		if err != nil {
			return v, err
		}
		v.Active = &b
		if p.Candidate != "" {
			cv, err := releases.EvaluateCanary(ctx, h.DB.Read(), v.Agent, v.Env)
			if err != nil && !errors.Is(err, releases.ErrNoCanary) {
				return v, err
			}
			if err == nil {
				v.Canary = &cv
				cand, err := releases.Get(ctx, h.DB.Read(), p.Candidate)
				if err != nil {
					return v, err
				}
				v.CanaryGoverned = changes.GovernedSurfaces(releases.Diff(b.Bundle, cand.Bundle))
			}
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return v, err
	}
	if v.Candidates, err = releases.Recent(ctx, h.DB.Read(), 50); err != nil {
		return v, err
	}
	if v.Skills, err = h.SkillNames(ctx); err != nil {
		return v, err
	}
	if v.Replays, err = releases.RecentReplays(ctx, h.DB.Read(), v.Agent, v.Env, 5); err != nil {
		return v, err
	}
	if v.Canary != nil {
		before, err := releases.ReplaysOf(ctx, h.DB.Read(), v.Canary.Pointer.Candidate, v.Canary.Pointer.CreatedAt, 1)
		if err != nil {
			return v, err
		}
		if len(before) > 0 {
			v.CanaryReplay = &before[0]
		}
	}
	if h.Runtime != nil {
		labels, err := routelabels.Of(ctx, h.DB.Read(), v.Agent, v.Env, 0)
		if err != nil {
			return v, err
		}
		// Counted over the viewer's tenants only: a person scoped to one
		// tenant sees that tenant's labels, not everyone's totals.
		_, ids, err := tenantScope(ctx, h.DB, CurrentPrincipal(c), "")
		if err != nil {
			return v, err
		}
		if ids != nil {
			labels = slices.DeleteFunc(labels, func(l routelabels.Label) bool { return !slices.Contains(ids, l.TenantID) })
		}
		set, err := routelabels.GetSettings(ctx, h.DB.Read())
		if err != nil {
			return v, err
		}
		v.Accuracy = &views.RouteAccuracyView{Stats: routelabels.Accuracy(labels), Settings: set}
	}
	v.CanPublish = CurrentPrincipal(c).HasRole(identity.RoleAdmin)
	hist, err := releases.History(ctx, h.DB.Read(), v.Agent, v.Env, page)
	if err != nil {
		return v, err
	}
	v.History = hist.Rows
	next, prev := pageLinks("/releases", url.Values{"agent": {v.Agent}, "env": {v.Env}}, hist)
	v.Pager = views.PagerView{Next: next, Prev: prev, NextLabel: "Older", PrevLabel: "Newer"}
	if v.Digests, err = releases.Ran(ctx, h.DB.Read(), v.Agent, v.Env); err != nil {
		return v, err
	}
	if a, b := c.QueryParam("a"), c.QueryParam("b"); a != "" || b != "" {
		d, err := releaseDiff(ctx, h.DB.Read(), a, b)
		if err != nil {
			return v, err
		}
		v.Diff = &d
	}
	return v, nil
}

// releaseDiff loads two bundles and the surfaces that differ.
func releaseDiff(ctx context.Context, q store.Querier, a, b string) (views.ReleaseDiff, error) {
	if a == "" || b == "" {
		return views.ReleaseDiff{}, problem.Invalid("bad_diff", "Choose two releases to compare.")
	}
	from, err := releases.Get(ctx, q, a)
	if err != nil {
		return views.ReleaseDiff{}, err
	}
	to, err := releases.Get(ctx, q, b)
	if err != nil {
		return views.ReleaseDiff{}, err
	}
	return releaseDiffOf(ctx, q, from, to)
}

// releaseDiffOf is the diff of two bundles, with the line diffs of the
// texts Warden holds for the changed surfaces, so people read what
// changed, not only which hash.
func releaseDiffOf(ctx context.Context, q store.Querier, from, to releases.Published) (views.ReleaseDiff, error) {
	texts, err := releases.TextDiffs(ctx, q, from.Bundle, to.Bundle)
	if err != nil {
		return views.ReleaseDiff{}, err
	}
	return views.ReleaseDiff{From: from, To: to, Changed: releases.Diff(from.Bundle, to.Bundle), Texts: texts}, nil
}

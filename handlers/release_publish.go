package handlers

import (
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/views"
)

// maxBundleBytes bounds a bundle typed into the publish form.
const maxBundleBytes = 64 << 10

// ReleasePublish publishes the bundle typed into the Releases page's form
// (releases.Parse, releases.Publish) and goes on to the activation
// confirmation: publishing runs nothing. A bundle that does not parse
// comes back on the page with the reason, 422, as typed, and nothing is
// stored.
func (h *Console) ReleasePublish(c echo.Context) error {
	ctx := c.Request().Context()
	agent, env := c.FormValue("agent"), c.FormValue("env")
	form := views.PublishForm{Bundle: c.FormValue("bundle"), Note: c.FormValue("note")}
	fail := func(errs views.FieldErrors) error {
		v, err := h.releasesView(c, agent, env)
		if err != nil {
			return err
		}
		form.Errors = errs
		v.Publish = form
		return h.renderReleases(c, http.StatusUnprocessableEntity, v)
	}
	if strings.TrimSpace(form.Bundle) == "" {
		return fail(views.FieldErrors{"bundle": "Paste the bundle's JSON."})
	}
	if len(form.Bundle) > maxBundleBytes {
		return fail(views.FieldErrors{"bundle": "A bundle is at most 64 KiB."})
	}
	b, contents, err := releases.Parse([]byte(form.Bundle))
	if err == nil {
		user := CurrentPrincipal(c)
		by := releases.Author{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: user.ID}, Name: user.DisplayName()}
		var digest string
		digest, _, err = releases.Publish(ctx, h.DB, by, b, contents, form.Note)
		if err == nil {
			return seeOther(c, "/releases/activate?"+url.Values{"agent": {agent}, "env": {env}, "digest": {digest}, "published": {"1"}}.Encode())
		}
	}
	var inv *store.ValidationError
	var p *problem.Error
	switch {
	case errors.As(err, &inv):
		var msgs []string
		for _, s := range slices.Sorted(maps.Keys(inv.Fields)) {
			if s != "note" {
				msgs = append(msgs, s+": "+inv.Fields[s])
			}
		}
		errs := views.FieldErrors{}
		if m := inv.Fields["note"]; m != "" {
			errs["note"] = m
		}
		if len(msgs) > 0 {
			errs["bundle"] = strings.Join(msgs, " ")
		}
		if len(errs) == 0 {
			errs["bundle"] = "The bundle is not valid."
		}
		return fail(errs)
	case errors.As(err, &p) && p.Kind == problem.KindInvalid:
		return fail(views.FieldErrors{"bundle": p.Message})
	}
	return err
}

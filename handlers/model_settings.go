package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// tenantModelForm fills the tenant page's model settings form.
func tenantModelForm(ctx context.Context, q store.Querier, tenantID string) (views.TenantModelForm, error) {
	s, err := models.TenantSettingsOf(ctx, q, tenantID)
	if err != nil {
		return views.TenantModelForm{}, err
	}
	return views.TenantModelForm{Content: s.Content, Outbound: s.OutboundRedaction}, nil
}

// TenantModelSettings saves what a tenant's model call traces keep and
// whether its prompts are redacted before they leave Warden.
func (h *Console) TenantModelSettings(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	t, err := tenantInScope(ctx, h.DB.Read(), user, c.Param("slug"))
	if err != nil {
		return err
	}
	s := models.TenantSettings{Content: c.FormValue("model_content"), OutboundRedaction: c.FormValue("model_outbound_redaction") == "on"}
	changed, err := models.SetTenantSettings(ctx, h.DB, principalActor(user), t, s)
	if errs, ok := fieldErrors(err); ok {
		v, err := tenantView(ctx, h.DB.Read(), t)
		if err != nil {
			return err
		}
		v.Model = views.TenantModelForm{Content: s.Content, Outbound: s.OutboundRedaction, Errors: errs}
		return renderTenantShow(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	return tenantSaved(c, t, changed, "model_settings")
}

var keyModelNotices = map[string]string{
	"model_limits": "Model limits saved. They apply to this key's next model call.",
	"unchanged":    "Those are the current limits; nothing changed.",
}

// keyModelLimitsForm fills the key page's model limits form.
func keyModelLimitsForm(ctx context.Context, q store.Querier, keyID string) (views.KeyModelLimitsForm, error) {
	l, err := models.KeyLimitsOf(ctx, q, keyID)
	if err != nil {
		return views.KeyModelLimitsForm{}, err
	}
	return views.KeyModelLimitsForm{RPM: strconv.Itoa(l.RPM), TPM: strconv.Itoa(l.TPM)}, nil
}

// KeyModelLimits saves a key's limits on model calls.
func (h *Console) KeyModelLimits(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	k, err := keyInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	form := views.KeyModelLimitsForm{RPM: strings.TrimSpace(c.FormValue("model_rpm")), TPM: strings.TrimSpace(c.FormValue("model_tpm")), Errors: views.FieldErrors{}}
	var l models.KeyLimits
	var msg string
	if l.RPM, msg = formInt(form.RPM, "Enter 0 (no limit) or a whole number of requests a minute."); msg != "" {
		form.Errors["model_rpm"] = msg
	}
	if l.TPM, msg = formInt(form.TPM, "Enter 0 (no limit) or a whole number of tokens a minute."); msg != "" {
		form.Errors["model_tpm"] = msg
	}
	if len(form.Errors) == 0 && len(l.Validate()) == 0 {
		// Raising a limit, or removing one, widens the key: a second
		// admin approves it (docs/changes.md); lowering applies at once.
		was, err := models.KeyLimitsOf(ctx, h.DB.Read(), k.ID)
		if err != nil {
			return err
		}
		if ch, err := h.govern(c, user, changes.Proposal{Kind: changes.KeyRateLimit, TenantID: k.TenantID, TenantSlug: k.TenantSlug, Subject: k.ID,
			Summary: fmt.Sprintf("Change key %s's model limits from %s to %s", k.Name, perMinute(was), perMinute(l)),
			Before:  changes.KeyRate{RPM: was.RPM, TPM: was.TPM}, After: changes.KeyRate{RPM: l.RPM, TPM: l.TPM}}); err != nil || ch != nil {
			return changeRedirect(c, ch, err)
		}
	}
	if len(form.Errors) == 0 {
		changed, err := models.SetKeyLimits(ctx, h.DB, principalActor(user), k, l)
		errs, invalid := fieldErrors(err)
		switch {
		case invalid:
			form.Errors = errs
		case err != nil:
			return err
		default:
			done := "model_limits"
			if !changed {
				done = "unchanged"
			}
			return seeOther(c, "/keys/"+k.ID+"?done="+done)
		}
	}
	return h.renderKeyShow(c, http.StatusUnprocessableEntity, k, func(v *views.KeyShowView) { v.ModelLimits = form })
}

// ModelAliasSave sets an alias's cascade and cache options.
func (h *Console) ModelAliasSave(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, modelChange); err != nil {
		return err
	}
	form := views.AliasForm{Alias: strings.TrimSpace(c.FormValue("alias")), CacheTTL: strings.TrimSpace(c.FormValue("cache_ttl")), Cascade: c.FormValue("cascade") == "on"}
	errs := views.FieldErrors{}
	ttl, msg := formInt(form.CacheTTL, "Enter 0 (off) or a whole number of seconds.")
	if msg != "" {
		errs["cache_ttl"] = msg
	} else {
		changed, err := models.SetAliasSettings(c.Request().Context(), h.DB, principalActor(user), models.AliasSettings{Alias: form.Alias, Cascade: form.Cascade, CacheTTL: ttl})
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case err != nil:
			return err
		case !changed:
			return seeOther(c, "/models?done=unchanged")
		default:
			return seeOther(c, "/models?done=alias")
		}
	}
	return h.renderModels(c, http.StatusUnprocessableEntity, views.ModelsView{Form: defaultModelForm(), AliasForm: form, AliasErrors: errs})
}

// ModelAllowedHosts saves the hosts model deployments may reach although
// their addresses are internal (on-premises model servers): all-tenant
// admins, audited (model.allowed_hosts). A bad host is a 422 that changes
// nothing.
func (h *Console) ModelAllowedHosts(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, modelChange); err != nil {
		return err
	}
	text := c.FormValue("allowed_hosts")
	hosts, err := models.ParseHosts(text)
	if err == nil {
		var changed bool
		var before []string
		if before, err = models.AllowedHosts(c.Request().Context(), h.DB.Read()); err != nil {
			return err
		}
		ch, gerr := h.govern(c, user, changes.Proposal{Kind: changes.AllowHost, Subject: "allowed_hosts",
			Summary: "Allow model deployments and MCP servers to reach internal hosts: " + strings.Join(hosts, ", "),
			Before:  changes.Hosts{Hosts: before}, After: changes.Hosts{Hosts: hosts}})
		if gerr != nil || ch != nil {
			return changeRedirect(c, ch, gerr)
		}
		changed, err = models.SetAllowedHosts(c.Request().Context(), h.DB, principalActor(user), hosts)
		switch {
		case err == nil && !changed:
			return seeOther(c, "/models?done=unchanged")
		case err == nil:
			return seeOther(c, "/models?done=hosts")
		}
	}
	errs, ok := fieldErrors(err)
	if !ok {
		return err
	}
	return h.renderModels(c, http.StatusUnprocessableEntity, views.ModelsView{Form: defaultModelForm(), HostsForm: text, HostsErrors: errs, HostsTyped: true})
}

// perMinute is a key's model limits as people read them.
func perMinute(l models.KeyLimits) string {
	f := func(n int, unit string) string {
		if n == 0 {
			return "no " + unit + " limit"
		}
		return strconv.Itoa(n) + " " + unit + "/min"
	}
	return f(l.RPM, "request") + ", " + f(l.TPM, "token")
}

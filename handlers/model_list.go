package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/views"
)

const modelChange = "Changing model deployments"

var modelNotices = map[string]string{
	"created":     "Deployment added.",
	"updated":     "Deployment saved.",
	"unchanged":   "Nothing was different; nothing changed.",
	"enabled":     "Deployment switched on.",
	"disabled":    "Deployment switched off: calls to its alias skip it.",
	"already_off": "The deployment was already off; nothing changed.",
	"already_on":  "The deployment was already on; nothing changed.",
	"alias":       "Alias options saved. They apply to the alias's next call.",
	"hosts":       "Allowed hosts saved. They apply to every deployment's next call.",
}

func defaultModelForm() views.ModelForm {
	return views.ModelForm{Priority: "0", Weight: "1", InputPrice: "0.15", OutputPrice: "0.60", ContextWindow: "128000", MaxOutputTokens: "4096",
		Timeout: "30000", Concurrency: "16"}
}

// ModelList shows the model deployments, the form that adds one and the
// newest calls of the tenants in the admin's scope; with a tag
// (?tag=key=value), only the calls the agent tagged so.
func (h *Console) ModelList(c echo.Context) error {
	v := views.ModelsView{Notice: doneNotice(c, modelNotices), Form: defaultModelForm(), CallTagText: c.QueryParam("tag")}
	tag, err := models.ParseTag(v.CallTagText)
	if err != nil {
		_, p := ProblemOf(err)
		v.CallTagError = p.Message
		return h.renderModels(c, http.StatusBadRequest, v)
	}
	v.CallTag = tag
	return h.renderModels(c, http.StatusOK, v)
}

// ModelEditForm shows the page with the form filled from a deployment.
func (h *Console) ModelEditForm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), modelChange); err != nil {
		return err
	}
	d, err := models.Get(c.Request().Context(), h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	v := views.ModelsView{Editing: true, Form: modelFormOf(d)}
	if v.Owner, err = owners.Get(c.Request().Context(), h.DB.Read(), owners.Model, d.Name); err != nil {
		return err
	}
	if v.OwnerPending, err = changes.PendingOn(c.Request().Context(), h.DB.Read(), d.Name, time.Now(), changes.OwnerChange); err != nil {
		return err
	}
	var status int
	v.OwnerForm, status = refusedOwnerForm(c)
	return h.renderModels(c, status, v)
}

func modelFormOf(d models.Deployment) views.ModelForm {
	return views.ModelForm{Name: d.Name, Alias: d.Alias, Priority: strconv.Itoa(d.Priority), Weight: strconv.Itoa(d.Weight), BaseURL: d.BaseURL, UpstreamModel: d.UpstreamModel,
		InputPrice: views.MicrosInput(d.InputMicrosPerM), OutputPrice: views.MicrosInput(d.OutputMicrosPerM), ContextWindow: strconv.Itoa(d.ContextWindow),
		MaxOutputTokens: strconv.Itoa(d.MaxOutputTokens), Timeout: strconv.FormatInt(d.Timeout.Milliseconds(), 10),
		Concurrency: strconv.Itoa(d.Concurrency), HasAPIKey: d.HasAPIKey, ResponsesAPI: d.ResponsesAPI}
}

func (h *Console) renderModels(c echo.Context, status int, v views.ModelsView) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	scope, ids, err := tenantScope(ctx, h.DB, user, "")
	if err != nil {
		return err
	}
	if v.Pending, err = h.pendingOfKinds(ctx, user, changes.ModelUpstream, changes.AllowHost); err != nil {
		return err
	}
	if v.Deployments, err = models.List(ctx, h.DB.Read()); err != nil {
		return err
	}
	if v.Owners, err = owners.Of(ctx, h.DB.Read(), owners.Model); err != nil {
		return err
	}
	if v.Calls, err = models.CallsTagged(ctx, h.DB.Read(), ids, v.CallTag, 50); err != nil {
		return err
	}
	opts, err := models.AllAliasSettings(ctx, h.DB.Read())
	if err != nil {
		return err
	}
	if v.AllowedHosts, err = models.AllowedHosts(ctx, h.DB.Read()); err != nil {
		return err
	}
	if !v.HostsTyped {
		v.HostsForm = strings.Join(v.AllowedHosts, "\n")
	}
	for _, d := range v.Deployments {
		if n := len(v.Aliases); n == 0 || v.Aliases[n-1].Alias != d.Alias {
			a := opts[d.Alias]
			a.Alias = d.Alias
			v.Aliases = append(v.Aliases, a)
		}
	}
	if v.AliasForm.Alias == "" && v.AliasForm.CacheTTL == "" {
		v.AliasForm.CacheTTL = "0"
	}
	v.Tenants = map[string]string{}
	for _, t := range scope {
		v.Tenants[t.ID] = t.Slug
	}
	v.CanEdit = user.AllTenantScope()
	title := "Models"
	if v.Editing {
		title = "Edit model " + v.Form.Name + " · Models"
	}
	page := PageFor(c, title)
	page.Active = "/models"
	return Render(c, status, page, views.ModelList(page, v))
}

package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden/app"
	"github.com/wardenhq/warden/platform/money"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/views"
)

// parseModelForm reads the deployment form; errs holds a message per field
// that did not parse, followed by the domain's own validation.
func parseModelForm(c echo.Context, name string) (views.ModelForm, models.Deployment, views.FieldErrors) {
	f := views.ModelForm{
		Name: name, Alias: strings.TrimSpace(c.FormValue("alias")), Priority: c.FormValue("priority"), Weight: c.FormValue("weight"),
		BaseURL: strings.TrimSpace(c.FormValue("base_url")), UpstreamModel: strings.TrimSpace(c.FormValue("upstream_model")),
		InputPrice: c.FormValue("input_price"), OutputPrice: c.FormValue("output_price"), ContextWindow: c.FormValue("context_window"),
		MaxOutputTokens: c.FormValue("max_output_tokens"), Timeout: c.FormValue("timeout"), Concurrency: c.FormValue("concurrency"),
		ResponsesAPI: c.FormValue("responses_api") == "on",
	}
	if strings.TrimSpace(f.Weight) == "" {
		f.Weight = "1" // the default weight
	}
	d := models.Deployment{Name: name, Alias: f.Alias, BaseURL: f.BaseURL, UpstreamModel: f.UpstreamModel, ResponsesAPI: f.ResponsesAPI, Enabled: true}
	errs := views.FieldErrors{}
	ints := []struct {
		raw, field string
		dst        *int
	}{
		{f.Priority, "priority", &d.Priority}, {f.Weight, "weight", &d.Weight}, {f.ContextWindow, "context_window", &d.ContextWindow},
		{f.MaxOutputTokens, "max_output_tokens", &d.MaxOutputTokens}, {f.Concurrency, "concurrency", &d.Concurrency},
	}
	for _, i := range ints {
		if n, msg := formInt(i.raw, "Enter a whole number."); msg != "" {
			errs[i.field] = msg
		} else {
			*i.dst = n
		}
	}
	if ms, msg := formInt(f.Timeout, "Enter the timeout as a whole number of milliseconds."); msg != "" {
		errs["timeout"] = msg
	} else {
		d.Timeout = time.Duration(ms) * time.Millisecond
	}
	var msg string
	if d.InputMicrosPerM, msg = money.ParseMicros(f.InputPrice); msg != "" {
		errs["input_price"] = msg
	}
	if d.OutputMicrosPerM, msg = money.ParseMicros(f.OutputPrice); msg != "" {
		errs["output_price"] = msg
	}
	d.Provider = models.ProviderOpenAI
	for k, v := range d.Validate() {
		if k == "prices" {
			k = "input_price"
		}
		if _, ok := errs[k]; !ok {
			errs[k] = v
		}
	}
	return f, d, errs
}

// ModelCreate adds a deployment.
func (h *Console) ModelCreate(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, modelChange); err != nil {
		return err
	}
	form, d, errs := parseModelForm(c, strings.TrimSpace(c.FormValue("name")))
	if len(errs) == 0 {
		_, err := models.Create(c.Request().Context(), h.DB, h.Sealer, principalActor(user), d, c.FormValue("api_key"))
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case errors.Is(err, models.ErrExists):
			errs["name"] = "There is already a deployment " + d.Name + ". Edit it from the list instead."
		case err != nil:
			return err
		default:
			return seeOther(c, "/models?done=created")
		}
	}
	return h.renderModels(c, http.StatusUnprocessableEntity, views.ModelsView{Form: form, Errors: errs})
}

// ModelUpdate saves a deployment's settings; an empty API key keeps the
// stored one.
func (h *Console) ModelUpdate(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, modelChange); err != nil {
		return err
	}
	ctx := c.Request().Context()
	stored, err := models.Get(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	form, d, errs := parseModelForm(c, stored.Name)
	form.HasAPIKey = stored.HasAPIKey
	if len(errs) == 0 {
		p, err := upstreamProposal(h, stored, d, c.FormValue("api_key"))
		if err != nil {
			return err
		}
		if ch, err := h.govern(c, user, p); err != nil || ch != nil {
			return changeRedirect(c, ch, err)
		}
		changed, err := models.Update(ctx, h.DB, h.Sealer, principalActor(user), d, c.FormValue("api_key"))
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case err != nil:
			return err
		case len(changed) == 0:
			return seeOther(c, "/models?done=unchanged")
		default:
			return seeOther(c, "/models?done=updated")
		}
	}
	return h.renderModels(c, http.StatusUnprocessableEntity, views.ModelsView{Editing: true, Form: form, Errors: errs})
}

// upstreamProposal is a deployment's edit as a governed change: its base
// URL and upstream key before and after (the new key sealed, bound to the
// deployment's name).
func upstreamProposal(h *Console, stored, d models.Deployment, apiKey string) (changes.Proposal, error) {
	before := changes.Upstream{BaseURL: stored.BaseURL, Key: "none"}
	if stored.HasAPIKey {
		before.Key = "stored"
	}
	d.APIKey = "" // the key travels sealed, never in the clear
	whole, err := json.Marshal(d)
	if err != nil {
		return changes.Proposal{}, err
	}
	after := changes.Upstream{BaseURL: d.BaseURL, Key: before.Key, Deployment: whole}
	if apiKey != "" {
		after.Key = "a new key"
		after.KeySealed = h.Sealer.Seal([]byte(apiKey), app.UpstreamKeyAAD(d.Name))
	}
	return changes.Proposal{Kind: changes.ModelUpstream, Subject: d.Name,
		Summary: "Point model deployment " + d.Name + " at " + d.BaseURL + " (upstream key: " + after.Key + ")",
		Before:  before, After: after}, nil
}

package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// The form's starting values, the same as the virtual_keys column defaults.
const (
	defaultRatePerMin = "600"
	defaultBurst      = "60"
)

// KeyNew shows the form that creates a key.
func (h *Console) KeyNew(c echo.Context) error {
	form := views.KeyForm{Tenant: c.QueryParam("tenant"), RatePerMin: defaultRatePerMin, Burst: defaultBurst}
	return renderKeyForm(c, h.DB, h, http.StatusOK, form, nil)
}

// KeyCreate creates a key and shows its secrets (the key and its callback
// secret, which sealer keeps sealed), once. The page is not cached and
// takes the secrets from the session only once, so reloading it, the list
// or going back cannot show them again.
func (h *Console) KeyCreate(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	params, err := c.FormParams()
	if err != nil {
		return problem.Invalid("bad_request", "The form could not be read.")
	}
	form := views.KeyForm{
		Tenant:     strings.TrimSpace(params.Get("tenant")),
		Name:       params.Get("name"),
		Scopes:     params["scopes"],
		Patterns:   strings.TrimSpace(params.Get("scope_patterns")),
		RatePerMin: params.Get("rate_per_min"),
		Burst:      params.Get("burst"),
		ExpiresAt:  strings.TrimSpace(params.Get("expires_at")),
	}
	errs := views.FieldErrors{}
	var tenant tenants.Tenant
	if form.Tenant == "" {
		errs["tenant"] = "Choose the tenant the key belongs to."
	} else if err := requireTenant(user, form.Tenant); err != nil {
		return err // outside the scope: 403, whatever else the form says
	} else if tenant, err = tenants.BySlug(ctx, h.DB.Read(), form.Tenant); errors.Is(err, store.ErrNotFound) {
		errs["tenant"] = "There is no tenant " + form.Tenant + "."
	} else if err != nil {
		return err
	}
	// Patterns are typed, not ticked: they join the ticked scopes, and
	// the form shows them as typed when it comes back.
	form.Scopes = append(form.Scopes, strings.Fields(form.Patterns)...)
	spec := keys.NewSpec{TenantID: tenant.ID, Name: form.Name, Scopes: form.Scopes, CreatedBy: user.ID}
	if n, msg := formInt(form.RatePerMin, "Enter a whole number of requests a minute."); msg != "" {
		errs["rate_per_min"] = msg
	} else {
		spec.RatePerMin = n
	}
	if n, msg := formInt(form.Burst, "Enter a whole number of requests."); msg != "" {
		errs["burst"] = msg
	} else {
		spec.Burst = n
	}
	if form.ExpiresAt != "" {
		day, err := time.ParseInLocation("2006-01-02", form.ExpiresAt, time.UTC)
		if err != nil {
			errs["expires_at"] = "Enter a date such as 2027-01-31, or leave it empty for a key that does not expire."
		} else {
			spec.ExpiresAt = &day
		}
	}
	offered, err := keyScopeChoices(ctx, h.DB, h)
	if err != nil {
		return err
	}
	if msg := keys.UnknownScope(form.Scopes, offered); msg != "" {
		errs["scopes"] = msg
	}
	for field, msg := range spec.Validate(time.Now()) {
		if _, seen := errs[field]; !seen {
			errs[field] = msg
		}
	}
	if len(errs) > 0 {
		return renderKeyForm(c, h.DB, h, http.StatusUnprocessableEntity, form, errs)
	}

	key, secrets, err := keys.CreateAudited(ctx, h.DB, h.Sealer, principalActor(user), spec)
	if errs, ok := fieldErrors(err); ok {
		return renderKeyForm(c, h.DB, h, http.StatusUnprocessableEntity, form, errs)
	}
	if err != nil {
		return err
	}
	// Post/redirect/get: the secrets ride once in the encrypted
	// session to the page that shows them, so a reload neither creates
	// a second key nor shows them again.
	if err := h.Flash.Put(c, newKeyFlash+key.ID, secrets.Key); err != nil {
		return err
	}
	if err := h.Flash.Put(c, newCallbackSecretFlash+key.ID, secrets.Callback); err != nil {
		return err
	}
	return seeOther(c, "/keys/"+key.ID+"/created")
}

// Flash keys of the secrets on their way to the page that shows them once.
const (
	newKeyFlash            = "new_key:"
	newCallbackSecretFlash = "new_callback_secret:"
)

// Flash carries a value from one request to the next, once.
type Flash interface {
	Put(c echo.Context, key, value string) error
	Take(c echo.Context, key string) (string, error)
}

// KeyCreated shows a new key; its secrets only the first time.
func (h *Console) KeyCreated(c echo.Context) error {
	key, err := keyInScope(c.Request().Context(), h.DB.Read(), CurrentPrincipal(c), c.Param("id"))
	if err != nil {
		return err
	}
	secret, err := h.Flash.Take(c, newKeyFlash+key.ID)
	if err != nil {
		return err
	}
	callback, err := h.Flash.Take(c, newCallbackSecretFlash+key.ID)
	if err != nil {
		return err
	}
	noStore(c)
	page := PageFor(c, "Key created")
	page.Active = "/keys"
	return Render(c, http.StatusOK, page, views.KeyCreated(page, views.KeyCreatedView{Key: key, Secret: secret, CallbackSecret: callback}))
}

// noStore keeps a page that may show a secret out of every cache.
func noStore(c echo.Context) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}

// keyScopeChoices lists every scope the form offers (keys.Offered).
func keyScopeChoices(ctx context.Context, st *store.DB, skills *Console) ([]string, error) {
	ch, err := keyFormChoices(ctx, st, skills)
	if err != nil {
		return nil, err
	}
	return ch.offered(ctx, st)
}

// offered is every scope a key may be given: ch's names as scopes and
// the upstream MCP servers' tools.
func (ch scopeChoices) offered(ctx context.Context, st *store.DB) ([]string, error) {
	// The tools of upstream MCP servers are typed (mcp:SERVER/TOOL or a
	// pattern such as mcp:SERVER/*), not ticked.
	mcp, err := mcpservers.Scopes(ctx, st.Read())
	if err != nil {
		return nil, err
	}
	return append(keys.Offered(ch.skills, ch.tools, ch.models), mcp...), nil
}

// scopeChoices are the names the key form offers scopes for.
type scopeChoices struct{ skills, tools, models []string }

func keyFormChoices(ctx context.Context, st *store.DB, skills *Console) (scopeChoices, error) {
	var ch scopeChoices
	var err error
	if ch.skills, err = skills.SkillNames(ctx); err != nil {
		return ch, fmt.Errorf("list skills: %w", err)
	}
	tools, err := catalog.List(ctx, st.Read())
	if err != nil {
		return ch, err
	}
	for _, t := range tools {
		ch.tools = append(ch.tools, t.Name)
	}
	if ch.models, err = models.Aliases(ctx, st.Read()); err != nil {
		return ch, err
	}
	return ch, nil
}

func renderKeyForm(c echo.Context, st *store.DB, skills *Console, status int, form views.KeyForm, errs views.FieldErrors) error {
	ctx := c.Request().Context()
	tenantList, err := tenants.List(ctx, st, tenantFilter(CurrentPrincipal(c)))
	if err != nil {
		return err
	}
	if form.Tenant == "" && len(tenantList) == 1 {
		form.Tenant = tenantList[0].Slug
	}
	ch, err := keyFormChoices(ctx, st, skills)
	if err != nil {
		return err
	}
	page := PageFor(c, "Create a key")
	page.Active = "/keys"
	return Render(c, status, page, views.KeyNew(page, views.KeyFormView{Form: form, Tenants: tenantList, Skills: ch.skills, Tools: ch.tools, Models: ch.models, Errors: errs}))
}

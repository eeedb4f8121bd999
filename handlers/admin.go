package handlers

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

// Tenant scope. Every handler that touches a tenant's object checks the
// principal's scope on the server, whatever the form offered.

// requireTenant refuses a principal whose tenant scope does not cover the
// tenant slug.
func requireTenant(p *identity.Principal, slug string) error {
	if p == nil || !p.InTenant(slug) {
		return Forbidden("Your tenant scope does not include the tenant " + strconv.Quote(slug) + ".")
	}
	return nil
}

// tenantScope is the one tenant-scope rule of list pages. It returns the
// tenants the principal may see (the filter's choices) and the tenant ids
// the list is limited to: the tenant named by filter (403 outside the
// scope; no rows for a tenant that does not exist), else every tenant in
// scope, or nil (no limit) for a principal who sees every tenant.
func tenantScope(ctx context.Context, db *store.DB, p *identity.Principal, filter string) (scope []tenants.Tenant, ids []string, err error) {
	if filter != "" {
		if err := requireTenant(p, filter); err != nil {
			return nil, nil, err
		}
	}
	scope, err = tenants.List(ctx, db, tenantFilter(p))
	if err != nil {
		return nil, nil, err
	}
	switch {
	case filter != "":
		ids = []string{}
		for _, t := range scope {
			if t.Slug == filter {
				ids = append(ids, t.ID)
			}
		}
	case !p.AllTenantScope():
		ids = tenantIDs(scope)
	}
	return scope, ids, nil
}

// requireAllTenants refuses changes that reach beyond any one tenant (the
// tool catalog, new tenants) unless the principal may see every tenant.
func requireAllTenants(p *identity.Principal, what string) error {
	if p == nil || !p.AllTenantScope() {
		return Forbidden(what + " affects every tenant, so it needs a tenant scope of all tenants.")
	}
	return nil
}

// tenantInScope loads the tenant named by slug after checking the scope:
// 403 outside the scope (whether or not it exists), 404 when unknown.
func tenantInScope(ctx context.Context, q store.Querier, p *identity.Principal, slug string) (tenants.Tenant, error) {
	if err := requireTenant(p, slug); err != nil {
		return tenants.Tenant{}, err
	}
	return tenants.BySlug(ctx, q, slug)
}

// tenantIDs returns the ids of the tenants, for filters that take ids.
func tenantIDs(ts []tenants.Tenant) []string {
	ids := make([]string, 0, len(ts))
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids
}

// principalActor is the audit actor for a console user.
func principalActor(p *identity.Principal) audit.Actor {
	return audit.Actor{Type: audit.ActorPrincipal, ID: p.ID}
}

// fieldErrors returns the field errors of a write the domain refused
// because of what the user typed, and whether err was such a refusal: the
// page shows them next to the fields instead of failing with a 500.
func fieldErrors(err error) (views.FieldErrors, bool) {
	var inv *store.ValidationError
	if !errors.As(err, &inv) {
		return nil, false
	}
	return views.FieldErrors(maps.Clone(inv.Fields)), true
}

// doneNotice turns the ?done= code a handler redirected with into the sentence
// the page shows. Only known codes are shown, so a link cannot put words
// on the page.
func doneNotice(c echo.Context, msgs map[string]string) string {
	return msgs[c.QueryParam("done")]
}

// seeOther redirects after a successful POST.
func seeOther(c echo.Context, url string) error {
	return c.Redirect(http.StatusSeeOther, url)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formInt reads a whole number typed into a form, or returns msg. It is
// strict: digits, with a minus for a negative number (which the field's
// own range then refuses in its words); "+24", "24.0", "1e3" and "-0"
// are msg ("-0" is no one's way to write 0: where 0 means "no limit", a
// stray minus must not read as it).
func formInt(raw, msg string) (int, string) {
	s := strings.TrimSpace(raw)
	abs, neg := strings.CutPrefix(s, "-")
	if !allDigits(abs) || abs == "" || (neg && strings.Trim(abs, "0") == "") {
		return 0, msg
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, msg
	}
	return n, ""
}

// Package views holds Warden's templ components: the console layout, pages
// and partials. View models are typed structs; components never query.
package views

import (
	"strings"

	"github.com/wardenhq/warden/platform/identity"
)

// Page is what every console page's layout needs.
type Page struct {
	Title     string
	User      *identity.Principal // nil when signed out
	CSRF      string              // token for the forms on the page
	DevMode   bool                // shows the development-mode banner
	Active    string              // path of the current nav item
	Nav       []NavItem           // pages the user may open
	RequestID string
	// BreakGlass is set when the installation lets one admin apply a
	// loosening change at once (WARDEN_BREAK_GLASS): forms offer it.
	BreakGlass bool
	// Opens reports whether the user may open a console path, from the
	// route table's roles (web/routes.go); nil outside a request.
	Opens func(path string) bool
}

// MayOpen reports whether a link to path opens for the viewer, so a page
// offers only links that do. Without the route table (a component
// rendered on its own) only the navigation's pages are known to open.
func (p Page) MayOpen(path string) bool {
	if p.Opens != nil {
		return p.Opens(path)
	}
	for _, n := range p.Nav {
		if n.Path == path {
			return true
		}
	}
	return false
}

// NavItem is one entry of the console navigation.
type NavItem struct {
	Label, Path string
}

func navClass(p Page, item NavItem) string {
	if p.Active == item.Path {
		return "nav-link active"
	}
	return "nav-link"
}

func initials(name string) string {
	var b strings.Builder
	for _, f := range strings.Fields(name) {
		for _, r := range f {
			b.WriteRune(r)
			break
		}
		if b.Len() >= 2 {
			break
		}
	}
	if b.Len() == 0 {
		return "?"
	}
	return strings.ToUpper(b.String())
}

func tenantScope(u *identity.Principal) string {
	if u == nil || len(u.Tenants) == 0 {
		return "no tenants"
	}
	if u.AllTenantScope() {
		return "all tenants"
	}
	return strings.Join(u.Tenants, ", ")
}

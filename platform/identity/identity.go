// Package identity holds who a console user is: the principal taken from a
// verified OIDC ID token, the roles and tenant scope its groups grant, and
// the rules that check them. It knows nothing of HTTP.
package identity

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Role names a console user may hold.
const (
	RoleApprover = "approver"
	RoleOncall   = "oncall"
	RoleAuditor  = "auditor"
	RoleAdmin    = "admin"
)

// Roles lists every role, in display order.
var Roles = []string{RoleApprover, RoleOncall, RoleAuditor, RoleAdmin}

// AllTenants is the tenant scope entry that grants every tenant.
const AllTenants = "*"

// Principal is a signed-in console user.
type Principal struct {
	ID      string   `json:"id"`    // Warden's id for (issuer, subject)
	Issuer  string   `json:"iss"`   // OIDC issuer
	Subject string   `json:"sub"`   // OIDC subject
	Name    string   `json:"name"`  // display name from the token
	Email   string   `json:"email"` // from the token; may be empty
	Roles   []string `json:"roles"` // sorted, from the groups claim
	// Groups is the groups claim as the identity provider sent it: routes
	// that name a group notify its members (notify).
	Groups  []string `json:"groups,omitempty"`
	Tenants []string `json:"tenants"` // tenant slugs, or ["*"] for all
}

// HasRole reports whether p holds role.
func (p Principal) HasRole(role string) bool {
	return slices.Contains(p.Roles, role)
}

// HasAnyRole reports whether p holds at least one of roles.
func (p Principal) HasAnyRole(roles ...string) bool {
	for _, r := range roles {
		if p.HasRole(r) {
			return true
		}
	}
	return false
}

// InTenant reports whether p's tenant scope covers the tenant slug.
func (p Principal) InTenant(slug string) bool {
	return slices.Contains(p.Tenants, AllTenants) || slices.Contains(p.Tenants, slug)
}

// AllTenantScope reports whether p may see every tenant.
func (p Principal) AllTenantScope() bool {
	return slices.Contains(p.Tenants, AllTenants)
}

// DisplayName is the best human label for p.
func (p Principal) DisplayName() string {
	switch {
	case p.Name != "":
		return p.Name
	case p.Email != "":
		return p.Email
	default:
		return p.Subject
	}
}

// Grants maps the groups of an ID token onto roles and a tenant scope.
type Grants struct {
	RoleMapping  map[string]string // group → role
	TenantPrefix string            // group prefix naming a tenant; prefix+"*" is all
}

// Apply returns the sorted roles and tenant scope the groups grant. Unknown
// groups grant nothing: deny by default.
func (g Grants) Apply(groups []string) (roles, tenants []string) {
	roles, tenants = []string{}, []string{}
	for _, grp := range groups {
		if r, ok := g.RoleMapping[grp]; ok && !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
		if t, ok := strings.CutPrefix(grp, g.TenantPrefix); ok && g.TenantPrefix != "" && validTenant(t) && !slices.Contains(tenants, t) {
			tenants = append(tenants, t)
		}
	}
	slices.Sort(roles)
	if slices.Contains(tenants, AllTenants) {
		return roles, []string{AllTenants}
	}
	slices.Sort(tenants)
	return roles, tenants
}

// validTenant accepts "*" or a slug of lower-case letters, digits and dashes.
func validTenant(t string) bool {
	if t == AllTenants {
		return true
	}
	if t == "" || len(t) > 63 {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// ownerGroupPattern is a group name as identity providers send them.
var ownerGroupPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$`)

// CheckOwner checks an owner as written in a skill file, a runbook or an
// admin form: a person's e-mail ("ana@example.com") or an identity
// provider group ("group:payments"). It returns the owner trimmed; "" is
// no owner.
func CheckOwner(owner string) (string, error) {
	owner = strings.TrimSpace(owner)
	switch {
	case owner == "":
		return "", nil
	case strings.HasPrefix(owner, "group:"):
		if !ownerGroupPattern.MatchString(strings.TrimPrefix(owner, "group:")) {
			return "", fmt.Errorf("owner %q: a group is written group:NAME (letters, digits, . _ : / @ -)", owner)
		}
	case strings.Count(owner, "@") != 1 || strings.ContainsAny(owner, " \t<>\"") || strings.HasPrefix(owner, "@") || strings.HasSuffix(owner, "@"):
		return "", fmt.Errorf("owner %q is neither an e-mail address nor group:NAME", owner)
	}
	return owner, nil
}

// Owns reports whether p is owner: the person with that e-mail, or a
// member of that group (groups as the identity provider sent them at p's
// last sign-in).
func Owns(owner, email string, groups []string) bool {
	if g, ok := strings.CutPrefix(owner, "group:"); ok {
		return slices.Contains(groups, g)
	}
	return owner != "" && strings.EqualFold(owner, strings.TrimSpace(email))
}

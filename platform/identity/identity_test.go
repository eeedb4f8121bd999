package identity

import (
	"slices"
	"testing"
)

func TestGrantsApply(t *testing.T) {
	g := Grants{
		RoleMapping:  map[string]string{"warden-approver": "approver", "warden-admin": "admin", "ops": "oncall"},
		TenantPrefix: "warden-tenant-",
	}
	tests := []struct {
		name        string
		groups      []string
		roles, tens []string
	}{
		{"none", nil, []string{}, []string{}},
		{"unknown groups grant nothing", []string{"everyone", "warden-superuser"}, []string{}, []string{}},
		{"approver for acme", []string{"warden-approver", "warden-tenant-acme"}, []string{"approver"}, []string{"acme"}},
		{"sorted and deduplicated", []string{"warden-admin", "ops", "warden-admin", "warden-tenant-zeta", "warden-tenant-acme", "warden-tenant-acme"}, []string{"admin", "oncall"}, []string{"acme", "zeta"}},
		{"wildcard wins", []string{"warden-tenant-acme", "warden-tenant-*"}, []string{}, []string{"*"}},
		{"bad tenant slug ignored", []string{"warden-tenant-Acme Corp", "warden-tenant-", "warden-tenant-<b>"}, []string{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			roles, tens := g.Apply(tt.groups)
			if !slices.Equal(roles, tt.roles) {
				t.Errorf("Apply(%q) roles = %q, want %q", tt.groups, roles, tt.roles)
			}
			if !slices.Equal(tens, tt.tens) {
				t.Errorf("Apply(%q) tenants = %q, want %q", tt.groups, tens, tt.tens)
			}
		})
	}
}

func TestPrincipalScope(t *testing.T) {
	alice := Principal{Roles: []string{"approver"}, Tenants: []string{"acme"}}
	erin := Principal{Roles: []string{"admin"}, Tenants: []string{"*"}}
	tests := []struct {
		p       Principal
		role    string
		tenant  string
		hasRole bool
		in      bool
	}{
		{alice, "approver", "acme", true, true},
		{alice, "admin", "globex", false, false},
		{erin, "admin", "globex", true, true},
		{erin, "approver", "acme", false, true},
	}
	for _, tt := range tests {
		if got := tt.p.HasRole(tt.role); got != tt.hasRole {
			t.Errorf("%v.HasRole(%q) = %v, want %v", tt.p.Roles, tt.role, got, tt.hasRole)
		}
		if got := tt.p.InTenant(tt.tenant); got != tt.in {
			t.Errorf("%v.InTenant(%q) = %v, want %v", tt.p.Tenants, tt.tenant, got, tt.in)
		}
	}
}

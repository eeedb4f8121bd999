package devidp

// DemoUsers returns the demo identities Warden offers in development mode.
// Their groups follow Warden's default mapping: warden-approver,
// warden-oncall, warden-auditor and warden-admin become roles;
// warden-tenant-<slug> scopes a user to one tenant and warden-tenant-* to
// all of them. Mallory has no groups, to exercise the 403 paths.
func DemoUsers() []User {
	return []User{
		{
			Subject:     "dev-alice",
			Username:    "alice",
			Name:        "Alice Approver",
			Email:       "alice@example.com",
			Groups:      []string{"warden-approver", "warden-tenant-acme"},
			Description: "approver for tenant acme",
		},
		{
			Subject:     "dev-bob",
			Username:    "bob",
			Name:        "Bob Approver",
			Email:       "bob@example.com",
			Groups:      []string{"warden-approver", "warden-tenant-acme"},
			Description: "second approver for tenant acme (for two-person approvals)",
		},
		{
			Subject:     "dev-carol",
			Username:    "carol",
			Name:        "Carol On-call",
			Email:       "carol@example.com",
			Groups:      []string{"warden-oncall", "warden-tenant-*"},
			Description: "on-call engineer for all tenants",
		},
		{
			Subject:     "dev-dave",
			Username:    "dave",
			Name:        "Dave Auditor",
			Email:       "dave@example.com",
			Groups:      []string{"warden-auditor", "warden-tenant-*"},
			Description: "auditor for all tenants",
		},
		{
			Subject:     "dev-erin",
			Username:    "erin",
			Name:        "Erin Admin",
			Email:       "erin@example.com",
			Groups:      []string{"warden-admin", "warden-tenant-*"},
			Description: "admin for all tenants",
		},
		{
			Subject:     "dev-frank",
			Username:    "frank",
			Name:        "Frank Admin",
			Email:       "frank@example.com",
			Groups:      []string{"warden-admin", "warden-tenant-*", "payments"},
			Description: "second admin for all tenants (approves another admin's loosening changes); in group payments, owner of the high-risk refunds skill",
		},
		{
			Subject:     "dev-mallory",
			Username:    "mallory",
			Name:        "Mallory Nobody",
			Email:       "mallory@example.com",
			Groups:      nil,
			Description: "no roles — sees 403 on role pages",
		},
	}
}

package views

import "github.com/wardenhq/warden/tenants"

// TenantsView lists tenants, with the form that creates one.
type TenantsView struct {
	Tenants   []tenants.Tenant
	Owners    map[string]string // slug → owner (owners.Of); none when absent
	CanCreate bool              // the admin's scope covers all tenants
	Form      TenantForm        // the create form's values
	Errors    FieldErrors
}

// TenantForm is what the create form posts.
type TenantForm struct {
	Slug, Name string
}

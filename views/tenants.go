package views

import "github.com/wardenhq/warden/platform/store"

// TenantsView lists tenants, with the form that creates one.
type TenantsView struct {
	Tenants   []store.Tenant
	CanCreate bool       // the admin's scope covers all tenants
	Form      TenantForm // the create form's values
	Errors    FieldErrors
}

// TenantForm is what the create form posts.
type TenantForm struct {
	Slug, Name string
}

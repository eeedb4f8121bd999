package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/tenants"
)

// OwnerSet asks to change who owns a tool, a model deployment or a
// tenant. Any change of owner waits for a second admin (docs/changes.md,
// kind owner); an owner that is neither an e-mail nor group:NAME is a 422
// and nothing is recorded.
func (h *Console) OwnerSet(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	object, key := c.Param("object"), c.Param("key")
	// A tenant's owner is its admins' to ask for; a tool's or a model
	// deployment's serves every tenant, so it needs an admin of all
	// tenants, as their own forms do. Scope first: an admin outside it
	// learns nothing of what exists.
	var t tenants.Tenant
	var err error
	switch object {
	case owners.Tenant:
		if t, err = tenantInScope(ctx, h.DB.Read(), user, key); err != nil {
			return err
		}
	case owners.Tool:
		err = requireAllTenants(user, catalogChange)
	case owners.Model:
		err = requireAllTenants(user, modelChange)
	}
	if err != nil {
		return err
	}
	before, err := owners.Get(ctx, h.DB.Read(), object, key)
	if err != nil {
		return err
	}
	after, err := owners.Check(c.FormValue("owner"))
	if err != nil {
		return problem.Unprocessable("invalid_owner", "Write the owner as a person's e-mail or group:NAME (an identity-provider group).")
	}
	p := changes.Proposal{Kind: changes.OwnerChange, Subject: key,
		Summary: "Make " + ownerOrNone(after) + " the owner of " + object + " " + key + " (was " + ownerOrNone(before) + ")",
		Before:  changes.Owner{Object: object, Key: key, Owner: before}, After: changes.Owner{Object: object, Key: key, Owner: after}}
	if object == owners.Tenant {
		p.TenantID, p.TenantSlug = t.ID, t.Slug
	}
	ch, err := h.govern(c, user, p)
	if err != nil {
		return err
	}
	if ch == nil {
		return seeOther(c, ownerPage(object, key))
	}
	return changeRedirect(c, ch, nil)
}

func ownerOrNone(o string) string {
	if o == "" {
		return "nobody"
	}
	return o
}

// ownerPage is the admin page of an object that has an owner.
func ownerPage(object, key string) string {
	switch object {
	case owners.Tenant:
		return "/tenants/" + key
	case owners.Model:
		return "/models/" + key + "/edit"
	}
	return "/tools/" + key + "/edit"
}

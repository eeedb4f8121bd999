package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
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
		// Back on the object's page, with what was typed and why not.
		c.Set(ownerFormKey, views.OwnerForm{Typed: c.FormValue("owner"),
			Error: "Write the owner as a person's e-mail or group:NAME (an identity-provider group)."})
		switch object {
		case owners.Tenant:
			c.SetParamNames("slug")
			c.SetParamValues(key)
			return h.TenantShow(c)
		case owners.Model:
			c.SetParamNames("name")
			c.SetParamValues(key)
			return h.ModelEditForm(c)
		}
		c.SetParamNames("name")
		c.SetParamValues(key)
		return h.ToolEditForm(c)
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

// ownerFormKey holds, in the request's context, the owner form OwnerSet
// refused, for the object's page to show again.
const ownerFormKey = "owner_form"

// refusedOwnerForm is the owner form OwnerSet refused and the status to
// show the object's page with: 422 with the form as typed, or 200 and none.
func refusedOwnerForm(c echo.Context) (views.OwnerForm, int) {
	if f, ok := c.Get(ownerFormKey).(views.OwnerForm); ok {
		return f, http.StatusUnprocessableEntity
	}
	return views.OwnerForm{}, http.StatusOK
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

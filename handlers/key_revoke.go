package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// KeyRevokeConfirm asks before revoking a key, saying what will happen.
func (h *Console) KeyRevokeConfirm(c echo.Context) error {
	k, err := keyInScope(c.Request().Context(), h.DB.Read(), CurrentPrincipal(c), c.Param("id"))
	if err != nil {
		return err
	}
	page := PageFor(c, "Revoke "+k.Name)
	page.Active = "/keys"
	return Render(c, http.StatusOK, page, views.KeyRevokeConfirm(page, views.KeyRevokeView{Key: k, State: keyState(k, time.Now())}))
}

// KeyRevoke revokes a key. Revoking it again changes and records nothing.
func (h *Console) KeyRevoke(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	k, err := keyInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	changed, err := keys.RevokeAudited(ctx, h.DB, principalActor(user), k.ID)
	if err != nil {
		return err
	}
	done := "revoked"
	if !changed {
		done = "already_revoked"
	}
	return seeOther(c, "/keys?done="+done)
}

// keyInScope loads a key: 404 when unknown, and the same 404 when its
// tenant is outside the principal's scope (like actions and journeys: an
// id's existence in another tenant is not told).
func keyInScope(ctx context.Context, q store.Querier, p *identity.Principal, id string) (keys.Key, error) {
	k, err := keys.ByID(ctx, q, id)
	if err != nil {
		return keys.Key{}, err
	}
	if p == nil || !p.InTenant(k.TenantSlug) {
		return keys.Key{}, keys.ErrNotFound
	}
	return k, nil
}

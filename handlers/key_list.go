package handlers

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/views"
)

const keyPageSize = 50

var keyListNotices = map[string]string{
	"revoked":         "Key revoked. Agents using it now get 401.",
	"already_revoked": "The key was already revoked; nothing changed.",
}

// KeyList lists the virtual keys of the tenants in the admin's scope,
// newest first, a page at a time. It never shows a secret: Warden does not
// have them.
func (h *Console) KeyList(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	filter := c.QueryParam("tenant")
	scope, ids, err := tenantScope(ctx, h.DB, user, filter)
	if err != nil {
		return err
	}
	page, err := listPage(c, keyPageSize)
	if err != nil {
		return err
	}
	paged, total, err := keys.Page(ctx, h.DB.Read(), ids, page)
	if err != nil {
		return err
	}
	shown := paged.Rows

	creators := make([]string, 0, len(shown))
	for _, k := range shown {
		creators = append(creators, k.CreatedBy)
	}
	names, err := principals.NamesOf(ctx, h.DB, creators)
	if err != nil {
		return err
	}
	now := time.Now()
	v := views.KeysView{Tenants: scope, Tenant: filter, Total: total, Notice: doneNotice(c, keyListNotices), Now: now}
	for _, k := range shown {
		v.Rows = append(v.Rows, views.KeyRow{Key: k, State: keyState(k, now), CreatedBy: names.Of(k.CreatedBy)})
	}
	v.NextPage, v.PrevPage = pageLinks("/keys", url.Values{"tenant": {filter}}, paged)
	p := PageFor(c, "Virtual keys")
	return Render(c, http.StatusOK, p, views.KeyList(p, v))
}

// keyState is what the list says about a key at now.
func keyState(k keys.Key, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return views.KeyRevoked
	case !k.Active(now):
		return views.KeyExpired
	default:
		return views.KeyActive
	}
}

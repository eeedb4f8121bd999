package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

const auditPageSize = 50

// AuditList shows the audit trail, newest first, a page at a time. A user
// scoped to some tenants sees only those tenants' events.
func (h *Console) AuditList(c echo.Context) error {
	v, err := auditView(c, h.DB)
	if err != nil {
		return err
	}
	page := PageFor(c, "Audit trail")
	return Render(c, http.StatusOK, page, views.AuditList(page, v))
}

// AuditVerify walks the whole chain, holding it to every signed checkpoint,
// and shows the result on the audit page. The verification itself is
// recorded in the trail, with the head it verified.
func (h *Console) AuditVerify(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	key, err := audit.InstallationKey(h.DB)
	if err != nil {
		return fmt.Errorf("verify audit chain: %w", err)
	}
	head, verr := audit.Verify(ctx, h.DB.Read(), &audit.Trust{Key: key})
	res := &views.AuditVerifyResult{OK: verr == nil}
	var ce *audit.ChainError
	switch {
	case verr == nil:
		res.Message = fmt.Sprintf("Chain intact: %d events verified, head hash %s.", head.Seq, head.Hash)
	case errors.As(verr, &ce):
		res.Message = fmt.Sprintf("Chain broken at seq %d: %s. Events after it cannot be trusted.", ce.Seq, ce.Reason)
	default:
		return fmt.Errorf("verify audit chain: %w", verr)
	}
	if err := audit.RecordVerification(ctx, h.DB, principalActor(user), head, verr); err != nil {
		return err
	}
	v, err := auditView(c, h.DB)
	if err != nil {
		return err
	}
	v.Verify = res
	page := PageFor(c, "Audit trail")
	return Render(c, http.StatusOK, page, views.AuditList(page, v))
}

func auditView(c echo.Context, st *store.DB) (views.AuditView, error) {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	tenant := c.QueryParam("tenant")
	if !user.AllTenantScope() {
		if tenant == "" && len(user.Tenants) > 0 {
			tenant = user.Tenants[0]
		}
		if err := requireTenant(user, tenant); err != nil {
			return views.AuditView{}, err
		}
	}
	page, err := listPage(c, auditPageSize)
	if err != nil {
		return views.AuditView{}, err
	}
	paged, err := audit.Page(ctx, st.Read(), audit.Query{Tenant: tenant}, page)
	if err != nil {
		return views.AuditView{}, err
	}
	events := paged.Rows
	total, err := audit.Count(ctx, st.Read())
	if err != nil {
		return views.AuditView{}, err
	}
	ids := make([]string, 0, len(events))
	for _, e := range events {
		if e.Actor.Type == audit.ActorPrincipal {
			ids = append(ids, e.Actor.ID)
		}
	}
	nm, err := st.PrincipalNames(ctx, ids)
	if err != nil {
		return views.AuditView{}, err
	}
	v := views.AuditView{Events: events, Total: total, Tenant: tenant, Names: nm}
	v.NextPage, v.PrevPage = pageLinks("/audit", url.Values{"tenant": {tenant}}, paged)
	return v, nil
}

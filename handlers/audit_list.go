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

// AuditVerify walks the whole chain and shows the result on the audit
// page. The verification itself is recorded in the trail.
func (h *Console) AuditVerify(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	head, err := audit.Verify(ctx, h.DB.Read(), nil)
	res := &views.AuditVerifyResult{OK: err == nil}
	detail := map[string]any{"verified_through_seq": head.Seq}
	var ce *audit.ChainError
	switch {
	case err == nil:
		res.Message = fmt.Sprintf("Chain intact: %d events verified, head hash %s.", head.Seq, head.Hash)
	case errors.As(err, &ce):
		res.Message = fmt.Sprintf("Chain broken at seq %d: %s. Events after it cannot be trusted.", ce.Seq, ce.Reason)
		detail["first_bad_seq"] = ce.Seq
	default:
		return fmt.Errorf("verify audit chain: %w", err)
	}
	if err := audit.RecordVerification(ctx, h.DB, principalActor(user), res.OK, detail); err != nil {
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

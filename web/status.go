package web

import (
	"context"
	"time"

	"github.com/wardenhq/warden/agent/jobs"
	"github.com/wardenhq/warden/agent/ledger"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// status gathers what the on-call status page shows.
func (s *Server) status(ctx context.Context, p *identity.Principal) (views.StatusView, error) {
	v := views.StatusView{
		Version:        s.version,
		DevMode:        s.cfg.DevMode(),
		Uptime:         time.Since(s.started).Round(time.Second).String(),
		ProviderReady:  s.auth.ready(),
		ProviderIssuer: s.auth.issuer,
	}
	if err := s.db.Ready(ctx); err != nil {
		v.DatabaseMessage = err.Error()
	} else {
		v.DatabaseOK = true
	}
	v.SchemaVersion, _ = s.db.SchemaVersion(ctx)
	if st := s.auth.status(); st.State == providerIssuerMismatch {
		v.ProviderError = "issuer mismatch: WARDEN_OIDC_ISSUER is " + s.auth.issuer + " but the provider announces " + st.Discovered + "; they must match exactly (mind a trailing slash)"
	} else if !v.ProviderReady && st.Err != nil {
		v.ProviderError = "last attempt: " + st.Err.Error()
	}
	n, err := audit.Count(ctx, s.db.Read())
	if err != nil {
		return v, err
	}
	v.AuditEvents = n
	return v, s.needsReview(ctx, p, &v)
}

// needsReview fills in what on-call must look at: failed actions in the
// user's tenants, unconfirmed effects and the job backlog.
func (s *Server) needsReview(ctx context.Context, p *identity.Principal, v *views.StatusView) error {
	failed, _, err := approvals.List(ctx, s.db.Read(), approvals.Filter{Status: approvals.StatusFailed, Sort: approvals.SortAge, Page: store.Page{Size: 20}}, time.Now())
	if err != nil {
		return err
	}
	for _, r := range failed.Rows {
		if p.InTenant(r.TenantSlug) {
			v.FailedActions = append(v.FailedActions, views.ReviewItem{ID: r.ID, Summary: r.Summary, Tenant: r.TenantSlug, Reason: r.Failure})
		}
	}
	if v.ReviewEffects, err = ledger.CountNeedsReview(ctx, s.db.Read()); err != nil {
		return err
	}
	v.PendingJobs, err = jobs.CountPending(ctx, s.db.Read())
	return err
}

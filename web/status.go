package web

import (
	"context"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/jobs"
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
	if err := s.failedJobs(ctx, p, &v); err != nil {
		return v, err
	}
	return v, s.pendingJobs(ctx, &v)
}

// failedJobsShown is how many failed jobs the status page lists.
const failedJobsShown = 20

// failedJobs lists the jobs that failed for good, with their errors
// redacted, for a viewer of every tenant: a job may concern any tenant,
// and the periodic ones the whole installation.
func (s *Server) failedJobs(ctx context.Context, p *identity.Principal, v *views.StatusView) error {
	if p == nil || !p.AllTenantScope() {
		return nil
	}
	failed, total, err := jobs.ListFailed(ctx, s.db, failedJobsShown)
	if err != nil {
		return err
	}
	v.FailedJobsShown, v.FailedJobsTotal = true, total
	for _, f := range failed {
		msg := f.Error
		if s.redactor != nil {
			msg, _ = s.redactor.Value(f.Error).(string)
		}
		v.FailedJobs = append(v.FailedJobs, views.FailedJob{ID: f.ID, Kind: views.JobKind(f.Kind), Permanent: f.Permanent,
			Attempts: f.Attempts, Error: msg, At: f.At, ActionID: f.ActionID, JourneyID: f.JourneyID})
	}
	return nil
}

// pendingJobs is the job backlog of the whole process; the failed
// actions and unconfirmed effects of the viewer's tenants are added by the
// status handler (handlers/oncall_work.go), scoped in their queries.
func (s *Server) pendingJobs(ctx context.Context, v *views.StatusView) error {
	var err error
	v.PendingJobs, err = jobs.CountPending(ctx, s.db)
	return err
}

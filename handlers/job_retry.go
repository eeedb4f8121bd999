package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/jobs"
)

var statusNotices = map[string]string{
	"job_retried":    "The job will run again at once. If it fails again it comes back to this list.",
	"job_not_failed": "That job is no longer failed (someone retried it, or it ran); nothing changed.",
}

// JobRetry runs a job that failed for good once more (status page); it
// is audited. Jobs concern any tenant, so it needs a scope of all
// tenants.
func (h *Console) JobRetry(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), "Retrying a job"); err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return jobs.ErrNotFound
	}
	err = jobs.Retry(c.Request().Context(), h.DB, id, audit.JobRetried(principalActor(CurrentPrincipal(c)), id))
	switch {
	case errors.Is(err, jobs.ErrNotFailed):
		return c.Redirect(http.StatusSeeOther, "/status?done=job_not_failed#failed-jobs")
	case err != nil:
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/status?done=job_retried#failed-jobs")
}

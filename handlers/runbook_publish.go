package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/runbooks"
)

// RunbookPublish asks to publish the held buttons of a runbook from the
// runbook directory as its file defines them now (docs/runbooks.md): a
// pending runbook.publish change a second admin approves on Changes, or
// break glass where allowed. The buttons reach every tenant, so asking
// needs an admin of all tenants; with nothing held it is a 409 and nothing
// is recorded.
func (h *Console) RunbookPublish(c echo.Context) error {
	user := CurrentPrincipal(c)
	if !user.AllTenantScope() {
		return problem.Forbidden("forbidden", "A runbook's buttons may reach every tenant, so publishing them needs an admin of all tenants.")
	}
	rb, err := h.runbook(c.Param("id"))
	if err != nil {
		return err
	}
	p, err := runbooks.PublishProposal(c.Request().Context(), h.DB.Read(), rb)
	if err != nil {
		return err
	}
	ch, err := h.govern(c, user, p)
	if err != nil {
		return err
	}
	if ch == nil {
		return seeOther(c, "/runbooks/"+rb.ID)
	}
	return changeRedirect(c, ch, nil)
}

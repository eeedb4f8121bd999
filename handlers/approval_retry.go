package handlers

import (
	"github.com/labstack/echo/v4"
)

// ApprovalRetry executes again an action whose execution was blocked
// before anything was sent, once the block is lifted: under the same
// idempotency key (runtime.RetryAction decides whether that is safe).
func (h *Console) ApprovalRetry(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	a, _, err := actionInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	if _, err := h.Execution.RetryAction(ctx, *user, a.ID); err != nil {
		return err
	}
	return seeOther(c, "/approvals/"+a.ID+"?done=retried")
}

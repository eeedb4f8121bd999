package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/views"
)

// ApprovalQueueRows answers the queue's rows alone, for queue.js to swap
// in every few seconds: the same query, scope and checks as ApprovalList.
func (h *Console) ApprovalQueueRows(c echo.Context) error {
	v, err := loadQueue(c, h.DB)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusBadRequest
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return RenderComponent(c, status, views.ApprovalQueueRows(v))
}

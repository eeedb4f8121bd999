package handlers

import (
	"bytes"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// LabelExport downloads the runtime's agent's labelled journeys in the
// user's tenants as JSON lines (journeys.ExportLabels): redacted inputs,
// routes, labels and release digests, for offline evaluation.
func (h *Console) LabelExport(c echo.Context) error {
	agent, env := h.Runtime.Target()
	var buf bytes.Buffer
	if _, err := h.Runtime.ExportLabels(c.Request().Context(), &buf, agent, env, CurrentPrincipal(c).InTenant); err != nil {
		return err
	}
	name := "route-labels-" + agent + "-" + env + "-" + time.Now().UTC().Format("20060102") + ".jsonl"
	c.Response().Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	return c.Blob(http.StatusOK, "application/jsonl", buf.Bytes())
}

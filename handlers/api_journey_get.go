package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/store"
)

// GetJourney is GET /v1/journeys/{id}: the journey, its redacted steps and
// its pending action. A key sees the journeys it ran, or every journey of
// its tenant with the scope read:tenant.
func (api *API) GetJourney(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return err
	}
	j, err := journeys.GetJourney(ctx, api.DB.Read(), c.Param("id"))
	if err != nil {
		return err
	}
	if !caller.CanRead(j.TenantID, j.KeyID) {
		return journeys.ErrNotFound
	}
	var action *approvals.Action
	if a, err := approvals.ByJourney(ctx, api.DB.Read(), j.ID); err == nil {
		action = &a
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	out := toJourneyJSON(j, action, true)
	if j.ErrorCode != "" {
		out.Error = &apiError{Code: j.ErrorCode, Message: "The journey ended with " + j.ErrorCode + "."}
	}
	return c.JSON(http.StatusOK, out)
}

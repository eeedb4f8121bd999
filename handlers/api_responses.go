package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Responses is POST /v1/responses (OpenAI's Responses API): authenticate,
// then the model gateway translates it to a chat call, which reserves,
// routes, answers (or streams) and settles as chat does.
func (api *ModelAPI) Responses(c echo.Context) error {
	ctx, caller, raw, err := api.modelRequest(c)
	if err != nil {
		return err
	}
	return api.Models.Responses(ctx, caller, raw, c.Response())
}

// GetResponse is GET /v1/responses/{id}: a Response this key stored.
func (api *ModelAPI) GetResponse(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return err
	}
	b, err := api.Models.Response(ctx, caller, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, b)
}

// DeleteResponse is DELETE /v1/responses/{id}.
func (api *ModelAPI) DeleteResponse(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return err
	}
	id := c.Param("id")
	if err := api.Models.DeleteResponse(ctx, caller, id); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": id, "object": "response", "deleted": true})
}

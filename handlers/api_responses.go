package handlers

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/problem"
)

// Responses is POST /v1/responses (OpenAI's Responses API): authenticate,
// then the model gateway translates it to a chat call, which reserves,
// routes, answers (or streams) and settles as chat does.
func (api *ModelAPI) Responses(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return problem.New(problem.KindTooLarge, "too_large", "The request body is too large.")
		}
		return problem.Invalid("invalid_json", "The request body could not be read.")
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

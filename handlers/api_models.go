package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// ListModels is GET /v1/models: the aliases the key may use, in OpenAI's
// list shape.
func (api *ModelAPI) ListModels(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return err
	}
	aliases, err := api.Models.Models(ctx, caller)
	if err != nil {
		return err
	}
	data := make([]map[string]any, 0, len(aliases))
	for _, a := range aliases {
		data = append(data, map[string]any{"id": a, "object": "model", "created": 0, "owned_by": "warden"})
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data})
}

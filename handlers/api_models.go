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
		data = append(data, modelObject(a))
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data})
}

// GetModel is GET /v1/models/{id}: the alias's model object when it
// exists and the key may use it (404 model_not_found for an alias Warden
// does not serve, 403 for one outside the key's scopes).
func (api *ModelAPI) GetModel(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return err
	}
	id := c.Param("id")
	if err := api.Models.Model(ctx, caller, id); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, modelObject(id))
}

// modelObject is an alias in OpenAI's model shape.
func modelObject(alias string) map[string]any {
	return map[string]any{"id": alias, "object": "model", "created": 0, "owned_by": "warden"}
}

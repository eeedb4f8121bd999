package handlers

import (
	"github.com/labstack/echo/v4"
)

// Embeddings is POST /v1/embeddings: authenticate, then the model gateway
// reserves, routes, answers and settles (models.Gateway.Embeddings).
func (api *ModelAPI) Embeddings(c echo.Context) error {
	ctx, caller, raw, err := api.modelRequest(c)
	if err != nil {
		return err
	}
	return api.Models.Embeddings(ctx, caller, raw, c.Response())
}

package handlers

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/problem"
)

// ModelAPI serves the OpenAI-compatible model gateway (/v1/chat/completions,
// /v1/models) under the same virtual keys as the rest of /v1.
type ModelAPI struct {
	Gateway *admission.Gateway
	Models  *models.Gateway
}

// ChatCompletions is POST /v1/chat/completions: authenticate, then the
// model gateway reserves, routes, answers (or streams) and settles.
func (api *ModelAPI) ChatCompletions(c echo.Context) error {
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
	// The agent's tags for the call, checked with the body's metadata.
	ctx = models.WithTagsHeader(ctx, c.Request().Header.Get(models.HeaderMetadata))
	if err := api.Models.Chat(ctx, caller, raw, c.Response()); err != nil {
		return err
	}
	return nil
}

// IsOpenAIRoute reports whether path is one of the routes that answer in
// OpenAI's error shape, so errors raised before their handler runs (a
// body over the limit, a wrong method) keep that shape too.
func IsOpenAIRoute(path string) bool {
	return path == "/v1/chat/completions" || path == "/v1/models"
}

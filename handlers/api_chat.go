package handlers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/problem"
)

// ModelAPI serves the OpenAI-compatible model gateway (/v1/chat/completions,
// /v1/responses, /v1/embeddings, /v1/models) under the same virtual keys as
// the rest of /v1.
type ModelAPI struct {
	Gateway *admission.Gateway
	Models  *models.Gateway
}

// ChatCompletions is POST /v1/chat/completions: authenticate, then the
// model gateway reserves, routes, answers (or streams) and settles.
func (api *ModelAPI) ChatCompletions(c echo.Context) error {
	ctx, caller, raw, err := api.modelRequest(c)
	if err != nil {
		return err
	}
	return api.Models.Chat(ctx, caller, raw, c.Response())
}

// modelRequest is what every model route (chat, responses, embeddings)
// starts with: the caller of the key, the request body (bounded by the
// server's body limit), and a context carrying the agent's tags header
// (x-warden-metadata), which the gateway checks with the body's metadata
// before anything is reserved.
func (api *ModelAPI) modelRequest(c echo.Context) (context.Context, admission.Caller, []byte, error) {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return nil, admission.Caller{}, nil, err
	}
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, admission.Caller{}, nil, problem.New(problem.KindTooLarge, "too_large", "The request body is too large.")
		}
		return nil, admission.Caller{}, nil, problem.Invalid("invalid_json", "The request body could not be read.")
	}
	return models.WithTagsHeader(ctx, c.Request().Header.Get(models.HeaderMetadata)), caller, raw, nil
}

// IsOpenAIRoute reports whether path answers in OpenAI's error shape:
// every path under /v1/ but Warden's own API (/v1/journeys, /v1/actions,
// docs/api.md), also a path Warden does not serve, so errors raised
// before a handler runs (a body over the limit, a wrong method, an
// unknown path) keep that shape too, and an OpenAI client reads them.
func IsOpenAIRoute(path string) bool {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return false
	}
	for _, own := range []string{"journeys", "actions"} {
		if rest == own || strings.HasPrefix(rest, own+"/") {
			return false
		}
	}
	return true
}

// ServedRoutes names the routes under /v1/, for an error that answers a
// path or method Warden does not serve.
const ServedRoutes = "Warden serves /v1/chat/completions, /v1/responses, /v1/embeddings, /v1/models (and /v1/journeys, /v1/actions for Warden's own API)."

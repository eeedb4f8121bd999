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

// openAIFail is apiFail in OpenAI's error shape, which these routes speak
// so that OpenAI's SDKs read Warden's refusals as they read OpenAI's:
// {"error": {"message", "type", "code"}}, with Retry-After where it
// applies.
func openAIFail(c echo.Context, err error) error {
	p := problem.From(err)
	p.SetRetryAfter(c.Response().Header())
	typ := "invalid_request_error"
	switch p.Kind {
	case problem.KindUnauthenticated:
		typ = "authentication_error"
	case problem.KindForbidden:
		typ = "permission_error"
	case problem.KindExhausted:
		typ = "insufficient_quota"
	case problem.KindRateLimited:
		typ = "rate_limit_error"
	case problem.KindUnavailable, problem.KindInternal, problem.KindBadGateway:
		typ = "server_error"
	}
	return c.JSON(p.Status(), map[string]any{"error": map[string]any{"message": p.Message, "type": typ, "code": p.Code}})
}

// ChatCompletions is POST /v1/chat/completions: authenticate, then the
// model gateway reserves, routes, answers (or streams) and settles.
func (api *ModelAPI) ChatCompletions(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return openAIFail(c, err)
	}
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return openAIFail(c, problem.New(problem.KindTooLarge, "too_large", "The request body is too large."))
		}
		return openAIFail(c, problem.Invalid("invalid_json", "The request body could not be read."))
	}
	if err := api.Models.Chat(ctx, caller, raw, c.Response()); err != nil {
		return openAIFail(c, err)
	}
	return nil
}

// IsOpenAIRoute reports whether path is one of the routes that answer in
// OpenAI's error shape, so errors raised before their handler runs (a
// body over the limit, a wrong method) keep that shape too.
func IsOpenAIRoute(path string) bool {
	return path == "/v1/chat/completions" || path == "/v1/models"
}

// OpenAIErrorType is the OpenAI error "type" for an HTTP status, for
// errors that carry no problem kind.
func OpenAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusPaymentRequired:
		return "insufficient_quota"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

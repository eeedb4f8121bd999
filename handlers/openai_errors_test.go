package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/problem"
)

// Every problem kind has its OpenAI type, named on purpose: a kind added
// to package problem fails here until it is given one.
func TestOpenAITypeNamesEveryKind(t *testing.T) {
	want := map[problem.Kind]string{
		problem.KindInternal: "server_error", problem.KindInvalid: "invalid_request_error",
		problem.KindUnauthenticated: "authentication_error", problem.KindExhausted: "insufficient_quota",
		problem.KindForbidden: "permission_error", problem.KindNotFound: "invalid_request_error",
		problem.KindConflict: "invalid_request_error", problem.KindTooLarge: "invalid_request_error",
		problem.KindUnprocessable: "invalid_request_error", problem.KindRateLimited: "rate_limit_error",
		problem.KindUnavailable: "server_error", problem.KindBadGateway: "server_error",
		problem.KindMisdirected: "invalid_request_error",
	}
	kinds := 0
	for k := problem.KindInternal; k.Status() != 0; k++ {
		kinds++
		if got, ok := want[k]; !ok {
			t.Errorf("kind %d (status %d) has no OpenAI type in this table", k, k.Status())
		} else if openAIType(k) != got {
			t.Errorf("openAIType(%d) = %q, want %q", k, openAIType(k), got)
		}
	}
	if kinds != len(want) {
		t.Errorf("%d kinds, %d in the table", kinds, len(want))
	}
}

func TestIsOpenAIRoute(t *testing.T) {
	for path, want := range map[string]bool{
		"/v1/chat/completions": true, "/v1/embeddings": true, "/v1/models": true, "/v1/models/chat": true,
		"/v1/responses": true, "/v1/responses/resp_1": true, "/v1/completions": true, "/v1/foo": true,
		"/v1/journeys": false, "/v1/journeys/j1": false, "/v1/actions": false, "/v1/actions/a1/result": false,
		"/v1/journeysx": true, "/approvals": false, "/v1": false, "/readyz": false,
	} {
		if got := IsOpenAIRoute(path); got != want {
			t.Errorf("IsOpenAIRoute(%q) = %v, want %v", path, got, want)
		}
	}
}

// The router's 404 and 405 under /v1/ answer in OpenAI's shape and say
// which routes Warden serves; Warden's own API keeps its shape.
func TestUnservedRoutesSayWhatIsServed(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		err          error
		status       int
		code         string
	}{
		{http.MethodPost, "/v1/completions", echo.ErrNotFound, 404, "unknown_url"},
		{http.MethodGet, "/v1/foo", echo.ErrNotFound, 404, "unknown_url"},
		{http.MethodGet, "/v1/chat/completions", echo.ErrMethodNotAllowed, 405, "method_not_allowed"},
		{http.MethodPost, "/v1/models", echo.ErrMethodNotAllowed, 405, "method_not_allowed"},
	} {
		rec := answer(t, tc.method, tc.path, "", tc.err)
		e := errorBody(t, rec)
		msg, _ := e["message"].(string)
		if rec.Code != tc.status || e["type"] != "invalid_request_error" || e["code"] != tc.code {
			t.Errorf("%s %s: %d %v", tc.method, tc.path, rec.Code, e)
		}
		if !strings.HasPrefix(msg, tc.method+" "+tc.path+" ") || !strings.HasSuffix(msg, ServedRoutes) {
			t.Errorf("%s %s: message %q", tc.method, tc.path, msg)
		}
	}
	// A handler's own 404 keeps its words.
	rec := answer(t, http.MethodGet, "/v1/models/nope", "", problem.NotFound("model_not_found", "There is no model nope."))
	if e := errorBody(t, rec); rec.Code != 404 || e["code"] != "model_not_found" || e["message"] != "There is no model nope." || e["type"] != "invalid_request_error" {
		t.Errorf("model_not_found: %d %v", rec.Code, e)
	}
	// Warden's own API: its documented shape, with OpenAI's type too.
	rec = answer(t, http.MethodGet, "/v1/actions", "", echo.ErrMethodNotAllowed)
	if e := errorBody(t, rec); rec.Code != 405 || e["code"] != "method_not_allowed" || e["type"] != "invalid_request_error" {
		t.Errorf("/v1/actions 405: %d %v", rec.Code, e)
	}
}

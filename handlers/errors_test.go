package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// answer runs WriteProblem for one request and returns the recorder.
func answer(t *testing.T, method, path, accept string, err error) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if accept != "" {
		req.Header.Set(echo.HeaderAccept, accept)
	}
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(req, rec)
	if werr := WriteProblem(c, err, views.Page{}); werr != nil {
		t.Fatalf("WriteProblem: %v", werr)
	}
	return rec
}

func errorBody(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, rec.Body)
	}
	e, _ := body["error"].(map[string]any)
	if e == nil {
		t.Fatalf("no error object: %s", rec.Body)
	}
	return e
}

// One error reads the same through every door: its kind's status, its
// code and message, Retry-After once, in each door's shape.
func TestWriteProblemSpeaksEachDoorsShape(t *testing.T) {
	busy := problem.Unavailable("overloaded", "Warden is busy; try again in a second.", 1500*time.Millisecond)
	for _, tc := range []struct {
		door, path, accept string
	}{
		{"api", "/v1/journeys", ""},
		{"openai", "/v1/chat/completions", ""},
		{"console asking for JSON", "/approvals", "application/json"},
	} {
		rec := answer(t, http.MethodPost, tc.path, tc.accept, busy)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "2" {
			t.Errorf("%s: status %d Retry-After %q; want 503 and 2", tc.door, rec.Code, rec.Header().Values("Retry-After"))
		}
		e := errorBody(t, rec)
		if e["code"] != "overloaded" || e["message"] != busy.Message {
			t.Errorf("%s: error %v", tc.door, e)
		}
		if typ, has := e["type"]; (tc.door != "console asking for JSON") != has || has && typ != "server_error" {
			t.Errorf("%s: type %v (present %v)", tc.door, typ, has)
		}
	}

	// OpenAI's type follows the kind, also for a refusal made before the
	// handler (a budget, a rate limit).
	for kind, want := range map[problem.Kind]string{
		problem.KindUnauthenticated: "authentication_error", problem.KindForbidden: "permission_error",
		problem.KindExhausted: "insufficient_quota", problem.KindRateLimited: "rate_limit_error",
		problem.KindInvalid: "invalid_request_error", problem.KindBadGateway: "server_error",
	} {
		rec := answer(t, http.MethodPost, "/v1/chat/completions", "", problem.New(kind, "x", "No."))
		if got := errorBody(t, rec)["type"]; got != want || rec.Code != kind.Status() {
			t.Errorf("kind %d: type %v status %d; want %s %d", kind, got, rec.Code, want, kind.Status())
		}
	}
}

func TestWriteProblemHidesInternalCauses(t *testing.T) {
	rec := answer(t, http.MethodGet, "/v1/journeys/j1", "", errors.New("pq: relation secret_table does not exist"))
	e := errorBody(t, rec)
	if rec.Code != 500 || e["code"] != "internal" || strings.Contains(rec.Body.String(), "secret_table") {
		t.Errorf("500 answer %d %s", rec.Code, rec.Body)
	}
	page := answer(t, http.MethodGet, "/approvals", "", errors.New("pq: relation secret_table does not exist"))
	if page.Code != 500 || strings.Contains(page.Body.String(), "secret_table") || !strings.Contains(page.Body.String(), "request id") {
		t.Errorf("500 page %d %s", page.Code, page.Body)
	}
	if rec := answer(t, http.MethodGet, "/approvals", "", errors.New("boom")); rec.Header().Get("Retry-After") != "" {
		t.Errorf("Retry-After on an internal error: %q", rec.Header().Get("Retry-After"))
	}
}

func TestWriteProblemKeepsTheRoutersStatus(t *testing.T) {
	rec := answer(t, http.MethodPut, "/v1/journeys", "", echo.ErrMethodNotAllowed)
	if e := errorBody(t, rec); rec.Code != 405 || e["code"] != "method_not_allowed" || e["message"] != "This address does not accept that method." {
		t.Errorf("405: %d %v", rec.Code, e)
	}
	page := answer(t, http.MethodGet, "/nowhere", "", echo.ErrNotFound)
	if page.Code != 404 || !strings.Contains(page.Body.String(), "There is nothing at this address.") {
		t.Errorf("404 page: %d %s", page.Code, page.Body)
	}
	if head := answer(t, http.MethodHead, "/nowhere", "", echo.ErrNotFound); head.Code != 404 || head.Body.Len() != 0 {
		t.Errorf("HEAD: %d %q", head.Code, head.Body)
	}
}

// A lookup that found nothing is a 404 wherever it surfaces, without the
// handler mapping it.
func TestWriteProblemNotFound(t *testing.T) {
	rec := answer(t, http.MethodGet, "/v1/actions/a1", "", store.ErrNotFound)
	if e := errorBody(t, rec); rec.Code != 404 || e["code"] != "not_found" {
		t.Errorf("not found: %d %v", rec.Code, e)
	}
}

// A journey that was recorded before it failed comes back with the error.
func TestProblemJSONCarriesTheJourney(t *testing.T) {
	c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/v1/journeys", nil), httptest.NewRecorder())
	err := &journeys.JourneyError{Journey: journeys.Journey{ID: "jrn_1", Status: "failed"}, Problem: problem.Unprocessable("incomplete_request", "Which order?")}
	status, body := ProblemJSON(c, err)
	m := body.(map[string]any)
	j, _ := m["journey"].(journeyJSON)
	if status != 422 || m["id"] != "jrn_1" || m["status"] != "failed" || j.Error == nil || j.Error.Code != "incomplete_request" {
		t.Errorf("journey error: %d %#v", status, body)
	}
}

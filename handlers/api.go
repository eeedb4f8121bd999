package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/gateway"
	"github.com/wardenhq/warden/agent/policy"
	"github.com/wardenhq/warden/agent/runtime"
	"github.com/wardenhq/warden/approvals"
)

// apiStatus maps a refusal or failure code to its HTTP status (docs/api.md,
// §5, the API contract).
var apiStatus = map[string]int{
	gateway.CodeUnauthorized:    http.StatusUnauthorized,
	gateway.CodeTenantFrozen:    http.StatusForbidden,
	gateway.CodeRateLimited:     http.StatusTooManyRequests,
	gateway.CodeBudgetExhausted: http.StatusPaymentRequired,
	gateway.CodeUnavailable:     http.StatusServiceUnavailable,
	runtime.CodeInvalidInput:    http.StatusBadRequest,
	runtime.CodeNoRoute:         http.StatusUnprocessableEntity,
	runtime.CodeIncomplete:      http.StatusUnprocessableEntity,
	runtime.CodeSkillNotScoped:  http.StatusForbidden,
	runtime.CodeToolRefused:     http.StatusUnprocessableEntity,
	runtime.CodeToolUnavailable: http.StatusServiceUnavailable,
	runtime.CodeCancelled:       http.StatusServiceUnavailable,
	runtime.CodeInternal:        http.StatusInternalServerError,
	policy.CodeUnknownTool:      http.StatusForbidden,
	policy.CodeNotInScope:       http.StatusForbidden,
	policy.CodeDisabled:         http.StatusForbidden,
	policy.CodeInvalidArguments: http.StatusBadRequest,
	"invalid_json":              http.StatusBadRequest,
	"idempotency_mismatch":      http.StatusUnprocessableEntity,
	"idempotency_in_flight":     http.StatusConflict,
	"not_found":                 http.StatusNotFound,
}

// apiError is the JSON error body.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// journeyJSON is the journey shape of the API contract; fields may be
// added, none renamed or removed.
type journeyJSON struct {
	ID            string         `json:"id"`
	Status        string         `json:"status"`
	Skill         string         `json:"skill"`
	Output        string         `json:"output"`
	Release       string         `json:"release"`
	Action        *actionRefJSON `json:"action,omitempty"`
	Cost          runtime.Cost   `json:"cost"`
	RequestID     string         `json:"request_id"`
	CorrelationID string         `json:"correlation_id"`
	CreatedAt     time.Time      `json:"created_at"`
	LatencyMS     int64          `json:"latency_ms"`
	Steps         []stepJSON     `json:"steps,omitempty"`
	Error         *apiError      `json:"error,omitempty"`
}

type actionRefJSON struct {
	ID                string    `json:"id"`
	Status            string    `json:"status"`
	Summary           string    `json:"summary"`
	ExpiresAt         time.Time `json:"expires_at"`
	ApprovalsRequired int       `json:"approvals_required"`
}

type stepJSON struct {
	N         int             `json:"n"`
	Kind      string          `json:"kind"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Status    string          `json:"status"`
	Error     string          `json:"error,omitempty"`
	LatencyMS int64           `json:"latency_ms"`
}

// rawOrString keeps stored JSON as JSON and anything else as a string.
func rawOrString(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func toJourneyJSON(j runtime.Journey, a *approvals.Action, withSteps bool) journeyJSON {
	out := journeyJSON{
		ID: j.ID, Status: j.Status, Skill: j.Skill, Output: j.Output, Release: j.Release, Cost: j.Cost,
		RequestID: j.RequestID, CorrelationID: j.CorrelationID, CreatedAt: j.CreatedAt.UTC(), LatencyMS: j.Latency.Milliseconds(),
	}
	if a != nil {
		out.Action = &actionRefJSON{ID: a.ID, Status: a.Status, Summary: a.Summary, ExpiresAt: a.ExpiresAt, ApprovalsRequired: a.ApprovalsRequired}
	}
	if withSteps {
		out.Steps = []stepJSON{}
		for _, s := range j.Steps {
			out.Steps = append(out.Steps, stepJSON{N: s.N, Kind: s.Kind, Tool: s.Tool, Arguments: rawOrString(s.Arguments),
				Result: rawOrString(s.Result), Status: s.Status, Error: s.Error, LatencyMS: s.Latency.Milliseconds()})
		}
	}
	return out
}

// apiFail writes an error from the gateway or the runtime as JSON with its
// status (and Retry-After where it applies). A recorded journey is included.
func apiFail(c echo.Context, err error) (int, any) {
	var ge *gateway.Error
	var re *runtime.Error
	switch {
	case errors.As(err, &ge):
		if ge.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(max(1, ge.RetryAfter.Round(time.Second).Seconds()))))
		}
		return statusOf(ge.Code), map[string]any{"error": apiError{Code: ge.Code, Message: ge.Message}}
	case errors.As(err, &re):
		status := statusOf(re.Code)
		if status == http.StatusServiceUnavailable {
			c.Response().Header().Set("Retry-After", "5")
		}
		body := map[string]any{"error": apiError{Code: re.Code, Message: re.Message}}
		if re.Journey != nil {
			j := toJourneyJSON(*re.Journey, nil, false)
			j.Error = &apiError{Code: re.Code, Message: re.Message}
			body["id"], body["status"], body["journey"] = j.ID, j.Status, j
		}
		return status, body
	}
	return http.StatusInternalServerError, map[string]any{"error": apiError{Code: "internal", Message: "Something went wrong on Warden's side."}}
}

func statusOf(code string) int {
	if s, ok := apiStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

func jsonError(c echo.Context, code, msg string) error {
	return c.JSON(statusOf(code), map[string]any{"error": apiError{Code: code, Message: msg}})
}

// bearer reads the virtual key from the Authorization header.
func bearer(c echo.Context) string {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(tok)
	}
	return ""
}

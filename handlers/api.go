package handlers

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/store"
)

// API serves the agents' JSON API (/v1, virtual keys). Its methods are the
// handlers; web/routes.go registers them when Warden runs the agent
// runtime.
type API struct {
	DB        *store.DB
	Gateway   *admission.Gateway
	Runtime   *journeys.Service
	Execution *execution.Service
}

// apiError is the JSON error body.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Type is OpenAI's error type for the same status (openAIType), so a
	// client that reads OpenAI's errors reads every /v1 error alike; set
	// on an error answer, not on a recorded journey's error.
	Type string `json:"type,omitempty"`
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
	Cost          journeys.Cost  `json:"cost"`
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

func toJourneyJSON(j journeys.Journey, a *approvals.Action, withSteps bool) journeyJSON {
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

// bearer reads the virtual key from the Authorization header.
func bearer(c echo.Context) string {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(tok)
	}
	return ""
}

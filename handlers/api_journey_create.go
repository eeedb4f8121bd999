package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/idempotency"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
)

// maxCorrelationID is the longest X-Correlation-Id kept on a journey.
const maxCorrelationID = 128

type journeyRequest struct {
	Input    string            `json:"input"`
	Skill    string            `json:"skill"`
	Metadata map[string]string `json:"metadata"`
	// Personal marks metadata members personal, as a tool's schema marks
	// an argument: {"customer": "name"} (docs/api.md).
	Personal map[string]string `json:"x-warden-personal"`
}

// personalMarks turns a request's x-warden-personal marks into the values
// the journey tokenises wherever it writes them, or a problem naming the
// mark that is wrong: a kind Warden does not know, or a member the
// metadata does not have.
func personalMarks(req journeyRequest) ([]redact.Marked, error) {
	keys := make([]string, 0, len(req.Personal))
	for k := range req.Personal {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []redact.Marked
	for _, k := range keys {
		kind := req.Personal[k]
		if !slices.Contains(redact.PersonalKinds(), kind) {
			return nil, problem.Invalid(journeys.CodeInvalidInput, fmt.Sprintf(`"x-warden-personal" marks %q as %q; a mark names one of %s.`,
				k, kind, strings.Join(redact.PersonalKinds(), ", ")))
		}
		v, ok := req.Metadata[k]
		if !ok {
			return nil, problem.Invalid(journeys.CodeInvalidInput, fmt.Sprintf(`"x-warden-personal" marks %q, which "metadata" does not have.`, k))
		}
		out = append(out, redact.Marked{Kind: kind, Value: v})
	}
	return out, nil
}

// CreateJourney is POST /v1/journeys: authenticate → (replay) → run.
func (api *API) CreateJourney(c echo.Context) error {
	ctx := c.Request().Context()
	caller, err := api.Gateway.Authenticate(ctx, bearer(c))
	if err != nil {
		return err
	}
	var req journeyRequest
	raw, err := decodeJSON(c, &req, `{"input": "...", "skill": "optional", "metadata": {...}, "x-warden-personal": {"member": "name"}}`)
	if err != nil {
		return err
	}
	if strings.TrimSpace(req.Input) == "" {
		return problem.Invalid(journeys.CodeInvalidInput, `"input" is required and must not be empty.`)
	}
	if _, err := personalMarks(req); err != nil {
		return err
	}

	idemKey := strings.TrimSpace(c.Request().Header.Get("Idempotency-Key"))
	if len(idemKey) > 200 {
		return problem.Invalid(journeys.CodeInvalidInput, "The Idempotency-Key header is longer than 200 characters.")
	}
	// A correlation id too long to keep is refused, not replaced: the
	// client would otherwise search its logs for an id Warden never kept.
	if corr := strings.TrimSpace(c.Request().Header.Get("X-Correlation-Id")); len(corr) > maxCorrelationID {
		return problem.Invalid(journeys.CodeInvalidInput, "The X-Correlation-Id header is longer than 128 characters.")
	}
	if idemKey != "" {
		stored, err := idempotency.Begin(ctx, api.DB, caller.Key.ID, idemKey, idempotency.Hash(raw), 30*time.Second)
		switch {
		case errors.Is(err, idempotency.ErrMismatch):
			return problem.Unprocessable(journeys.CodeIdempotencyMismatch, "This Idempotency-Key was used with a different request body.")
		case errors.Is(err, idempotency.ErrInFlight):
			return &problem.Error{Kind: problem.KindConflict, Code: "idempotency_in_flight",
				Message: "A request with this Idempotency-Key is still running.", RetryAfter: time.Second}
		case err != nil:
			return err
		case stored != nil:
			c.Response().Header().Set("Idempotent-Replayed", "true")
			return c.JSONBlob(stored.Status, stored.Body)
		}
	}

	completed := false
	if idemKey != "" {
		// Whatever goes wrong below (even a panic), a claim without a
		// stored answer is released so that a retry runs.
		defer func() {
			if !completed {
				_ = idempotency.Abandon(context.WithoutCancel(ctx), api.DB, caller.Key.ID, idemKey)
			}
		}()
	}
	status, body := api.run(c, caller, req)
	out, err := json.Marshal(body)
	if err != nil {
		return err
	}
	// Only answers about a journey that ran are kept for replay; a refusal
	// before admission lets a retry try again.
	if _, ran := body.(journeyJSON); idemKey != "" && (ran || hasJourney(body)) {
		if err := idempotency.Complete(context.WithoutCancel(ctx), api.DB, caller.Key.ID, idemKey, status, out); err != nil {
			return err
		}
		completed = true
	}
	return c.JSONBlob(status, out)
}

func hasJourney(body any) bool {
	m, ok := body.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m["journey"]
	return ok
}

func (api *API) run(c echo.Context, caller admission.Caller, req journeyRequest) (int, any) {
	corr := strings.TrimSpace(c.Request().Header.Get("X-Correlation-Id"))
	if corr == "" {
		corr = "cor_" + store.NewID()
	}
	personal, _ := personalMarks(req) // checked before the run
	out, err := api.Runtime.Run(c.Request().Context(), journeys.Request{
		Caller: caller, Input: req.Input, Skill: req.Skill, Metadata: req.Metadata, Personal: personal,
		RequestID: c.Response().Header().Get(echo.HeaderXRequestID), CorrelationID: corr,
	})
	if err != nil {
		return ProblemJSON(c, err)
	}
	status := http.StatusOK
	if out.Journey.Status == journeys.StatusAwaitingApproval {
		status = http.StatusAccepted
	}
	return status, toJourneyJSON(out.Journey, out.Action, false)
}

package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/problem"
)

// actionJSON is the action shape of the API.
type actionJSON struct {
	ID                string          `json:"id"`
	Status            string          `json:"status"`
	Summary           string          `json:"summary"`                 // Warden's headline, what approvers read
	AgentSummary      string          `json:"agent_summary,omitempty"` // the agent's own summary, redacted
	Tool              string          `json:"tool"`
	AmountMinor       *int64          `json:"amount,omitempty"`
	Currency          string          `json:"currency,omitempty"`
	ApprovalsRequired int             `json:"approvals_required"`
	ApprovalsGiven    int             `json:"approvals_given"`
	PayloadDigest     string          `json:"payload_digest"`
	ExecutedBy        string          `json:"executed_by"` // "warden" or "agent"
	ExpiresAt         time.Time       `json:"expires_at"`
	CreatedAt         time.Time       `json:"created_at"`
	Receipt           json.RawMessage `json:"receipt,omitempty"`
	Failure           string          `json:"failure,omitempty"`
}

func toActionJSON(a approvals.Action) actionJSON {
	by := "warden"
	if a.External {
		by = "agent"
	}
	return actionJSON{ID: a.ID, Status: a.Status, Summary: a.Summary, AgentSummary: a.AgentSummary, Tool: a.Tool, AmountMinor: a.AmountMinor, Currency: a.Currency,
		ApprovalsRequired: a.ApprovalsRequired, ApprovalsGiven: a.ApprovalsGiven, PayloadDigest: a.PayloadDigest, ExecutedBy: by,
		ExpiresAt: a.ExpiresAt.UTC(), CreatedAt: a.CreatedAt.UTC(), Receipt: a.Receipt, Failure: a.Failure}
}

// caller authenticates the request's key.
func (api *API) caller(c echo.Context) (admission.Caller, error) {
	return api.Gateway.Authenticate(c.Request().Context(), bearer(c))
}

// decodeJSON reads the body as one JSON object with known fields only,
// each named once, into v. A body that is not is refused with 400
// invalid_json, the message saying the expected shape (usage) and what
// was wrong. A member named twice (or twice apart from case) is refused
// at the top level as in arguments: JSON readers disagree on which one
// wins. (Inside "arguments" policy.UniqueMembers refuses it with
// invalid_arguments.)
func decodeJSON(c echo.Context, v any, usage string) (raw []byte, err error) {
	raw, err = io.ReadAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, problem.New(problem.KindTooLarge, "too_large", "The request body is larger than 1 MiB.")
		}
		return nil, problem.Invalid("invalid_json", "The request body could not be read.")
	}
	invalid := func(why string) error {
		return problem.Invalid("invalid_json", "The body must be one JSON object: "+usage+" ("+why+").")
	}
	if err := uniqueTopLevel(raw); err != nil {
		return nil, invalid(err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, invalid(problem.JSONReason(err))
	}
	if dec.More() {
		return nil, invalid("more than one JSON value")
	}
	return raw, nil
}

// uniqueTopLevel refuses a JSON object that names a member twice, or two
// members that differ only in case; nested values are not looked into.
func uniqueTopLevel(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil // not an object: the decoder says so
	}
	seen := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := t.(string)
		key := strings.ToLower(name)
		if prev, ok := seen[key]; ok {
			if prev == name {
				return fmt.Errorf("%q appears twice", name)
			}
			return fmt.Errorf("%q and %q differ only in case", prev, name)
		}
		seen[key] = name
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

type proposalRequest struct {
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	Summary     string          `json:"summary"`
	Reason      string          `json:"reason"`
	Amount      json.RawMessage `json:"amount"`
	Currency    string          `json:"currency"`
	CallbackURL string          `json:"callback_url"`
}

// Propose is POST /v1/actions → 202 {"id", "status": "pending"}.
func (api *API) Propose(c echo.Context) error {
	caller, err := api.caller(c)
	if err != nil {
		return err
	}
	var req proposalRequest
	if _, err := decodeJSON(c, &req, `{"tool", "arguments", "summary", "reason", "amount", "currency", "callback_url"}`); err != nil {
		return err
	}
	a, err := api.Execution.Propose(c.Request().Context(), execution.Proposal{
		Caller: caller, Tool: req.Tool, Arguments: req.Arguments, Summary: req.Summary, Reason: req.Reason,
		Amount: req.Amount, Currency: strings.ToUpper(strings.TrimSpace(req.Currency)), CallbackURL: req.CallbackURL,
		IdempotencyKey: strings.TrimSpace(c.Request().Header.Get("Idempotency-Key")),
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, toActionJSON(a))
}

// MaxWait caps the long poll of GET /v1/actions/{id}?wait=. It must stay
// clearly below the HTTP server's write timeout (web.writeTimeout, 60 s):
// the write deadline runs from the moment the request is read, so a poll
// that waited as long as the deadline would have its answer cut off, and
// the agent would see a dropped connection instead of "pending". It is a
// variable only so that tests can shorten it.
var MaxWait = 50 * time.Second

// GetAction is GET /v1/actions/{id}?wait=30s: the action, after waiting (at most
// MaxWait) for it to leave pending when wait is given.
func (api *API) GetAction(c echo.Context) error {
	caller, err := api.caller(c)
	if err != nil {
		return err
	}
	var wait time.Duration
	if w := c.QueryParam("wait"); w != "" {
		d, err := time.ParseDuration(w)
		if err != nil || d < 0 {
			return problem.Invalid(journeys.CodeInvalidInput, `"wait" must be a duration such as 30s.`)
		}
		wait = min(d, MaxWait)
	}
	ctx := c.Request().Context()
	until := time.Now().Add(wait)
	a, err := approvals.Get(ctx, api.DB.Read(), c.Param("id"))
	if err != nil {
		return err
	}
	if !caller.CanRead(a.TenantID, a.KeyID) {
		return approvals.ErrNotFound
	}
	// Only an action the caller may read is waited for: another's answers
	// at once, exactly as an unknown id does.
	if a.Status == approvals.StatusPending && wait > 0 {
		a, err = approvals.Wait(ctx, api.DB.Read(), a.ID, until)
		switch {
		case ctx.Err() != nil:
			return nil // the agent has gone
		case err != nil: // also an action removed meanwhile: not found
			return err
		}
	}
	return c.JSON(http.StatusOK, toActionJSON(a))
}

type resultRequest struct {
	Status  string          `json:"status"`
	Receipt json.RawMessage `json:"receipt"`
	Error   string          `json:"error"`
}

// Result is POST /v1/actions/{id}/result: the agent reports the outcome of
// an approved action it executed itself.
func (api *API) Result(c echo.Context) error {
	caller, err := api.caller(c)
	if err != nil {
		return err
	}
	var req resultRequest
	if _, err := decodeJSON(c, &req, `{"status": "executed"|"failed", "receipt": {...}, "error": "..."}`); err != nil {
		return err
	}
	a, err := api.Execution.ReportResult(c.Request().Context(), caller, c.Param("id"), execution.Result{Status: req.Status, Receipt: req.Receipt, Error: req.Error})
	switch {
	case errors.Is(err, approvals.ErrNotReportable):
		return problem.Conflict("not_reportable", problem.From(err).Message+" This one is "+a.Status+".")
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, toActionJSON(a))
}

// Cancel is POST /v1/actions/{id}/cancel: the agent withdraws its pending
// action.
func (api *API) Cancel(c echo.Context) error {
	caller, err := api.caller(c)
	if err != nil {
		return err
	}
	a, err := api.Execution.CancelAction(c.Request().Context(), caller, c.Param("id"))
	switch {
	case errors.Is(err, approvals.ErrAlreadyDecided):
		cur, _ := approvals.Get(c.Request().Context(), api.DB.Read(), c.Param("id"))
		return problem.Conflict("already_decided", "The action is already "+cur.Status+".")
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, toActionJSON(a))
}

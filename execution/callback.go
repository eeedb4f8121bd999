package execution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/sign"
	"github.com/wardenhq/warden/platform/store"
)

// CallbackPayload is what an agent's callback URL receives when its
// action is decided or executed.
type CallbackPayload struct {
	ID        string          `json:"id"`
	Status    string          `json:"status"`
	Summary   string          `json:"summary"`
	Receipt   json.RawMessage `json:"receipt,omitempty"`
	Failure   string          `json:"failure,omitempty"`
	Timestamp time.Time       `json:"timestamp"`
}

// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=…]"
// over "<t>.<body>", one v1 for each of the key's callback secrets that is
// valid at t (two while a rotation's grace period lasts); an agent accepts
// the callback if any v1 matches its secret (docs/api.md). The HMAC key is
// the callback secret ("whsec_…"), which the database holds only sealed:
// a copy of it is not enough to sign. Notifications to generic webhooks
// are signed the same way (platform/sign).
const SignatureHeader = sign.Header

// Sign returns the signature header value for body at t, with one v1 for
// each secret, in the order given (sign.Sign).
func Sign(secrets []string, t time.Time, body []byte) string { return sign.Sign(secrets, t, body) }

// HandleCallback is the job that sends an action's current state to its
// callback URL, retried with backoff until the agent answers 2xx.
func (s *Service) HandleCallback(ctx context.Context, j jobs.Job) error {
	var p actionJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return &jobs.Permanent{Err: err}
	}
	a, err := approvals.Get(ctx, s.o.DB.Read(), p.ActionID)
	if err != nil {
		return &jobs.Permanent{Err: err}
	}
	// The URL is sealed at rest (its query may carry a token or personal
	// data); the action's CallbackURL is the redacted copy people see.
	target, err := approvals.OpenCallbackURL(ctx, s.o.DB.Read(), s.o.Sealer, a.ID)
	if err != nil {
		return &jobs.Permanent{Err: fmt.Errorf("callback for %s: %w", a.ID, err)}
	}
	if target == "" {
		return nil
	}
	now := s.o.Now()
	secrets, err := keys.CallbackSecrets(ctx, s.o.DB.Read(), s.o.Sealer, a.KeyID, now)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &jobs.Permanent{Err: fmt.Errorf("callback for %s: the key is gone", a.ID)}
	case errors.Is(err, keys.ErrNoCallbackSecret):
		// Signing with anything the database holds in the clear would let
		// whoever reads it forge callbacks.
		return &jobs.Permanent{Err: fmt.Errorf("callback for %s not sent: key %s has no callback secret; an admin can generate one on the key's page", a.ID, a.KeyID)}
	case err != nil:
		return fmt.Errorf("callback for %s: %w", a.ID, err)
	}
	body, _ := json.Marshal(CallbackPayload{ID: a.ID, Status: a.Status, Summary: a.Summary, Receipt: a.Receipt, Failure: a.Failure, Timestamp: now.UTC()})
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return &jobs.Permanent{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(secrets, now, body))
	resp, err := s.callbackClient().Do(req)
	if err != nil {
		// The client's error names the whole URL, query included; the job's
		// last error is stored, so keep only what went wrong.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("callback for %s: %s", a.ID, s.o.Redactor.String(err.Error()))
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("callback for %s: the agent answered %d", a.ID, resp.StatusCode)
	}
	return nil
}

package runtime

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/wardenhq/warden/agent/jobs"
	"github.com/wardenhq/warden/approvals"
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

// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256>" over
// "<t>.<body>". The HMAC key is the lower-case hex SHA-256 of the agent's
// own virtual key, so the agent can verify without another secret.
const SignatureHeader = "X-Warden-Signature"

// Sign returns the signature header value for body at t.
func Sign(keyHash string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(keyHash))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

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
	if a.CallbackURL == "" {
		return nil
	}
	var keyHash string
	if err := s.o.DB.Read().QueryRowContext(ctx, `SELECT secret_hash FROM virtual_keys WHERE id = ?`, a.KeyID).Scan(&keyHash); err != nil {
		return &jobs.Permanent{Err: fmt.Errorf("callback for %s: the key is gone: %w", a.ID, err)}
	}
	body, _ := json.Marshal(CallbackPayload{ID: a.ID, Status: a.Status, Summary: a.Summary, Receipt: a.Receipt, Failure: a.Failure, Timestamp: s.o.Now().UTC()})
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	target, err := approvals.OpenCallbackURL(ctx, s.o.DB.Read(), s.o.Sealer, a.ID)
	if err != nil || target == "" {
		return &jobs.Permanent{Err: fmt.Errorf("callback for %s: no callback URL: %v", a.ID, err)}
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return &jobs.Permanent{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(keyHash, s.o.Now(), body))
	resp, err := s.callbackClient().Do(req)
	if err != nil {
		return fmt.Errorf("callback for %s: %w", a.ID, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("callback for %s: the agent answered %d", a.ID, resp.StatusCode)
	}
	return nil
}

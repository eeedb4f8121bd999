package tools

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/tracing"
)

// MaxResponseBytes caps what the HTTP provider reads of a webhook's answer.
const MaxResponseBytes = 1 << 20

// Headers of the webhook protocol.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderDeadline is when Warden stops waiting for this attempt
	// (RFC 3339, UTC, milliseconds): the tool's timeout or the caller's
	// deadline, whichever is sooner. Work still running then is wasted.
	HeaderDeadline = "X-Warden-Deadline"
	HeaderAttempt  = "X-Warden-Attempt" // 1 for the first attempt of a call
)

const deadlineLayout = "2006-01-02T15:04:05.000Z07:00"

// HTTPProvider calls tools implemented as webhooks (ProviderHTTP).
//
// Execute makes one attempt: it POSTs {"tool", "arguments", "tenant"} as
// JSON to the tool's WebhookURL with the call's Idempotency-Key, which the
// webhook must honour: Warden sends the same key on every retry and on
// crash recovery. Retries are the Guard's (Guard.Wrap, the one retry
// layer), which numbers attempts (X-Warden-Attempt). The attempt is
// bounded by the tool's Timeout and by the caller's deadline, which is
// also sent as X-Warden-Deadline. The answer is classified:
//
//   - 2xx: success. The body is the Result's Output (a body that is not
//     JSON is wrapped as a JSON string; an empty one is null) and its
//     optional integer "units" field the Result's Units (default 1).
//   - 408, 429, 5xx, timeouts and connection failures: Transient, worth
//     retrying with the same key. A Retry-After (seconds or HTTP date) on
//     429 and 503 is the least wait before the next attempt.
//   - any other status, including redirects, which are not followed:
//     Terminal, with the status in the reason.
//
// Lookup GETs WebhookURL?idempotency_key=KEY: 200 is committed (the body is
// the receipt), 404 not_found, anything else unknown.
//
// Answers are read up to MaxResponseBytes. A 2xx answer over the cap is
// still a success — the effect happened and must be recorded as such — but
// its Output is replaced by {"warden_discarded_bytes_over": 1048576,
// "status": N}.
type HTTPProvider struct {
	client *http.Client
}

// NewHTTPProvider returns a provider that sends requests with client (a
// fresh http.Client when nil). client's own Timeout, if any, still
// applies on top of the tool's. Put it behind a Guard (Guard.Wrap).
func NewHTTPProvider(client *http.Client) *HTTPProvider {
	var c http.Client
	if client != nil {
		c = *client
	}
	// A POST redirected becomes a GET elsewhere; an effect must not
	// wander. The redirect comes back as a Terminal answer instead.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	// The webhook joins the trace of the call (traceparent).
	c.Transport = tracing.Transport(c.Transport)
	return &HTTPProvider{client: &c}
}

type webhookRequest struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Tenant    string          `json:"tenant"`
}

// Execute implements Provider.
func (p *HTTPProvider) Execute(ctx context.Context, t Tool, call Call) (Result, error) {
	name, err := CallName(t, call)
	if err != nil {
		return Result{}, err
	}
	target, err := webhookURL(t)
	if err != nil {
		return Result{}, err
	}
	if !validHeaderValue(call.IdempotencyKey) {
		return Result{}, &Error{Kind: Terminal, Reason: "idempotency key missing or not sendable as a header"}
	}
	args := call.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if !isJSONObject(args) {
		return Result{}, &Error{Kind: Terminal, Reason: "arguments are not a JSON object"}
	}
	body, err := json.Marshal(webhookRequest{Tool: name, Arguments: args, Tenant: call.Tenant})
	if err != nil {
		return Result{}, &Error{Kind: Terminal, Reason: "encode webhook request", Err: err}
	}

	actx, cancel := attemptContext(ctx, t.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return Result{}, &Error{Kind: Terminal, Reason: "build webhook request", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(HeaderIdempotencyKey, call.IdempotencyKey)
	req.Header.Set(HeaderAttempt, strconv.Itoa(AttemptOf(ctx)))
	if deadline, ok := actx.Deadline(); ok {
		req.Header.Set(HeaderDeadline, deadline.UTC().Format(deadlineLayout))
	}
	res, err := p.do(ctx, actx, t.Timeout, req)
	if err != nil {
		return Result{}, fmt.Errorf("tool %s: %w", name, err)
	}
	return res, nil
}

// Lookup implements Looker. An unknown answer comes with the error that
// explains it; committed and not_found come with none.
func (p *HTTPProvider) Lookup(ctx context.Context, t Tool, key string) (Result, LookupStatus, error) {
	target, err := webhookURL(t)
	if err != nil {
		return Result{}, LookupUnknown, err
	}
	if !validHeaderValue(key) {
		return Result{}, LookupUnknown, &Error{Kind: Terminal, Reason: "idempotency key missing or not sendable as a header"}
	}
	u, _ := url.Parse(target) // webhookURL parsed it already
	q := u.Query()
	q.Set("idempotency_key", key)
	u.RawQuery = q.Encode()

	actx, cancel := attemptContext(ctx, t.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Result{}, LookupUnknown, &Error{Kind: Terminal, Reason: "build lookup request", Err: err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(HeaderIdempotencyKey, key)
	if deadline, ok := actx.Deadline(); ok {
		req.Header.Set(HeaderDeadline, deadline.UTC().Format(deadlineLayout))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return Result{}, LookupUnknown, fmt.Errorf("look up %s: %w", t.Name, transportError(ctx, actx, t.Timeout, err))
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		res, err := readResult(resp)
		if err != nil {
			return Result{}, LookupUnknown, fmt.Errorf("look up %s: %w", t.Name, transportError(ctx, actx, t.Timeout, err))
		}
		return res, LookupCommitted, nil
	case http.StatusNotFound:
		drain(resp.Body)
		return Result{}, LookupNotFound, nil
	default:
		drain(resp.Body)
		return Result{}, LookupUnknown, fmt.Errorf("look up %s: %w", t.Name, statusError(resp))
	}
}

// do sends one attempt and classifies its outcome.
func (p *HTTPProvider) do(ctx, actx context.Context, timeout time.Duration, req *http.Request) (Result, error) {
	resp, err := p.client.Do(req)
	if err != nil {
		return Result{}, transportError(ctx, actx, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		drain(resp.Body)
		return Result{}, statusError(resp)
	}
	res, err := readResult(resp)
	if err != nil {
		// The webhook committed but its answer broke off. Asking again
		// with the same key is how the receipt is recovered.
		return Result{}, transportError(ctx, actx, timeout, err)
	}
	return res, nil
}

// readResult turns a 2xx answer into a Result.
func readResult(resp *http.Response) (Result, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return Result{}, err
	}
	if len(body) > MaxResponseBytes {
		drain(resp.Body)
		out, _ := json.Marshal(map[string]int{"warden_discarded_bytes_over": MaxResponseBytes, "status": resp.StatusCode})
		return Result{Output: out, Units: 1}, nil
	}
	return resultFromBody(body), nil
}

// resultFromBody makes a Result of a successful answer: the JSON as it is
// (a non-JSON body as a JSON string, an empty one as null) and the units
// it reports.
func resultFromBody(body []byte) Result {
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return Result{Output: json.RawMessage("null"), Units: 1}
	case !json.Valid(trimmed):
		out, _ := json.Marshal(string(body)) // invalid UTF-8 becomes U+FFFD
		return Result{Output: out, Units: 1}
	}
	units := int64(1)
	var u struct {
		Units json.RawMessage `json:"units"`
	}
	if trimmed[0] == '{' && json.Unmarshal(trimmed, &u) == nil {
		// Only a non-negative JSON integer counts; "7", 1.5 or -4 do not.
		if n, err := strconv.ParseInt(string(u.Units), 10, 64); err == nil && n >= 0 {
			units = n
		}
	}
	return Result{Output: json.RawMessage(bytes.Clone(trimmed)), Units: units}
}

// statusError classifies a non-2xx answer.
func statusError(resp *http.Response) *Error {
	code := resp.StatusCode
	reason := fmt.Sprintf("webhook answered %d %s", code, http.StatusText(code))
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		e := &Error{Kind: Transient, Reason: reason}
		if wait, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			e.Err = &RetryAfterError{Wait: wait}
		}
		return e
	case code == http.StatusRequestTimeout || code >= 500:
		return &Error{Kind: Transient, Reason: reason}
	case code >= 300 && code <= 399:
		return &Error{Kind: Terminal, Reason: reason + " (redirects are not followed)"}
	}
	return &Error{Kind: Terminal, Reason: reason}
}

// transportError classifies a request that got no complete answer.
// Failing certificate checks will fail the same way again; everything
// else — refused or reset connections, DNS, timeouts — may not.
func transportError(ctx, actx context.Context, timeout time.Duration, err error) *Error {
	// The URL may carry a credential in its query; the cause is enough.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if ce := contextError(ctx, actx, timeout, err); ce != nil {
		return ce
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verification) {
		return &Error{Kind: Terminal, Reason: "webhook TLS certificate rejected", Err: err}
	}
	return &Error{Kind: Transient, Reason: "webhook unreachable", Err: err}
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// webhookURL checks the tool's webhook address.
func webhookURL(t Tool) (string, error) {
	if t.WebhookURL == "" {
		return "", &Error{Kind: Terminal, Reason: fmt.Sprintf("tool %s has no webhook URL", t.Name)}
	}
	u, err := url.Parse(t.WebhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &Error{Kind: Terminal, Reason: fmt.Sprintf("tool %s has an invalid webhook URL", t.Name)}
	}
	return t.WebhookURL, nil
}

// validHeaderValue reports whether s is non-empty printable ASCII, which
// any webhook server accepts in a header.
func validHeaderValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// drain reads what is left of a body, up to the cap, so the connection
// can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, MaxResponseBytes)) }

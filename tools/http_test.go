package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// guardedHTTP is an HTTP provider behind a guard, as Warden runs it: the
// guard is its one retry layer.
type guardedHTTP interface {
	Provider
	Looker
}

func newTestProvider(client *http.Client) guardedHTTP {
	return newGuardedHTTP(client, fast)
}

func newGuardedHTTP(client *http.Client, r RetryOptions) guardedHTTP {
	return NewGuard(GuardOptions{Retry: r}).Wrap(NewHTTPProvider(client)).(guardedHTTP)
}

func webhookTool(url string) Tool {
	return Tool{Name: "issue_refund", Provider: ProviderHTTP, WebhookURL: url, Timeout: 5 * time.Second, MaxAttempts: 3}
}

func refundCall() Call {
	return Call{
		Tool:           "issue_refund",
		Args:           json.RawMessage(`{"order_id":"ORD-1004","amount_minor":240000}`),
		IdempotencyKey: "idem-1",
		Tenant:         "acme",
	}
}

// recorded is what a test server saw of one request.
type recorded struct {
	method, key, attempt, deadline, contentType, query string
	body                                               []byte
}

// recorder is a test webhook that records requests and answers with
// handle, given the 1-based number of the request.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (rc *recorder) server(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, recorded{
			method: r.Method, key: r.Header.Get("Idempotency-Key"), attempt: r.Header.Get("X-Warden-Attempt"),
			deadline: r.Header.Get("X-Warden-Deadline"), contentType: r.Header.Get("Content-Type"),
			query: r.URL.RawQuery, body: body,
		})
		n := len(rc.reqs)
		rc.mu.Unlock()
		handle(n, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (rc *recorder) requests() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recorded(nil), rc.reqs...)
}

// refusedURL is an address nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/hook"
}

func errKind(err error) ErrorKind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	if err != nil {
		return "unclassified"
	}
	return ""
}

func TestHTTPClassifiesAnswers(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	tests := []struct {
		name         string
		status       int                                          // answered with body `{"ok":true}` unless handle is set
		handle       func(w http.ResponseWriter, r *http.Request) // overrides status
		refused      bool                                         // no server at all
		timeout      time.Duration
		wantKind     ErrorKind // "" is success
		wantRequests int       // with MaxAttempts 3
		wantReason   string    // in the error's text
	}{
		{name: "200", status: 200, wantRequests: 1},
		{name: "201", status: 201, wantRequests: 1},
		{name: "400", status: 400, wantKind: Terminal, wantRequests: 1, wantReason: "400"},
		{name: "401", status: 401, wantKind: Terminal, wantRequests: 1, wantReason: "401"},
		{name: "404", status: 404, wantKind: Terminal, wantRequests: 1, wantReason: "404"},
		{name: "408", status: 408, wantKind: Transient, wantRequests: 3, wantReason: "408"},
		{name: "409", status: 409, wantKind: Terminal, wantRequests: 1, wantReason: "409"},
		{name: "422", status: 422, wantKind: Terminal, wantRequests: 1, wantReason: "422"},
		{name: "429", status: 429, wantKind: Transient, wantRequests: 3, wantReason: "429"},
		{name: "500", status: 500, wantKind: Transient, wantRequests: 3, wantReason: "500"},
		{name: "502", status: 502, wantKind: Transient, wantRequests: 3, wantReason: "502"},
		{name: "503", status: 503, wantKind: Transient, wantRequests: 3, wantReason: "503"},
		{name: "timeout", handle: hang, timeout: 250 * time.Millisecond, wantKind: Transient, wantRequests: 3, wantReason: "no answer within 250ms"},
		{name: "connection refused", refused: true, wantKind: Transient, wantRequests: 0, wantReason: "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rc recorder
			url := refusedURL(t)
			if !tt.refused {
				url = rc.server(t, func(_ int, w http.ResponseWriter, r *http.Request) {
					if tt.handle != nil {
						tt.handle(w, r)
						return
					}
					w.WriteHeader(tt.status)
					io.WriteString(w, `{"ok":true}`)
				}).URL
			}
			tool := webhookTool(url)
			if tt.timeout > 0 {
				tool.Timeout = tt.timeout
			}
			res, err := newTestProvider(nil).Execute(context.Background(), tool, refundCall())
			if got := errKind(err); got != tt.wantKind {
				t.Errorf("error kind = %q (%v), want %q", got, err, tt.wantKind)
			}
			if got := len(rc.requests()); got != tt.wantRequests {
				t.Errorf("server saw %d requests, want %d", got, tt.wantRequests)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantReason) {
				t.Errorf("error %q does not mention %q", err, tt.wantReason)
			}
			if tt.wantKind == "" && (string(res.Output) != `{"ok":true}` || res.Units != 1) {
				t.Errorf("Result = %s, %d units; want {\"ok\":true}, 1", res.Output, res.Units)
			}
		})
	}
}

func TestHTTPRequestShape(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{}`) })
	if _, err := newTestProvider(nil).Execute(context.Background(), webhookTool(srv.URL), refundCall()); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || r.contentType != "application/json" || r.key != "idem-1" || r.attempt != "1" {
		t.Errorf("request = %s, Content-Type %q, Idempotency-Key %q, attempt %q; want POST, application/json, idem-1, 1",
			r.method, r.contentType, r.key, r.attempt)
	}
	var body struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
		Tenant    string         `json:"tenant"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	if body.Tool != "issue_refund" || body.Tenant != "acme" || body.Arguments["order_id"] != "ORD-1004" || body.Arguments["amount_minor"] != 240000.0 {
		t.Errorf("body = %s, want the tool, tenant and arguments of the call", r.body)
	}
}

func TestHTTPRetriesKeepTheIdempotencyKey(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"refund_id":"rf_1","units":2}`)
	})
	tool := webhookTool(srv.URL)
	tool.MaxAttempts = 5
	res, err := newTestProvider(nil).Execute(context.Background(), tool, refundCall())
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if string(res.Output) != `{"refund_id":"rf_1","units":2}` || res.Units != 2 {
		t.Errorf("Result = %s, %d units; want the third answer, 2 units", res.Output, res.Units)
	}
	reqs := rc.requests()
	if len(reqs) != 3 {
		t.Fatalf("server saw %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.key != "idem-1" {
			t.Errorf("attempt %d Idempotency-Key = %q, want idem-1", i+1, r.key)
		}
		if r.attempt != strconv.Itoa(i+1) {
			t.Errorf("attempt %d X-Warden-Attempt = %q", i+1, r.attempt)
		}
		if string(r.body) != string(reqs[0].body) {
			t.Errorf("attempt %d body = %s, want %s", i+1, r.body, reqs[0].body)
		}
	}
}

func TestHTTPTimeoutCancelsTheServerSide(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		// net/http notices a client hanging up only once the body is read.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(30 * time.Second):
		}
	}))
	defer srv.Close()
	tool := webhookTool(srv.URL)
	tool.Timeout = 300 * time.Millisecond
	tool.MaxAttempts = 1
	_, err := newTestProvider(nil).Execute(context.Background(), tool, refundCall())
	if !IsTransient(err) {
		t.Errorf("err = %v, want transient", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Errorf("the server's request context was not cancelled after the attempt timed out")
	}
}

func TestHTTPPassesTheCallersDeadlineDown(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{}`) })
	deadline := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	tool := webhookTool(srv.URL)
	tool.Timeout = time.Minute // the caller's deadline is sooner, so it wins
	if _, err := newTestProvider(nil).Execute(ctx, tool, refundCall()); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got, err := time.Parse(time.RFC3339Nano, rc.requests()[0].deadline)
	if err != nil {
		t.Fatalf("X-Warden-Deadline = %q: %v", rc.requests()[0].deadline, err)
	}
	// The guard keeps a reserve (50ms by default) of the caller's time for
	// recording the result: the provider's deadline is that much sooner.
	if want := deadline.Add(-50 * time.Millisecond); got.Before(want.Add(-20*time.Millisecond)) || got.After(want.Add(time.Millisecond)) {
		t.Errorf("X-Warden-Deadline = %v, want about the caller's %v less the reserve", got, deadline)
	}
}

func TestHTTPSendsTheToolTimeoutAsDeadline(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{}`) })
	before := time.Now()
	if _, err := newTestProvider(nil).Execute(context.Background(), webhookTool(srv.URL), refundCall()); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got, err := time.Parse(time.RFC3339Nano, rc.requests()[0].deadline)
	if err != nil {
		t.Fatalf("X-Warden-Deadline = %q: %v", rc.requests()[0].deadline, err)
	}
	// The tool's timeout is 5s; the bound is loose on purpose.
	if got.Before(before.Add(4*time.Second)) || got.After(time.Now().Add(6*time.Second)) {
		t.Errorf("X-Warden-Deadline = %v, want about 5s after %v", got, before)
	}
}

func TestHTTPShortCallerDeadlineStopsRetries(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	p := newGuardedHTTP(nil, RetryOptions{InitialInterval: 200 * time.Millisecond, MaxInterval: time.Second})
	tool := webhookTool(srv.URL)
	tool.MaxAttempts = 20
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := p.Execute(ctx, tool, refundCall())
	if !IsTransient(err) {
		t.Errorf("err = %v, want transient", err)
	}
	if n := len(rc.requests()); n < 1 || n >= 10 {
		t.Errorf("server saw %d requests, want a few: the caller's deadline ends the retries, not MaxAttempts", n)
	}
}

func TestHTTPCallerDeadlineCutsAHangingAttempt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	tool := webhookTool(srv.URL)
	tool.Timeout = time.Minute
	_, err := newTestProvider(nil).Execute(ctx, tool, refundCall())
	if !IsTransient(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want transient and context.DeadlineExceeded", err)
	}
}

func TestHTTPRespectsMaxAttempts(t *testing.T) {
	for _, tt := range []struct{ maxAttempts, want int }{{0, 1}, {1, 1}, {2, 2}, {5, 5}} {
		var rc recorder
		srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
		tool := webhookTool(srv.URL)
		tool.MaxAttempts = tt.maxAttempts
		_, err := newTestProvider(nil).Execute(context.Background(), tool, refundCall())
		if !IsTransient(err) {
			t.Errorf("MaxAttempts %d: err = %v, want transient", tt.maxAttempts, err)
		}
		if got := len(rc.requests()); got != tt.want {
			t.Errorf("MaxAttempts %d: server saw %d requests, want %d", tt.maxAttempts, got, tt.want)
		}
	}
}

func TestHTTPRetryAfterIsTheLeastWait(t *testing.T) {
	var (
		rc    recorder
		mu    sync.Mutex
		times []time.Time
	)
	srv := rc.server(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{}`)
	})
	if _, err := newTestProvider(nil).Execute(context.Background(), webhookTool(srv.URL), refundCall()); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if len(times) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(times))
	}
	// The backoff alone is a few milliseconds; only Retry-After explains a
	// second's gap. A lower bound is not disturbed by a slow machine.
	if gap := times[1].Sub(times[0]); gap < 950*time.Millisecond {
		t.Errorf("second attempt %v after the first, want at least Retry-After's 1s", gap)
	}
}

func TestHTTPRetryAfterBeyondTheDeadlineGivesUp(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := newTestProvider(nil).Execute(ctx, webhookTool(srv.URL), refundCall())
	if !IsTransient(err) {
		t.Errorf("err = %v, want transient", err)
	}
	if wait, ok := RetryAfter(err); !ok || wait != 120*time.Second {
		t.Errorf("RetryAfter(err) = %v, %v; want 2m0s, true", wait, ok)
	}
	if n := len(rc.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1: waiting 120s cannot fit in 5s", n)
	}
	if ctx.Err() != nil {
		t.Errorf("Execute slept until the caller's deadline instead of returning")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"3", 3 * time.Second, true},
		{" 120 ", 120 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},
		{"99999999999", 24 * time.Hour, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestHTTPSuccessBodies(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantOutput string
		wantUnits  int64
	}{
		{"json object", `{"refund_id":"rf_1"}`, `{"refund_id":"rf_1"}`, 1},
		{"units reported", `{"refund_id":"rf_1","units":3}`, `{"refund_id":"rf_1","units":3}`, 3},
		{"zero units", `{"units":0}`, `{"units":0}`, 0},
		{"negative units ignored", `{"units":-4}`, `{"units":-4}`, 1},
		{"fractional units ignored", `{"units":1.5}`, `{"units":1.5}`, 1},
		{"string units ignored", `{"units":"7"}`, `{"units":"7"}`, 1},
		{"json array", `[1,2]`, `[1,2]`, 1},
		{"surrounding whitespace", "\n {\"a\":1} \n", `{"a":1}`, 1},
		{"plain text", `refund issued`, `"refund issued"`, 1},
		{"html", `<p>ok</p>`, `"\u003cp\u003eok\u003c/p\u003e"`, 1},
		{"empty", ``, `null`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			res, err := newTestProvider(nil).Execute(context.Background(), webhookTool(srv.URL), refundCall())
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if string(res.Output) != tt.wantOutput || res.Units != tt.wantUnits {
				t.Errorf("Result = %s, %d units; want %s, %d", res.Output, res.Units, tt.wantOutput, tt.wantUnits)
			}
			if !json.Valid(res.Output) {
				t.Errorf("Output %q is not JSON", res.Output)
			}
		})
	}
}

func TestHTTPOversizedAnswerIsStillASuccess(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"blob":"`+strings.Repeat("x", MaxResponseBytes)+`"}`)
	}))
	defer srv.Close()
	res, err := newTestProvider(nil).Execute(context.Background(), webhookTool(srv.URL), refundCall())
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if string(res.Output) != `{"status":200,"warden_discarded_bytes_over":1048576}` || res.Units != 1 {
		t.Errorf("Result = %.200s, %d units; want the discarded-answer marker, 1", res.Output, res.Units)
	}
}

func TestHTTPDoesNotFollowRedirects(t *testing.T) {
	var hit atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hit.Add(1) }))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.RedirectHandler(elsewhere.URL, http.StatusTemporaryRedirect))
	defer srv.Close()
	_, err := newTestProvider(nil).Execute(context.Background(), webhookTool(srv.URL), refundCall())
	if errKind(err) != Terminal || !strings.Contains(err.Error(), "307") {
		t.Errorf("err = %v, want terminal naming 307", err)
	}
	if hit.Load() != 0 {
		t.Errorf("the redirect target was called %d times, want 0", hit.Load())
	}
}

func TestHTTPRefusesBadCallsWithoutSending(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{}`) })
	tests := []struct {
		name string
		tool Tool
		call Call
	}{
		{"no webhook URL", Tool{Name: "issue_refund", MaxAttempts: 3}, refundCall()},
		{"not an http URL", Tool{Name: "issue_refund", WebhookURL: "file:///etc/passwd", MaxAttempts: 3}, refundCall()},
		{"no idempotency key", webhookTool(srv.URL), Call{Tool: "issue_refund", Args: json.RawMessage(`{}`)}},
		{"idempotency key with a line break", webhookTool(srv.URL), Call{Tool: "issue_refund", Args: json.RawMessage(`{}`), IdempotencyKey: "k\r\nX-Evil: 1"}},
		{"arguments not an object", webhookTool(srv.URL), Call{Tool: "issue_refund", Args: json.RawMessage(`[1]`), IdempotencyKey: "k"}},
		{"arguments not JSON", webhookTool(srv.URL), Call{Tool: "issue_refund", Args: json.RawMessage(`{oops`), IdempotencyKey: "k"}},
		{"call for another tool", webhookTool(srv.URL), Call{Tool: "send_customer_email", Args: json.RawMessage(`{}`), IdempotencyKey: "k"}},
	}
	for _, tt := range tests {
		_, err := newTestProvider(nil).Execute(context.Background(), tt.tool, tt.call)
		if errKind(err) != Terminal {
			t.Errorf("%s: err = %v, want terminal", tt.name, err)
		}
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestHTTPLookup(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		refused    bool
		wantStatus LookupStatus
		wantOutput string
		wantErr    bool
	}{
		{name: "committed", status: 200, wantStatus: LookupCommitted, wantOutput: `{"refund_id":"rf_1"}`},
		{name: "not found", status: 404, wantStatus: LookupNotFound},
		{name: "server error", status: 500, wantStatus: LookupUnknown, wantErr: true},
		{name: "lookup not supported", status: 405, wantStatus: LookupUnknown, wantErr: true},
		{name: "rate limited", status: 429, wantStatus: LookupUnknown, wantErr: true},
		{name: "unreachable", refused: true, wantStatus: LookupUnknown, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rc recorder
			url := refusedURL(t)
			if !tt.refused {
				url = rc.server(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
					w.WriteHeader(tt.status)
					if tt.status == 200 {
						io.WriteString(w, `{"refund_id":"rf_1"}`)
					}
				}).URL + "/hook?token=abc"
			}
			res, status, err := newTestProvider(nil).Lookup(context.Background(), webhookTool(url), "idem-7")
			if status != tt.wantStatus || (err != nil) != tt.wantErr || string(res.Output) != tt.wantOutput {
				t.Errorf("Lookup = %s, %s, %v; want %s, %s, error %v", res.Output, status, err, tt.wantOutput, tt.wantStatus, tt.wantErr)
			}
			if tt.refused {
				return
			}
			reqs := rc.requests()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			if reqs[0].method != http.MethodGet || reqs[0].query != "idempotency_key=idem-7&token=abc" || reqs[0].key != "idem-7" {
				t.Errorf("lookup request = %s ?%s key %q; want GET ?idempotency_key=idem-7&token=abc, key idem-7", reqs[0].method, reqs[0].query, reqs[0].key)
			}
		})
	}
}

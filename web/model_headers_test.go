package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/models"
)

var rateHeaders = []string{
	"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests",
	"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens",
}

// reset reads an x-ratelimit-reset-* value, which OpenAI writes as Go
// durations are written ("1s", "6m0s", "17ms").
func reset(t *testing.T, h http.Header, name string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(h.Get(name))
	if err != nil {
		t.Fatalf("%s = %q: %v", name, h.Get(name), err)
	}
	return d
}

// callByID is the recorded call with that id.
func callByID(t *testing.T, r *modelRig, id string) models.Call {
	t.Helper()
	for _, c := range r.calls(t) {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no recorded call %q", id)
	return models.Call{}
}

// A model answer carries the key's limits as OpenAI sends them, the
// call's id and what it was charged; a 429 of the key's own limit the
// same rate-limit headers and Retry-After; a key without limits none.
func TestModelAnswerHeaders(t *testing.T) {
	bad := deployment("bad", "fail-400", 0)
	bad.Alias = "bad"
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0), bad)
	ctx := context.Background()
	k, key := newKeyIn(t, r.in, "modelco", "paced-bot", []string{"model:chat", "model:bad"}, "test")
	if _, err := models.SetKeyLimits(ctx, r.in.DB, testActor, k, models.KeyLimits{RPM: 3, TPM: 100_000}); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"chat","max_tokens":100,"messages":[{"role":"user","content":"pace me"}]}`

	res := rawChat(t, r, key, body)
	if res.Status != http.StatusOK {
		t.Fatalf("call = %d %s", res.Status, res.Raw)
	}
	h := res.Header
	if h.Get("X-Ratelimit-Limit-Requests") != "3" || h.Get("X-Ratelimit-Remaining-Requests") != "2" ||
		h.Get("X-Ratelimit-Limit-Tokens") != "100000" {
		t.Fatalf("rate-limit headers = %v", h)
	}
	// The estimate (prompt bound and output cap) is taken from the
	// tokens until the call settles.
	if n, err := strconv.Atoi(h.Get("X-Ratelimit-Remaining-Tokens")); err != nil || n >= 100_000 || n < 99_000 {
		t.Fatalf("remaining tokens = %q", h.Get("X-Ratelimit-Remaining-Tokens"))
	}
	if d := reset(t, h, "X-Ratelimit-Reset-Requests"); d <= 0 || d > 20*time.Second { // a request comes back every 20 s
		t.Fatalf("reset requests = %v", d)
	}
	if d := reset(t, h, "X-Ratelimit-Reset-Tokens"); d <= 0 || d > time.Second {
		t.Fatalf("reset tokens = %v", d)
	}
	c := callByID(t, r, h.Get(models.HeaderRequestID))
	if c.CostMicros == 0 || h.Get(models.HeaderCost) != strconv.FormatInt(c.CostMicros, 10) {
		t.Fatalf("cost header %q, the call cost %d", h.Get(models.HeaderCost), c.CostMicros)
	}

	// An upstream's refusal is a call: its id, and nothing charged.
	res = rawChat(t, r, key, `{"model":"bad","messages":[{"role":"user","content":"no"}]}`)
	if res.Status != http.StatusBadRequest || res.Header.Get(models.HeaderCost) != "0" || res.Header.Get("X-Ratelimit-Remaining-Requests") != "1" {
		t.Fatalf("refused = %d %v", res.Status, res.Header)
	}
	if c := callByID(t, r, res.Header.Get(models.HeaderRequestID)); c.Status != models.StatusRejected {
		t.Fatalf("refused call = %+v", c)
	}

	// A stream's cost is known at its end: a trailer, never a header.
	req, _ := http.NewRequest(http.MethodPost, r.in.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"chat","stream":true,"messages":[{"role":"user","content":"stream me"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	sres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(sres.Body)
	sres.Body.Close()
	if sres.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte("[DONE]")) || sres.Header.Get(models.HeaderCost) != "" ||
		sres.Header.Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Fatalf("stream = %d %v", sres.StatusCode, sres.Header)
	}
	sc := callByID(t, r, sres.Header.Get(models.HeaderRequestID))
	if sc.CostMicros == 0 || sres.Trailer.Get(models.HeaderCost) != strconv.FormatInt(sc.CostMicros, 10) {
		t.Fatalf("stream cost trailer %q, the call cost %d", sres.Trailer.Get(models.HeaderCost), sc.CostMicros)
	}

	// The key's own limit: 429 with the same headers and Retry-After,
	// and no call (so no call id).
	res = rawChat(t, r, key, body)
	if res.Status != http.StatusTooManyRequests || res.Header.Get("X-Ratelimit-Remaining-Requests") != "0" ||
		res.Header.Get("X-Ratelimit-Limit-Requests") != "3" || res.Header.Get("Retry-After") == "" || res.Header.Get(models.HeaderRequestID) != "" {
		t.Fatalf("over the limit = %d %v", res.Status, res.Header)
	}
	if d := reset(t, res.Header, "X-Ratelimit-Reset-Requests"); d <= 40*time.Second || d > time.Minute {
		t.Fatalf("reset requests after three = %v", d)
	}

	// A key without limits gets no rate-limit headers, the rest alike.
	res = rawChat(t, r, r.key, body)
	for _, name := range rateHeaders {
		if v := res.Header.Get(name); v != "" {
			t.Errorf("a key without limits got %s: %q", name, v)
		}
	}
	if res.Header.Get(models.HeaderRequestID) == "" || res.Header.Get(models.HeaderCost) == "" {
		t.Fatalf("headers without limits = %v", res.Header)
	}
}

// Tags from x-warden-metadata and the body's metadata are stored with the
// call, redacted; bad tags are refused before anything is reserved or
// sent; the Models page lists the calls of one tag.
func TestModelCallTags(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	tagged := callAPI(t, context.Background(), http.MethodPost, r.in.URL+"/v1/chat/completions", r.key,
		[]byte(`{"model":"chat","metadata":{"run":"r-7","team":"body"},"messages":[{"role":"user","content":"tag me"}]}`),
		map[string]string{models.HeaderMetadata: `{"team":"support","owner":"` + plantedEmail + `"}`})
	if tagged.Status != http.StatusOK {
		t.Fatalf("tagged call = %d %s", tagged.Status, tagged.Raw)
	}
	plain := rawChat(t, r, r.key, `{"model":"chat","messages":[{"role":"user","content":"no tags"}]}`)
	tc := callByID(t, r, tagged.Header.Get(models.HeaderRequestID))
	var tags map[string]string
	if err := json.Unmarshal([]byte(tc.Metadata), &tags); err != nil {
		t.Fatalf("stored metadata %q: %v", tc.Metadata, err)
	}
	// The header's value wins for a key in both.
	if len(tags) != 3 || tags["team"] != "support" || tags["run"] != "r-7" || !strings.HasPrefix(tags["owner"], "[email:") {
		t.Fatalf("stored tags = %q", tc.Metadata)
	}
	assertNoPlanted(t, "the stored tags", []byte(tc.Metadata))
	if pc := callByID(t, r, plain.Header.Get(models.HeaderRequestID)); pc.Metadata != "" {
		t.Fatalf("untagged call has %q", pc.Metadata)
	}
	// The body's metadata is OpenAI's and goes upstream; the header's not.
	if sent := r.sent.all(); !bytes.Contains(sent, []byte(`"run":"r-7"`)) || bytes.Contains(sent, []byte("support")) {
		t.Fatalf("sent upstream: %s", sent)
	}

	many := map[string]string{}
	for i := range models.MaxTags + 1 {
		many[fmt.Sprint("k", i)] = "v"
	}
	manyJSON, _ := json.Marshal(many)
	half := map[string]string{}
	for i := range 10 {
		half[fmt.Sprint("h", i)] = "v"
	}
	halfJSON, _ := json.Marshal(half)
	bodyHalf := strings.ReplaceAll(string(halfJSON), `"h`, `"b`)
	upstream, spent := r.fake.Requests(), r.budget(t).SpentMicros
	calls := len(r.calls(t))
	for _, tt := range []struct {
		name, header, metadata, want string
	}{
		{"header not JSON", "team=support", "", "X-Warden-Metadata must be a JSON object of strings"},
		{"header an array", `["support"]`, "", "X-Warden-Metadata must be a JSON object"},
		{"value not a string", `{"attempt":2}`, "", `the value of "attempt" is not a string`},
		{"too many keys", string(manyJSON), "", "X-Warden-Metadata has 17 keys; at most 16"},
		{"key too long", `{"` + strings.Repeat("k", 65) + `":"v"}`, "", "a key of 65 bytes"},
		{"empty key", `{"":"v"}`, "", "an empty key"},
		{"value too long", `{"note":"` + strings.Repeat("v", 513) + `"}`, "", `the value of "note" has 513 bytes; a value has at most 512`},
		{"body metadata bad", "", `{"n":1}`, `"metadata": the value of "n" is not a string`},
		{"together too many", string(halfJSON), bodyHalf, "at most 16 tags"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
			if tt.metadata != "" {
				body = `{"model":"chat","metadata":` + tt.metadata + `,"messages":[{"role":"user","content":"hi"}]}`
			}
			hdr := map[string]string{}
			if tt.header != "" {
				hdr[models.HeaderMetadata] = tt.header
			}
			res := callAPI(t, context.Background(), http.MethodPost, r.in.URL+"/v1/chat/completions", r.key, []byte(body), hdr)
			e, _ := res.Body["error"].(map[string]any)
			if res.Status != http.StatusBadRequest || res.code() != "invalid_request" || e["type"] != "invalid_request_error" ||
				!strings.Contains(fmt.Sprint(e["message"]), tt.want) {
				t.Fatalf("= %d %s, want 400 invalid_request saying %q", res.Status, res.Raw, tt.want)
			}
		})
	}
	if b := r.budget(t); r.fake.Requests() != upstream || b.SpentMicros != spent || b.ReservedMicros != 0 || len(r.calls(t)) != calls {
		t.Fatalf("refused tags changed something: %d upstream requests (was %d), spent %d (was %d), reserved %d, %d calls (was %d)",
			r.fake.Requests(), upstream, b.SpentMicros, spent, b.ReservedMicros, len(r.calls(t)), calls)
	}

	// The Models page: the calls of one tag.
	b := newBrowser(t, r.in.URL)
	b.loginDev("erin")
	p := b.get("/models?tag=team%3Dsupport")
	if p.Status != http.StatusOK || p.Doc.Find(`[data-testid="model-call-`+tc.ID+`"]`).Length() != 1 ||
		p.Doc.Find(`[data-testid="model-call-`+plain.Header.Get(models.HeaderRequestID)+`"]`).Length() != 0 {
		t.Fatalf("filtered page = %d, rows %d", p.Status, p.Doc.Find(`[data-testid^="model-call-"]`).Length())
	}
	if got := text(p, "model-call-tags-"+tc.ID); !strings.Contains(got, "team=support") || !strings.Contains(got, "run=r-7") || strings.Contains(got, plantedEmail) {
		t.Fatalf("tags column = %q", got)
	}
	if p := b.get("/models?tag=team%3Dnobody"); p.Status != http.StatusOK || !strings.Contains(text(p, "model-calls-empty"), "team=nobody") {
		t.Fatalf("no match = %d %q", p.Status, text(p, "model-calls-empty"))
	}
	if p := b.get("/models?tag=justakey"); p.Status != http.StatusBadRequest || !strings.Contains(text(p, "model-calls-filter-error"), "key=value") {
		t.Fatalf("bad filter = %d %q", p.Status, text(p, "model-calls-filter-error"))
	}
	if p := b.get("/models"); p.Doc.Find(`[data-testid="model-call-`+plain.Header.Get(models.HeaderRequestID)+`"]`).Length() != 1 {
		t.Fatal("without a filter the untagged call is not listed")
	}
}

// WARDEN_CORS_ORIGINS lets a page on a listed origin call /v1/*: its
// preflight is answered and the answer's headers are readable; another
// origin gets no CORS headers, and the console never sends any.
func TestCORSOnAgentAPIOnly(t *testing.T) {
	const origin = "https://agent.example.com"
	r := newModelRigEnv(t, map[string]string{"WARDEN_CORS_ORIGINS": origin + ",http://127.0.0.1:5173"}, 1_000_000, deployment("fake-a", "fake", 0))
	do := func(method, path, from string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, r.in.URL+path, strings.NewReader(body))
		if from != "" {
			req.Header.Set("Origin", from)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type,x-warden-metadata"}
	chat := `{"model":"chat","messages":[{"role":"user","content":"from a browser"}]}`
	auth := map[string]string{"Authorization": "Bearer " + r.key, "Content-Type": "application/json"}

	res := do(http.MethodOptions, "/v1/chat/completions", origin, preflight, "")
	allowHeaders := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(allowHeaders, "authorization") || !strings.Contains(allowHeaders, "content-type") || !strings.Contains(allowHeaders, "x-warden-metadata") ||
		res.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("preflight = %d %v", res.StatusCode, res.Header)
	}
	res = do(http.MethodPost, "/v1/chat/completions", origin, auth, chat)
	expose := strings.ToLower(res.Header.Get("Access-Control-Expose-Headers"))
	if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("chat from %s = %d %v", origin, res.StatusCode, res.Header)
	}
	for _, h := range append(rateHeaders, models.HeaderRequestID, models.HeaderCost) {
		if !strings.Contains(expose, strings.ToLower(h)) {
			t.Errorf("%s is not exposed: %q", h, expose)
		}
	}
	if res := do(http.MethodGet, "/v1/models", "http://127.0.0.1:5173", auth, ""); res.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:5173" {
		t.Fatalf("models from the second origin = %v", res.Header)
	}

	// Another origin, or one that only looks alike: no CORS headers.
	for _, other := range []string{"https://evil.example.com", "https://agent.example.com.evil.test", "http://agent.example.com"} {
		for _, res := range []*http.Response{do(http.MethodOptions, "/v1/chat/completions", other, preflight, ""), do(http.MethodPost, "/v1/chat/completions", other, auth, chat)} {
			if v := res.Header.Get("Access-Control-Allow-Origin"); v != "" {
				t.Errorf("%s %s: Access-Control-Allow-Origin %q", other, res.Request.Method, v)
			}
		}
	}
	// The console, even for a listed origin.
	for _, path := range []string{"/login", "/", "/healthz", "/metrics"} {
		for _, method := range []string{http.MethodGet, http.MethodOptions} {
			res := do(method, path, origin, preflight, "")
			for name := range res.Header {
				if strings.HasPrefix(strings.ToLower(name), "access-control-") {
					t.Errorf("%s %s sent %s", method, path, name)
				}
			}
		}
	}

	// Without the setting, today's behaviour: no CORS anywhere.
	plain := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	req, _ := http.NewRequest(http.MethodOptions, plain.in.URL+"/v1/chat/completions", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	pres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pres.Body.Close()
	if v := pres.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Fatalf("without WARDEN_CORS_ORIGINS a preflight got Access-Control-Allow-Origin %q", v)
	}
}

package web

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/models"
)

// scrape reads /metrics as a Prometheus scraper on loopback does.
func scrape(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", res.StatusCode, raw)
	}
	return string(raw)
}

// sample is the value of one series of a scrape (name and labels as the
// text format writes them, labels in order), or -1 when it is absent.
func sample(body, series string) float64 {
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// promtoolCheck runs promtool check metrics on a scrape: skipped without
// promtool, except in CI (.ci/run installs it).
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed, and CI must run it (.ci/run installs it from Debian's prometheus package)")
		}
		t.Skip("promtool is not installed (Debian's prometheus package has it; .ci/run installs it): the scrape was not linted")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// After chat traffic — a plain call, a stream, a cache hit, a call that
// falls over to a second deployment, and a 402 refused before any
// reservation — /metrics counts each call once per alias and deployment,
// with the tokens and cost the Model-calls record holds, holds no
// reservation once they are settled, has the Go and process collectors,
// and passes promtool.
func TestModelMetricsAfterTraffic(t *testing.T) {
	flakyA, flakyB := deployment("flaky-a", "fail-500", 0), deployment("flaky-b", "fake", 1)
	flakyA.Alias, flakyB.Alias = "flaky", "flaky"
	r := newModelRig(t, 5_000, deployment("fake-a", "fake", 0), flakyA, flakyB)
	ctx := context.Background()
	if _, err := models.SetAliasSettings(ctx, r.in.DB, testActor, models.AliasSettings{Alias: "chat", CacheTTL: 600}); err != nil {
		t.Fatal(err)
	}
	_, key := newKeyIn(t, r.in, "modelco", "meter-bot", []string{"model:chat", "model:flaky"}, "test")

	before := scrape(t, r.in.URL)
	if v := sample(before, `warden_model_requests_total{alias="chat",deployment="fake-a",operation="chat",outcome="ok"}`); v != -1 {
		t.Fatalf("a call counted before any: %v", v)
	}
	det := `{"model":"chat","temperature":0,"messages":[{"role":"user","content":"count me"}]}`
	for i, body := range []string{
		det, // ok, then kept
		det, // a cache hit
		`{"model":"chat","stream":true,"messages":[{"role":"user","content":"stream me"}]}`,
		`{"model":"flaky","messages":[{"role":"user","content":"fall over"}]}`,
	} {
		res := rawChat(t, r, key, body)
		if res.Status != http.StatusOK {
			t.Fatalf("call %d = %d %s", i+1, res.Status, res.Raw)
		}
	}
	// Its worst case (the context window and the output cap, 8,704
	// micro-units) is above the budget: 402, no call, nothing counted.
	huge := `{"model":"chat","messages":[{"role":"user","content":"` + strings.Repeat("x", 30_000) + `"}]}`
	if res := rawChat(t, r, key, huge); res.Status != http.StatusPaymentRequired {
		t.Fatalf("a call above the budget = %d %.300s", res.Status, res.Raw)
	}

	cs := r.calls(t)
	if len(cs) != 4 {
		t.Fatalf("%d calls recorded, want 4", len(cs))
	}
	var in, out, cost = map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, c := range cs {
		for _, a := range c.Attempts {
			in[a.Deployment] += a.InputTokens
			out[a.Deployment] += a.OutputTokens
			cost[a.Deployment] += a.CostMicros
		}
	}
	body := scrape(t, r.in.URL)
	for series, want := range map[string]float64{
		`warden_model_requests_total{alias="chat",deployment="fake-a",operation="chat",outcome="ok"}`:        2, // the plain call and the stream
		`warden_model_requests_total{alias="chat",deployment="fake-a",operation="chat",outcome="cache_hit"}`: 1,
		`warden_model_requests_total{alias="flaky",deployment="flaky-b",operation="chat",outcome="ok"}`:      1,
		`warden_model_cache_hits_total{alias="chat",deployment="fake-a"}`:                                    1,
		`warden_model_fallbacks_total{alias="flaky",deployment="flaky-a"}`:                                   1,
		`warden_model_input_tokens_total{alias="chat",deployment="fake-a"}`:                                  float64(in["fake-a"]),
		`warden_model_output_tokens_total{alias="chat",deployment="fake-a"}`:                                 float64(out["fake-a"]),
		`warden_model_cost_micros_total{alias="chat",deployment="fake-a"}`:                                   float64(cost["fake-a"]),
		`warden_model_input_tokens_total{alias="flaky",deployment="flaky-b"}`:                                float64(in["flaky-b"]),
		`warden_model_cost_micros_total{alias="flaky",deployment="flaky-b"}`:                                 float64(cost["flaky-b"]),
		`warden_model_upstream_latency_seconds_count{alias="chat",deployment="fake-a"}`:                      2, // the hit never went upstream
		`warden_model_upstream_latency_seconds_count{alias="flaky",deployment="flaky-a"}`:                    1,
		`warden_model_upstream_latency_seconds_count{alias="flaky",deployment="flaky-b"}`:                    1,
		`warden_model_time_to_first_token_seconds_count{alias="chat",deployment="fake-a"}`:                   1,
		`warden_model_reserved_micros{alias="chat"}`:                                                         0, // settled, and the 402 never reserved
		`warden_model_reserved_micros{alias="flaky"}`:                                                        0,
	} {
		if got := sample(body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if in["fake-a"] == 0 || out["fake-a"] == 0 || cost["fake-a"] == 0 || cost["flaky-a"] != 0 {
		t.Errorf("the calls' attempts used in %v, out %v, cost %v", in, out, cost)
	}
	for _, absent := range []string{
		`warden_model_fallbacks_total{alias="chat",deployment="fake-a"}`,
		`warden_model_requests_total{alias="flaky",deployment="flaky-a",operation="chat",outcome="ok"}`,
		`warden_model_requests_total{alias="chat",deployment="",operation="chat",outcome="failed"}`,
	} {
		if got := sample(body, absent); got != -1 {
			t.Errorf("%s = %v, want no such series", absent, got)
		}
	}
	for _, family := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes",
		"warden_api_shed_total"} {
		if !strings.Contains(body, "\n"+family+" ") {
			t.Errorf("the scrape has no %s", family)
		}
	}
	// No tenant or key in any label.
	if strings.Contains(body, r.tenant) || strings.Contains(body, "modelco") {
		t.Error("a tenant is named in the metrics")
	}
	promtoolCheck(t, body)
}

// A reservation is counted while its call is in flight.
func TestModelMetricsReservationHeld(t *testing.T) {
	d := deployment("slow", "hang", 0)
	d.Timeout = 1500 * time.Millisecond
	r := newModelRig(t, 1_000_000, d)
	done := make(chan apiResp, 1)
	go func() {
		done <- callAPI(t, context.Background(), http.MethodPost, r.in.URL+"/v1/chat/completions", r.key,
			[]byte(`{"model":"chat","messages":[{"role":"user","content":"wait"}]}`), nil)
	}()
	var held float64
	waitUntil(t, "the reservation in /metrics", func() bool {
		held = sample(scrape(t, r.in.URL), `warden_model_reserved_micros{alias="chat"}`)
		return held > 0
	})
	if b := r.budget(t); float64(b.ReservedMicros) != held {
		t.Fatalf("metrics hold %v, the budget %d", held, b.ReservedMicros)
	}
	if res := <-done; res.Status != http.StatusServiceUnavailable {
		t.Fatalf("hung upstream = %d %s", res.Status, res.Raw)
	}
	body := scrape(t, r.in.URL)
	if v := sample(body, `warden_model_reserved_micros{alias="chat"}`); v != 0 {
		t.Fatalf("held after the call = %v", v)
	}
	if v := sample(body, `warden_model_requests_total{alias="chat",deployment="",operation="chat",outcome="failed"}`); v != 1 {
		t.Fatalf("failed calls = %v", v)
	}
}

package web

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tools/sim"
)

// Under overload the agent API sheds: beyond WARDEN_API_MAX_INFLIGHT
// writes in flight a request is answered at once with 503 overloaded and
// Retry-After, instead of waiting its turn; the console keeps answering
// meanwhile, and once the load is gone requests are admitted again.
func TestAPIShedsOverloadAndTheConsoleStaysUsable(t *testing.T) {
	in := startWardenDemo(t, map[string]string{"WARDEN_API_MAX_INFLIGHT": "2"})
	in.waitReady(t)
	erin := newBrowser(t, in.URL)
	erin.loginDev("erin")
	in.Agent.Sim.SetFaults(sim.Faults{Delay: time.Minute}) // every tool call hangs
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, in.URL+"/v1/journeys", strings.NewReader(`{"input":"Where is my order ORD-1003?"}`))
			req.Header.Set("Authorization", "Bearer "+in.DemoKey)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wait.Until(t, 10*time.Second, "the two hanging journeys to start", func() bool { return running(t, in) >= 2 })

	r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	if r.Status != http.StatusServiceUnavailable || r.code() != "overloaded" || r.Header.Get("Retry-After") == "" {
		t.Errorf("third journey = %d %s (Retry-After %q), want 503 overloaded with Retry-After", r.Status, r.Raw, r.Header.Get("Retry-After"))
	}
	if p := erin.get("/"); p.Status != http.StatusOK {
		t.Errorf("the console home while the API sheds = %d, want 200", p.Status)
	}
	if g := callAPI(t, context.Background(), http.MethodGet, in.URL+"/v1/journeys/nope", in.DemoKey, nil, nil); g.Status == http.StatusServiceUnavailable {
		t.Error("a read was shed")
	}
	if m := erin.get("/metrics"); !strings.Contains(m.Body, "warden_api_shed_total 1") {
		t.Errorf("/metrics does not count the shed request:\n%.500s", m.Body)
	}

	in.Agent.Sim.SetFaults(sim.Faults{})
	cancel()
	wg.Wait()
	// The cancelled journeys record their ends and free their slots.
	var after apiResp
	wait.ForEvery(10*time.Second, 50*time.Millisecond, func() bool {
		after = journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
		return after.Status == http.StatusOK
	})
	if after.Status != http.StatusOK {
		t.Errorf("after the load is gone = %d %s, want 200", after.Status, after.Raw)
	}
}

// One tenant's keys share a per-tenant limit: each key below its own
// limit, together they are refused with 429 once the tenant's rate is
// spent.
func TestTenantRateAcrossKeys(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.Agent.Gateway.SetTenantRate(2) // burst 4
	_, a := newKey(t, in, "a", []string{"skill:order_status", "tool:lookup_order"}, 6000, 100, nil)
	_, b := newKey(t, in, "b", []string{"skill:order_status", "tool:lookup_order"}, 6000, 100, nil)
	var limited apiResp
	for i := range 10 {
		key := a
		if i%2 == 1 {
			key = b
		}
		if r := journey(t, in, key, "Where is my order ORD-1003?", nil); r.Status == http.StatusTooManyRequests {
			limited = r
			break
		}
	}
	if limited.Status != http.StatusTooManyRequests || !strings.Contains(limited.str("message")+string(limited.Raw), "across its keys") || limited.Header.Get("Retry-After") == "" {
		t.Errorf("two keys of one tenant over its rate: %d %s; want 429 naming the tenant's limit, with Retry-After", limited.Status, limited.Raw)
	}
}

// /metrics answers a scraper on loopback with the dependencies' breaker
// states and counters.
func TestMetricsListDependencies(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	resp, err := http.Get(in.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	for _, want := range []string{`warden_dependency_breaker_state{dependency="lookup_order"} 0`, `warden_dependency_calls_total{dependency="lookup_order"}`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("/metrics lacks %s:\n%.800s", want, b.String())
		}
	}
}

// Chat completions are counted by the shedder while Warden works on them
// and waits for the answer to start: beyond WARDEN_API_MAX_INFLIGHT, a
// call is shed at once (503 overloaded, in OpenAI's shape) instead of
// redacting and reserving under overload. A stream that flows no longer
// holds its slot (its deployment's concurrency bounds it).
func TestAPIShedsChatCompletions(t *testing.T) {
	hang := deployment("slow", "hang", 0)
	hang.Timeout = time.Minute
	r := newModelRigEnv(t, map[string]string{"WARDEN_API_MAX_INFLIGHT": "2"}, 1_000_000, hang)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.in.URL+"/v1/chat/completions", strings.NewReader(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Authorization", "Bearer "+r.key)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wait.Until(t, 10*time.Second, "the two hanging calls to reach the upstream", func() bool { return r.fake.Requests() >= 2 })
	// The bound only keeps an unshed call from hanging the test.
	third, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	res := callAPI(t, third, http.MethodPost, r.in.URL+"/v1/chat/completions", r.key, []byte(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`), nil)
	if res.Status != http.StatusServiceUnavailable || !bytes.Contains(res.Raw, []byte(`"code":"overloaded"`)) || !bytes.Contains(res.Raw, []byte(`"type":"server_error"`)) ||
		res.Header.Get("Retry-After") == "" {
		t.Errorf("a third chat call = %d %s, want 503 overloaded in OpenAI's shape with Retry-After", res.Status, res.Raw)
	}
	if j := journey(t, r.in, r.in.DemoKey, "Where is my order ORD-1003?", nil); j.Status != http.StatusServiceUnavailable || j.code() != "overloaded" {
		t.Errorf("a journey while two chat calls hold the slots = %d %s, want 503 overloaded", j.Status, j.Raw)
	}
	if r.fake.Requests() != 2 {
		t.Errorf("the upstream saw %d requests, want the 2 admitted", r.fake.Requests())
	}
	cancel()
	wg.Wait()
}

// Two streams that flow do not hold the shedder's slots.
func TestAPIShedderLetsFlowingStreamsGo(t *testing.T) {
	stall := deployment("stall", "stall", 0)
	stall.Timeout = time.Minute
	r := newModelRigEnv(t, map[string]string{"WARDEN_API_MAX_INFLIGHT": "2"}, 1_000_000, stall)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.in.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"chat","stream":true,"messages":[{"role":"user","content":"a b c d e f"}]}`))
		req.Header.Set("Authorization", "Bearer "+r.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("stream = %v, %v", resp, err)
		}
		defer resp.Body.Close()
		// The stream's first bytes have arrived; it now stalls.
		if _, err := resp.Body.Read(make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
	}
	if j := journey(t, r.in, r.in.DemoKey, "Where is my order ORD-1003?", nil); j.Status != http.StatusOK {
		t.Errorf("a journey beside two flowing streams = %d %s, want 200", j.Status, j.Raw)
	}
}

package web

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/models/fakeupstream"
)

// BenchmarkModelDoorsPaced is BenchmarkChatGatewayPaced for each model
// door in one run: open loop, 2 seconds at each rate, a call through
// Warden next to the same call straight to the fake upstream, per door
// (chat completions and embeddings; a door is one line of doors below).
//
//	go test -run '^$' -bench ModelDoorsPaced -benchtime 1x ./web/
func BenchmarkModelDoorsPaced(b *testing.B) {
	r := newModelRigEnv(b, benchInflight, 1<<60, deployment("fake-a", "fake", 0))
	up := httptest.NewServer(fakeupstream.New())
	defer up.Close()
	doors := []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"%s","messages":[{"role":"user","content":"benchmark me please"}]}`},
		{"embeddings", "/v1/embeddings", `{"model":"%s","input":["benchmark me please","and me"]}`},
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2000, IdleConnTimeout: time.Minute}}
	call := func(url, key, body string) (time.Duration, error) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d", res.StatusCode)
		}
		return time.Since(t0), nil
	}
	paced := func(b *testing.B, rate int, url, key, body string) []time.Duration {
		const seconds = 2
		ds := make([]time.Duration, rate*seconds)
		var wg sync.WaitGroup
		var failed sync.Once
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i := range ds {
			<-tick.C
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := call(url, key, body)
				if err != nil {
					failed.Do(func() { b.Errorf("call %s: %v", url, err) })
				}
				ds[i] = d
			}()
		}
		wg.Wait()
		slices.Sort(ds)
		return ds
	}
	pct := func(ds []time.Duration, p float64) float64 {
		return float64(ds[min(len(ds)-1, int(float64(len(ds))*p))].Microseconds())
	}
	for _, d := range doors {
		for i := 0; i < 200; i++ { // warm both paths
			_, _ = call(up.URL+d.path, "x", fmt.Sprintf(d.body, "fake"))
			_, _ = call(r.in.URL+d.path, r.key, fmt.Sprintf(d.body, "chat"))
		}
	}
	for _, rate := range []int{500, 1000} {
		for _, d := range doors {
			b.Run(fmt.Sprintf("%s-%d-per-s", d.name, rate), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					direct := paced(b, rate, up.URL+d.path, "x", fmt.Sprintf(d.body, "fake"))
					warden := paced(b, rate, r.in.URL+d.path, r.key, fmt.Sprintf(d.body, "chat"))
					b.ReportMetric(pct(direct, 0.5), "direct-p50-µs")
					b.ReportMetric(pct(direct, 0.99), "direct-p99-µs")
					b.ReportMetric(pct(warden, 0.5), "warden-p50-µs")
					b.ReportMetric(pct(warden, 0.99), "warden-p99-µs")
					b.ReportMetric(pct(warden, 0.5)-pct(direct, 0.5), "overhead-p50-µs")
					b.ReportMetric(pct(warden, 0.99)-pct(direct, 0.99), "overhead-p99-µs")
				}
			})
		}
	}
}

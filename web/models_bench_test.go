package web

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/models/fakeupstream"
)

// BenchmarkChatStreamMemory holds N streams of a long completion open at
// once, mid-answer, and reports the heap in use per stream: constant per
// stream (no buffering of whole answers) means the same figure for 10 and
// 100 streams. The figure includes the test's clients and the fake
// upstream, which run in the same process; "direct" is the same streams
// straight from the fake, so Warden's share is the difference.
//
//	go test -run '^$' -bench ChatStreamMemory -benchtime 1x ./web/
func BenchmarkChatStreamMemory(b *testing.B) {
	d := deployment("long", "long-1500", 0)
	d.Concurrency = 1000
	d.MaxOutputTokens = 4096
	r := newModelRigEnv(b, benchInflight, 1<<60, d)
	up := httptest.NewServer(fakeupstream.New())
	defer up.Close()
	for _, n := range []int{10, 100} {
		for _, target := range []string{"direct", "warden"} {
			b.Run(fmt.Sprintf("%s-%d", target, n), func(b *testing.B) {
				url, key, model := r.in.URL+"/v1/chat/completions", r.key, "chat"
				if target == "direct" {
					url, key, model = up.URL+"/v1/chat/completions", "x", "long-1500"
				}
				for i := 0; i < b.N; i++ {
					b.ReportMetric(float64(streamHeap(b, url, key, model, n)), "heap-B/stream")
				}
			})
		}
	}
}

// streamHeap opens n streams, waits until each has read 300 events, and
// returns the heap in use per stream then, above what was in use before.
func streamHeap(b *testing.B, url, key, model string, n int) int64 {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	body := []byte(`{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"write at length"}]}`)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var reached, done sync.WaitGroup
	measured := make(chan struct{})
	reached.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer done.Done()
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil || res.StatusCode != http.StatusOK {
				b.Errorf("stream: %v %v", err, res)
				reached.Done()
				return
			}
			defer res.Body.Close()
			br := bufio.NewReader(res.Body)
			events := 0
			for {
				line, err := br.ReadBytes('\n')
				if bytes.HasPrefix(line, []byte("data:")) {
					events++
					if events == 300 {
						reached.Done()
						<-measured
					}
				}
				if err != nil {
					break
				}
			}
			if events < 300 {
				b.Errorf("stream ended after %d events", events)
				reached.Done()
			}
		}()
	}
	reached.Wait()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	inUse := int64(ms.HeapInuse) - int64(base)
	close(measured)
	done.Wait()
	return inUse / int64(n)
}

// BenchmarkChatGatewayPaced sends completions at a fixed rate (500 and
// 1000 calls a second, open loop: a slow answer does not slow the
// sender) straight to the fake upstream and through Warden, and reports
// the p50 and p99 of each and of the difference (Warden's overhead).
//
//	go test -run '^$' -bench ChatGatewayPaced -benchtime 1x ./web/
func BenchmarkChatGatewayPaced(b *testing.B) {
	r := newModelRigEnv(b, benchInflight, 1<<60, deployment("fake-a", "fake", 0))
	up := httptest.NewServer(fakeupstream.New())
	defer up.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2000, IdleConnTimeout: time.Minute}}
	call := func(url, key, model string) (time.Duration, error) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{"model":"`+model+`","messages":[{"role":"user","content":"benchmark me please"}]}`)))
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
	paced := func(b *testing.B, rate int, url, key, model string) []time.Duration {
		const seconds = 2
		total := rate * seconds
		ds := make([]time.Duration, total)
		var wg sync.WaitGroup
		var failed sync.Once
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i := 0; i < total; i++ {
			<-tick.C
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := call(url, key, model)
				if err != nil {
					failed.Do(func() { b.Errorf("call: %v", err) })
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
	// Warm both paths (connections, prepared statements).
	for i := 0; i < 200; i++ {
		_, _ = call(up.URL+"/v1/chat/completions", "x", "fake")
		_, _ = call(r.in.URL+"/v1/chat/completions", r.key, "chat")
	}
	for _, rate := range []int{500, 1000} {
		b.Run(fmt.Sprintf("%d-per-s", rate), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				d := paced(b, rate, up.URL+"/v1/chat/completions", "x", "fake")
				w := paced(b, rate, r.in.URL+"/v1/chat/completions", r.key, "chat")
				b.ReportMetric(pct(d, 0.5), "direct-p50-µs")
				b.ReportMetric(pct(d, 0.99), "direct-p99-µs")
				b.ReportMetric(pct(w, 0.5), "warden-p50-µs")
				b.ReportMetric(pct(w, 0.99), "warden-p99-µs")
				b.ReportMetric(pct(w, 0.5)-pct(d, 0.5), "overhead-p50-µs")
				b.ReportMetric(pct(w, 0.99)-pct(d, 0.99), "overhead-p99-µs")
			}
		})
	}
}

// benchInflight lifts the API's load shedding, which counts chat calls,
// so that the benchmarks measure the gateway's latency under their load
// rather than what is shed beyond WARDEN_API_MAX_INFLIGHT.
var benchInflight = map[string]string{"WARDEN_API_MAX_INFLIGHT": "100000"}

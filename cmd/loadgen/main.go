// Command loadgen sends read-only journeys to a running Warden at fixed
// request rates and reports throughput and latency percentiles. It only
// talks to loopback addresses, runs for a bounded time, and stops by
// itself.
//
//	go run ./cmd/loadgen -url http://127.0.0.1:8080 -key wk_... -rates 100,500,1000 -duration 10s
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	target := flag.String("url", "http://127.0.0.1:8080", "Warden's base URL (loopback only)")
	key := flag.String("key", os.Getenv("WARDEN_KEY"), "virtual key (or WARDEN_KEY); create one for benchmarking: the demo key's 100/min limit is all it would measure")
	rates := flag.String("rates", "100,500,1000", "requests per second, comma separated")
	duration := flag.Duration("duration", 10*time.Second, "how long each rate sends (at most 2m)")
	inflight := flag.Int("inflight", 512, "most requests in flight; a send beyond it is counted as dropped, not sent")
	input := flag.String("input", "Where is my order ORD-1003?", "journey input (a read-only skill)")
	flag.Parse()

	u, err := url.Parse(*target)
	if err != nil || !isLoopback(u.Hostname()) {
		fmt.Fprintln(os.Stderr, "loadgen: -url must be a loopback address")
		os.Exit(2)
	}
	if *key == "" {
		fmt.Fprintln(os.Stderr, "loadgen: -key is required")
		os.Exit(2)
	}
	if *inflight < 1 || *inflight > 20000 {
		fmt.Fprintln(os.Stderr, "loadgen: -inflight must be 1 to 20000")
		os.Exit(2)
	}
	d := min(*duration, 2*time.Minute)
	body := []byte(`{"input":` + strconv.Quote(*input) + `}`)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *inflight, MaxConnsPerHost: *inflight}}
	fmt.Printf("%7s %7s %7s %8s %7s %7s %7s %7s %7s %7s %9s %9s\n",
		"rate/s", "sent", "ok", "ok/s", "429", "503", "other", "neterr", "dropped", "secs", "p50", "p99")
	for _, f := range strings.Split(*rates, ",") {
		rate, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || rate <= 0 || rate > 20000 {
			fmt.Fprintf(os.Stderr, "loadgen: bad rate %q\n", f)
			os.Exit(2)
		}
		r := runRate(client, *target+"/v1/journeys", *key, body, rate, d, *inflight)
		fmt.Printf("%7d %7d %7d %8.0f %7d %7d %7d %7d %7d %7.1f %9s %9s\n", rate, r.sent, r.ok, float64(r.ok)/r.elapsed.Seconds(),
			r.limited, r.shed, r.other, r.netErr, r.dropped, r.elapsed.Seconds(), r.p50, r.p99)
	}
}

// result counts each outcome apart: answered 200 (ok), 429 (limited),
// 503 (shed or unavailable), another status (other), a transport error
// (netErr), and sends skipped because -inflight were in flight (dropped,
// never sent). elapsed runs from the first send to the last answer, so
// ok/s is the throughput the server achieved, drain included.
type result struct {
	sent, ok, limited, shed, other, netErr, dropped int
	elapsed                                         time.Duration
	p50, p99                                        time.Duration // of ok answers
}

// runRate sends at a fixed rate (open loop: a slow answer does not slow the
// sender) with at most inflight requests in flight.
func runRate(c *http.Client, url, key string, body []byte, rate int, d time.Duration, inflight int) result {
	var mu sync.Mutex
	var lat []time.Duration
	var res result
	var wg sync.WaitGroup
	sem := make(chan struct{}, inflight)
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		next := start.Add(time.Duration(i) * interval)
		if w := time.Until(next); w > 0 {
			time.Sleep(w)
		}
		select {
		case sem <- struct{}{}:
		default:
			res.dropped++
			continue
		}
		res.sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			el := time.Since(t0)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				res.netErr++
			case resp.StatusCode == http.StatusOK:
				res.ok++
				lat = append(lat, el)
			case resp.StatusCode == http.StatusTooManyRequests:
				res.limited++
			case resp.StatusCode == http.StatusServiceUnavailable:
				res.shed++
			default:
				res.other++
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(lat)
	if len(lat) > 0 {
		res.p50 = lat[len(lat)/2].Round(10 * time.Microsecond)
		res.p99 = lat[len(lat)*99/100].Round(10 * time.Microsecond)
	}
	return res
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

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
	key := flag.String("key", os.Getenv("WARDEN_KEY"), "virtual key (or WARDEN_KEY)")
	rates := flag.String("rates", "100,500,1000", "requests per second, comma separated")
	duration := flag.Duration("duration", 10*time.Second, "how long each rate runs (at most 2m)")
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
	d := min(*duration, 2*time.Minute)
	body := []byte(`{"input":` + strconv.Quote(*input) + `}`)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2000, MaxConnsPerHost: 2000}}
	fmt.Printf("%8s %10s %10s %10s %10s %8s\n", "rate/s", "sent", "ok/s", "p50", "p99", "errors")
	for _, f := range strings.Split(*rates, ",") {
		rate, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || rate <= 0 || rate > 20000 {
			fmt.Fprintf(os.Stderr, "loadgen: bad rate %q\n", f)
			os.Exit(2)
		}
		r := runRate(client, *target+"/v1/journeys", *key, body, rate, d)
		fmt.Printf("%8d %10d %10.0f %10s %10s %8d\n", rate, r.sent, float64(r.ok)/d.Seconds(), r.p50, r.p99, r.errors)
	}
}

type result struct {
	sent, ok, errors int
	p50, p99         time.Duration
}

// runRate sends at a fixed rate (open loop: a slow answer does not slow the
// sender) with at most 2000 requests in flight.
func runRate(c *http.Client, url, key string, body []byte, rate int, d time.Duration) result {
	var mu sync.Mutex
	var lat []time.Duration
	var res result
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2000)
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
			mu.Lock()
			res.errors++
			mu.Unlock()
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
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.errors++
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				res.errors++
				return
			}
			res.ok++
			lat = append(lat, el)
		}()
	}
	wg.Wait()
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

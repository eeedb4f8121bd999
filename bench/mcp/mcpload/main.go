// Command mcpload measures MCP tools/call latency, for bench/mcp/run.sh:
// the same call to an upstream MCP server directly and through Warden's
// /mcp door, side by side. It sends an open-loop load (a fixed rate of
// tools/call requests, with the official Go SDK's client) to each target
// in turn and prints p50 and p99 latency per target and rate, each
// target's overhead over the first (the upstream alone), and the CPU time
// a process (Warden) spent per answered call. It only talks to loopback
// addresses and runs for a bounded time.
//
//	mcpload -target 'direct=http://127.0.0.1:18092/mcp|tool=lookup_order' \
//	        -target 'warden=http://127.0.0.1:18081/mcp|tool=shop__lookup_order|Authorization: Bearer wk_...' \
//	        -pid warden=PID -rates 200,1000 -duration 10s
//
// Each target gets -workers MCP client sessions, one per worker, opened
// before measuring; a scheduled call waits for a free worker, and that
// wait counts in its latency (latency runs from the scheduled send time).
// Warden's door is stateless, so a session is only the client's: every
// call is one POST that Warden answers from the key and the database.
//
// "mcpload setup -data DIR -upstream URL" prepares a fresh Warden data
// directory before Warden starts: the upstream's host among the allowed
// hosts, the upstream registered as the MCP server "shop" and discovered
// (it must be running), lookup_order classified low impact, a tenant
// "bench" with a large budget and a key with mcp:shop/*, printed on stdout.
// It writes what an admin would do in the console, directly into the
// database, since the bench must not depend on signing in.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/bench/internal/procstat"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

type target struct {
	name, url, tool string
	header          http.Header
}

type targets []target

func (t *targets) String() string { return fmt.Sprint(len(*t)) }

// Set parses "name=URL|tool=NAME|Header: value|...".
func (t *targets) Set(s string) error {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=URL|tool=NAME[|Header: value...], got %q", s)
	}
	parts := strings.Split(rest, "|")
	u, err := url.Parse(parts[0])
	if err != nil || !isLoopback(u.Hostname()) {
		return fmt.Errorf("%s: %q is not a loopback URL", name, parts[0])
	}
	tg := target{name: name, url: parts[0], header: http.Header{}}
	for _, p := range parts[1:] {
		if tool, ok := strings.CutPrefix(p, "tool="); ok {
			tg.tool = tool
			continue
		}
		k, v, ok := strings.Cut(p, ":")
		if !ok {
			return fmt.Errorf("%s: %q is neither tool=NAME nor Header: value", name, p)
		}
		tg.header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if tg.tool == "" {
		return fmt.Errorf("%s: no tool=NAME", name)
	}
	*t = append(*t, tg)
	return nil
}

// headerRT adds a target's headers to every request.
type headerRT struct {
	h    http.Header
	base http.RoundTripper
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header[k] = v
		}
	}
	return h.base.RoundTrip(r)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "setup" {
		setup(os.Args[2:])
		return
	}
	var ts targets
	flag.Var(&ts, "target", "name=URL|tool=NAME[|Header: value...]; repeat; the first is the baseline (the upstream alone)")
	rates := flag.String("rates", "200,1000", "calls per second, comma separated")
	duration := flag.Duration("duration", 10*time.Second, "how long each target receives each rate (at most 1m)")
	warmup := flag.Duration("warmup", 2*time.Second, "load at the first rate before measuring each target, not counted")
	workers := flag.Int("workers", 64, "MCP client sessions per target (at most 512)")
	args := flag.String("args", `{"order_id":"ORD-1008"}`, "the call's arguments (JSON)")
	want := flag.String("want", "ORD-1008", "text an answer must contain to count as ok")
	pids := procstat.PIDs{}
	flag.Var(pids, "pid", "name=PID: report the CPU time process PID (Linux) spent per answered call of target name; repeat")
	flag.Parse()
	if len(ts) == 0 {
		fmt.Fprintln(os.Stderr, "mcpload: at least one -target")
		os.Exit(2)
	}
	var callArgs map[string]any
	if err := json.Unmarshal([]byte(*args), &callArgs); err != nil {
		fmt.Fprintln(os.Stderr, "mcpload: -args:", err)
		os.Exit(2)
	}
	d := min(*duration, time.Minute)
	w := max(1, min(*workers, 512))
	var rs []int
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 || r > 5000 {
			fmt.Fprintf(os.Stderr, "mcpload: bad rate %q\n", f)
			os.Exit(2)
		}
		rs = append(rs, r)
	}
	base := &http.Transport{MaxIdleConns: 4 * w, MaxIdleConnsPerHost: 2 * w, IdleConnTimeout: 30 * time.Second}

	pools := make([][]*mcp.ClientSession, len(ts))
	for i, t := range ts {
		hc := &http.Client{Timeout: 30 * time.Second, Transport: headerRT{h: t.header, base: base}}
		c := mcp.NewClient(&mcp.Implementation{Name: "mcpload", Version: "1"}, nil)
		for range w {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: t.url, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			cancel()
			if err != nil {
				fmt.Fprintf(os.Stderr, "mcpload: %s: connect: %v\n", t.name, err)
				os.Exit(1)
			}
			defer cs.Close()
			pools[i] = append(pools[i], cs)
		}
	}

	fmt.Printf("%-10s %7s %7s %7s %7s %7s %9s %9s %12s %12s %10s\n", "target", "rate/s", "sent", "ok", "errors", "late", "p50", "p99", "overhead50", "overhead99", "cpu/call")
	for _, rate := range rs {
		var first result
		for i, t := range ts {
			if *warmup > 0 {
				runRate(pools[i], t, callArgs, *want, rs[0], *warmup)
			}
			cpu0, cpuOK := procstat.CPUTime(pids[t.name])
			r := runRate(pools[i], t, callArgs, *want, rate, d)
			cpu1, _ := procstat.CPUTime(pids[t.name])
			perCall := ""
			if cpuOK && r.ok > 0 {
				perCall = fmt.Sprintf("%dµs", ((cpu1 - cpu0) / time.Duration(r.ok)).Microseconds())
			}
			over50, over99 := "", ""
			if i == 0 {
				first = r
			} else {
				over50, over99 = ms(r.p50-first.p50), ms(r.p99-first.p99)
			}
			fmt.Printf("%-10s %7d %7d %7d %7d %7d %9s %9s %12s %12s %10s\n", t.name, rate, r.sent, r.ok, r.errors, r.late, ms(r.p50), ms(r.p99), over50, over99, perCall)
			if r.firstErr != "" {
				fmt.Printf("           first error: %s\n", r.firstErr)
			}
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

type result struct {
	sent, ok, errors int
	late             int // calls that started more than 100 ms after their scheduled time: the sender fell behind
	p50, p99         time.Duration
	firstErr         string
}

// runRate schedules calls at a fixed rate (open loop: a slow answer does
// not slow the schedule) onto the target's sessions, one call at a time
// per session. Latency runs from the scheduled time, so waiting for a
// free session counts too.
func runRate(pool []*mcp.ClientSession, t target, args map[string]any, want string, rate int, d time.Duration) result {
	var (
		mu  sync.Mutex
		lat []time.Duration
		res result
		wg  sync.WaitGroup
	)
	n := int(d * time.Duration(rate) / time.Second)
	interval := time.Second / time.Duration(rate)
	ticks := make(chan time.Time, n)
	for _, cs := range pool {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for at := range ticks {
				if wait := time.Until(at); wait > 0 {
					time.Sleep(wait)
				}
				late := time.Since(at) > 100*time.Millisecond
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.tool, Arguments: args})
				cancel()
				took := time.Since(at)
				var text bytes.Buffer
				if err == nil {
					for _, c := range out.Content {
						if tc, ok := c.(*mcp.TextContent); ok {
							text.WriteString(tc.Text)
						}
					}
				}
				mu.Lock()
				res.sent++
				if late {
					res.late++
				}
				switch {
				case err == nil && !out.IsError && strings.Contains(text.String(), want):
					res.ok++
					lat = append(lat, took)
				default:
					res.errors++
					if res.firstErr == "" {
						if err != nil {
							res.firstErr = err.Error()
						} else {
							res.firstErr = fmt.Sprintf("tool error %v: %.300s", out.IsError, text.String())
						}
					}
				}
				mu.Unlock()
			}
		}()
	}
	start := time.Now().Add(10 * time.Millisecond)
	for i := range n {
		ticks <- start.Add(time.Duration(i) * interval)
	}
	close(ticks)
	wg.Wait()
	slices.Sort(lat)
	if len(lat) > 0 {
		res.p50 = lat[len(lat)*50/100]
		res.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
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

// setup prepares a fresh data directory for the bench (see the package
// comment) and prints the key's secret.
func setup(args []string) {
	fs := flag.NewFlagSet("mcpload setup", flag.ExitOnError)
	dir := fs.String("data", "", "Warden's data directory (before Warden starts)")
	upstream := fs.String("upstream", "", "the upstream MCP server's URL, such as http://127.0.0.1:18092/mcp (running)")
	_ = fs.Parse(args)
	if *dir == "" || *upstream == "" {
		fmt.Fprintln(os.Stderr, "usage: mcpload setup -data DIR -upstream URL")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fail(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, *dir+"/warden.db")
	if err != nil {
		fail(err)
	}
	defer db.Close()
	sealer, err := seal.LoadOrCreate(*dir)
	if err != nil {
		fail(err)
	}
	actor := audit.Actor{Type: audit.ActorSystem, ID: "bench-setup"}
	u, err := url.Parse(*upstream)
	if err != nil {
		fail(err)
	}
	if _, err := models.AllowHosts(ctx, db, actor, u.Hostname()); err != nil {
		fail(err)
	}
	if _, err := mcpservers.Create(ctx, db, sealer, actor, mcpservers.Server{Name: "shop", URL: *upstream, Timeout: 10 * time.Second, Owner: "bench", Enabled: true}, ""); err != nil {
		fail(err)
	}
	if _, err := mcpservers.NewGateway(db, sealer, nil, nil).Discover(ctx, actor, "shop"); err != nil {
		fail(err)
	}
	if err := mcpservers.Classify(ctx, db, actor, "shop", "lookup_order", mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
		fail(err)
	}
	var secret string
	err = db.Transact(ctx, func(tx *store.Tx) error {
		tenant, err := tenants.Insert(ctx, tx, "bench", "Bench")
		if err != nil {
			return err
		}
		if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Month, LimitMicros: 1_000_000_000_000, AlertPercent: 100}, time.Now()); err != nil {
			return err
		}
		_, s, err := keys.Create(ctx, tx, sealer, keys.NewSpec{TenantID: tenant.ID, Name: "mcpload", Scopes: []string{"mcp:shop/*"},
			RatePerMin: 600000, Burst: 10000, CreatedBy: "cli"})
		secret = s.Key
		return err
	})
	if err != nil {
		fail(err)
	}
	fmt.Println(secret)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mcpload setup:", err)
	os.Exit(1)
}

// Command chatload measures chat-completion gateways side by side, for
// bench/portkey/run.sh. It sends the same open-loop load (a fixed rate of
// non-streaming POST /v1/chat/completions) to each target in turn and
// prints p50 and p99 latency per target and rate, and each gateway's
// overhead: its percentile minus the first target's (the upstream alone).
// It only talks to loopback addresses and runs for a bounded time.
// "-op name=responses" (or embeddings) sends target name the same request
// as a POST /v1/responses (or /v1/embeddings) instead, for comparing
// Warden's model doors in one run.
//
//	chatload -target 'fake=http://127.0.0.1:8090/v1' \
//	         -target 'warden=http://127.0.0.1:8080/v1|Authorization: Bearer wk_...' \
//	         -rates 500,1000 -duration 15s
//
// "chatload setup -data DIR -upstream URL" prepares a fresh Warden data
// directory before Warden starts: a tenant "bench" with a large budget, a
// deployment (alias "bench") at the upstream, and a key for it, printed on
// stdout. It writes what an admin would add in the console, directly into
// the database, since the bench must not depend on signing in.
package main

import (
	"bytes"
	"context"
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

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/bench/internal/procstat"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

type targets []target

type target struct {
	name, base, url string
	op              string // chat, responses or embeddings
	header          http.Header
}

// bodies are the request each operation sends, and what its answer
// holds.
var bodies = map[string]struct {
	body func(model string) []byte
	ok   []byte
	path string
}{
	"chat": {func(m string) []byte {
		return []byte(`{"model":` + strconv.Quote(m) + `,"messages":[{"role":"user","content":"Where is my order ORD-1003? It was due on Monday."}],"max_tokens":32}`)
	}, []byte(`"choices"`), "/chat/completions"},
	"responses": {func(m string) []byte {
		return []byte(`{"model":` + strconv.Quote(m) + `,"input":"Where is my order ORD-1003? It was due on Monday.","max_output_tokens":32,"store":false}`)
	}, []byte(`"output"`), "/responses"},
	"embeddings": {func(m string) []byte {
		return []byte(`{"model":` + strconv.Quote(m) + `,"input":"Where is my order ORD-1003? It was due on Monday."}`)
	}, []byte(`"embedding"`), "/embeddings"},
}

func (t *targets) String() string { return fmt.Sprint(len(*t)) }

// Set parses "name=URL|Header: value|Header: value".
func (t *targets) Set(s string) error {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=URL[|Header: value...], got %q", s)
	}
	parts := strings.Split(rest, "|")
	u, err := url.Parse(parts[0])
	if err != nil || !isLoopback(u.Hostname()) {
		return fmt.Errorf("%s: %q is not a loopback URL", name, parts[0])
	}
	h := http.Header{"Content-Type": {"application/json"}}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, ":")
		if !ok {
			return fmt.Errorf("%s: header %q is not Name: value", name, p)
		}
		h.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	*t = append(*t, target{name: name, base: strings.TrimRight(parts[0], "/"), op: "chat", header: h})
	return nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "setup" {
		setup(os.Args[2:])
		return
	}
	var ts targets
	flag.Var(&ts, "target", "name=BASE_URL[|Header: value...]; repeat; the first is the baseline (the upstream alone)")
	rates := flag.String("rates", "500,1000", "requests per second, comma separated")
	duration := flag.Duration("duration", 15*time.Second, "how long each target receives each rate (at most 2m)")
	warmup := flag.Duration("warmup", 2*time.Second, "load at the first rate before measuring each target, not counted")
	model := flag.String("model", "bench", "the model field of each request")
	inflight := flag.Int("inflight", 2000, "most requests in flight; a send beyond it is counted as dropped")
	ops := opFlag{}
	flag.Var(ops, "op", "name=chat|responses|embeddings: the operation target name receives (default chat); repeat")
	pids := procstat.PIDs{}
	flag.Var(pids, "pid", "name=PID: report the CPU time process PID (Linux) spent per answered call of target name; repeat")
	flag.Parse()
	if len(ts) == 0 {
		fmt.Fprintln(os.Stderr, "chatload: at least one -target")
		os.Exit(2)
	}
	d := min(*duration, 2*time.Minute)
	for i := range ts {
		if op, ok := ops[ts[i].name]; ok {
			ts[i].op = op
		}
		ts[i].url = ts[i].base + bodies[ts[i].op].path
	}
	// Idle connections close after 4 s, before Node's server closes them
	// (its keep-alive timeout is 5 s): a request sent on a connection the
	// server is closing would fail with a reset that is not the gateway's.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConns: *inflight, MaxIdleConnsPerHost: *inflight, MaxConnsPerHost: *inflight, IdleConnTimeout: 4 * time.Second}}

	var rs []int
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 || r > 20000 {
			fmt.Fprintf(os.Stderr, "chatload: bad rate %q\n", f)
			os.Exit(2)
		}
		rs = append(rs, r)
	}
	fmt.Printf("%-18s %7s %7s %7s %7s %7s %9s %9s %12s %12s %10s\n", "target", "rate/s", "sent", "ok", "errors", "dropped", "p50", "p99", "overhead50", "overhead99", "cpu/call")
	for _, rate := range rs {
		var base result
		for i, t := range ts {
			if *warmup > 0 {
				runRate(client, t, bodies[t.op].body(*model), rs[0], *warmup, *inflight)
			}
			cpu0, cpuOK := procstat.CPUTime(pids[t.name])
			r := runRate(client, t, bodies[t.op].body(*model), rate, d, *inflight)
			cpu1, _ := procstat.CPUTime(pids[t.name])
			perCall := ""
			if cpuOK && r.ok > 0 {
				perCall = ms((cpu1 - cpu0) / time.Duration(r.ok))
			}
			over50, over99 := "", ""
			if i == 0 {
				base = r
			} else {
				over50, over99 = ms(r.p50-base.p50), ms(r.p99-base.p99)
			}
			fmt.Printf("%-18s %7d %7d %7d %7d %7d %9s %9s %12s %12s %10s\n", t.name, rate, r.sent, r.ok, r.errors, r.dropped, ms(r.p50), ms(r.p99), over50, over99, perCall)
			if r.firstErr != "" {
				fmt.Printf("         first error: %s\n", r.firstErr)
			}
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// opFlag maps a target's name to its operation (a key of bodies).
type opFlag map[string]string

func (o opFlag) String() string { return fmt.Sprint(map[string]string(o)) }

func (o opFlag) Set(s string) error {
	name, op, _ := strings.Cut(s, "=")
	if _, ok := bodies[op]; !ok || name == "" {
		return fmt.Errorf("want name=chat|responses|embeddings, got %q", s)
	}
	o[name] = op
	return nil
}

type result struct {
	sent, ok, errors, dropped int
	p50, p99                  time.Duration
	firstErr                  string
}

// runRate sends at a fixed rate (open loop: a slow answer does not slow the
// sender) with at most inflight requests in flight. Latency is measured
// from the scheduled send time, so queueing in the sender counts too.
func runRate(c *http.Client, t target, body []byte, rate int, d time.Duration, inflight int) result {
	var (
		mu  sync.Mutex
		lat []time.Duration
		res result
		wg  sync.WaitGroup
	)
	sem := make(chan struct{}, inflight)
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	n := int(d / interval)
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * interval)
		if wait := time.Until(at); wait > 0 {
			time.Sleep(wait)
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
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, t.url, bytes.NewReader(body))
			req.Header = t.header.Clone()
			resp, err := c.Do(req)
			var status int
			var snippet []byte
			if err == nil {
				snippet, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				status = resp.StatusCode
			}
			took := time.Since(at)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && status == http.StatusOK && bytes.Contains(snippet, bodies[t.op].ok):
				res.ok++
				lat = append(lat, took)
			default:
				res.errors++
				if res.firstErr == "" {
					if err != nil {
						res.firstErr = err.Error()
					} else {
						res.firstErr = fmt.Sprintf("%d %s", status, bytes.TrimSpace(snippet[:min(len(snippet), 300)]))
					}
				}
			}
		}()
	}
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
	fs := flag.NewFlagSet("chatload setup", flag.ExitOnError)
	dir := fs.String("data", "", "Warden's data directory (before Warden starts)")
	upstream := fs.String("upstream", "", "the upstream's base URL, such as http://127.0.0.1:8090/v1")
	_ = fs.Parse(args)
	if *dir == "" || *upstream == "" {
		fmt.Fprintln(os.Stderr, "usage: chatload setup -data DIR -upstream URL")
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
	// The fake upstream usually listens on loopback, which the gateway
	// refuses unless its host is listed.
	if u, err := url.Parse(*upstream); err == nil {
		if _, err := models.AllowHosts(ctx, db, actor, u.Hostname()); err != nil {
			fail(err)
		}
	}
	if _, err := models.Create(ctx, db, sealer, actor, models.Deployment{Name: "bench", Alias: "bench", BaseURL: *upstream, UpstreamModel: "fake",
		InputMicrosPerM: 150_000, OutputMicrosPerM: 600_000, ContextWindow: 128_000, MaxOutputTokens: 64, Timeout: 10 * time.Second,
		Concurrency: 10000, Enabled: true}, "sk-bench"); err != nil {
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
		_, s, err := keys.Create(ctx, tx, sealer, keys.NewSpec{TenantID: tenant.ID, Name: "chatload", Scopes: []string{"model:bench"},
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
	fmt.Fprintln(os.Stderr, "chatload setup:", err)
	os.Exit(1)
}

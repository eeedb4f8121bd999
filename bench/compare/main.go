// Command compare measures, in one run on one machine, what a request
// costs Warden next to the floor of the machine: a minimal HTTP handler
// doing one SQLite write transaction per request (bench/compare/minimal),
// Warden's demo read journey (POST /v1/journeys, "Where is my order
// ORD-1003?"), Warden's model gateway (POST /v1/chat/completions to a fake
// upstream, with a virtual key, the budget reservation and settlement and
// the model-call record) and, when it is installed, the Portkey gateway
// in front of the same fake upstream.
//
//	go run ./bench/compare                          # SQLite
//	go run ./bench/compare -postgres 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
//
// The servers run pinned to one core (taskset -c 0), the load generator
// (this process) and the fake upstream to the other. For each target it
// prints the CPU time the server process spent per answered request
// (from /proc), the saturation throughput (a closed loop of -workers
// concurrent requests) and p50/p99 latency at fixed rates (open loop,
// measured from each request's scheduled time), and each as a ratio to
// the minimal handler's. With -postgres, Warden's targets run on SQLite
// and again on a fresh database on that server, and the PostgreSQL
// rows add the server's own CPU (every process named postgres) and the
// PostgreSQL/SQLite ratios. Everything listens on loopback; everything it
// starts is stopped when it ends. See docs/performance.md.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

var (
	rates      = flag.String("rates", "200,500", "fixed request rates for p50/p99, comma separated")
	duration   = flag.Duration("duration", 8*time.Second, "how long each rate and the saturation run last")
	warmup     = flag.Duration("warmup", 2*time.Second, "load before measuring each target, not counted")
	workers    = flag.Int("workers", 32, "concurrent requests of the saturation run")
	postgres   = flag.String("postgres", "", "a PostgreSQL server URL: also run Warden's targets on a fresh database there")
	wardenBin  = flag.String("warden", "", "a prebuilt warden binary to measure (default: build ./cmd/warden)")
	only       = flag.String("only", "", "comma separated target names to run (default all)")
	serverCore = flag.Int("server-core", 0, "the core the servers are pinned to")
	loadCore   = flag.Int("load-core", 1, "the core the load generator and the fake upstream are pinned to")
)

type target struct {
	name    string
	url     string
	body    []byte
	header  http.Header
	pid     int
	dbPIDs  func() []int // the database server's processes (PostgreSQL)
	engine  string
	kind    string // minimal, journey, gateway, portkey
	results result
}

type result struct {
	cpuPerReq time.Duration // server CPU per answered request, at saturation
	dbPerReq  time.Duration
	sat       float64 // answered per second at saturation
	satErrors int
	firstErr  string
	rates     []rateResult
	cpuAtRate time.Duration // at the first fixed rate
	skipped   string
}

type rateResult struct {
	rate, ok, errors int
	p50, p99         time.Duration
}

func main() {
	flag.Parse()
	ctx := context.Background()
	var err error
	work, err = os.MkdirTemp("", "warden-compare-")
	must(err)
	defer cleanup()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cleanup()
		os.Exit(1)
	}()
	pinned := pinSelf()

	bin := func(name, pkg string) string {
		out := filepath.Join(work, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		must(cmd.Run())
		return out
	}
	warden := *wardenBin
	if warden == "" {
		warden = bin("warden", "./cmd/warden")
	}
	fake := bin("fakeupstream", "./cmd/fakeupstream")
	minimal := bin("minimal", "./bench/compare/minimal")

	start := func(core int, env []string, logName string, name string, args ...string) *exec.Cmd {
		var cmd *exec.Cmd
		if pinned {
			cmd = exec.Command("taskset", append([]string{"-c", strconv.Itoa(core), name}, args...)...)
		} else {
			cmd = exec.Command(name, args...)
		}
		cmd.Env = append(os.Environ(), env...)
		f, err := os.Create(filepath.Join(work, logName))
		must(err)
		cmd.Stdout, cmd.Stderr = f, f
		must(cmd.Start())
		procsMu.Lock()
		procs = append(procs, cmd)
		procsMu.Unlock()
		return cmd
	}
	up := func(u, logName string) {
		for range 300 {
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		b, _ := os.ReadFile(filepath.Join(work, logName))
		fail(fmt.Errorf("%s did not start; its log:\n%s", u, b))
	}

	fakeURL := "http://127.0.0.1:18190/v1"
	start(*loadCore, nil, "fake.log", fake, "-addr", "127.0.0.1:18190")
	up(fakeURL+"/models", "fake.log")

	var ts []*target
	want := func(name string) bool {
		return *only == "" || slices.Contains(strings.Split(*only, ","), name)
	}

	// The floor.
	m := start(*serverCore, nil, "minimal.log", minimal, "-addr", "127.0.0.1:18170", "-db", filepath.Join(work, "minimal.db"))
	up("http://127.0.0.1:18170/", "minimal.log")
	ts = append(ts, &target{name: "minimal", kind: "minimal", engine: "sqlite", url: "http://127.0.0.1:18170/write", pid: m.Process.Pid,
		body: []byte(`{"input":"Where is my order ORD-1003?"}`), header: http.Header{"Content-Type": {"application/json"}}})

	engines := []string{"sqlite"}
	if *postgres != "" {
		engines = append(engines, "postgres")
	}
	for i, engine := range engines {
		dataDir := filepath.Join(work, "data-"+engine)
		must(os.MkdirAll(dataDir, 0o700))
		env := []string{"WARDEN_DATA_DIR=" + dataDir, "WARDEN_API_MAX_INFLIGHT=100000", "WARDEN_TENANT_RATE=1000000"}
		dbURL := filepath.Join(dataDir, "warden.db")
		var dbPIDs func() []int
		if engine == "postgres" {
			dbURL = freshPostgres(ctx, *postgres)
			env = append(env, "WARDEN_DATABASE_URL="+dbURL)
			dbPIDs = postgresPIDs
		}
		port := 18180 + i
		addr := "127.0.0.1:" + strconv.Itoa(port)
		// A first start seeds the demo (into an empty database only),
		// then the gateway's deployment, tenant and key are added with
		// Warden stopped, and it starts again.
		w := start(*serverCore, append(env, "WARDEN_ADDR="+addr), "warden-"+engine+"-seed.log", warden, "serve")
		up("http://"+addr+"/healthz", "warden-"+engine+"-seed.log")
		journeyKey := createKey(warden, env)
		stop(w)
		chatKey := setupGateway(ctx, dataDir, dbURL, fakeURL)
		w = start(*serverCore, append(env, "WARDEN_ADDR="+addr), "warden-"+engine+".log", warden, "serve")
		up("http://"+addr+"/healthz", "warden-"+engine+".log")
		base := "http://" + addr
		ts = append(ts,
			&target{name: "journey-" + engine, kind: "journey", engine: engine, url: base + "/v1/journeys", pid: w.Process.Pid, dbPIDs: dbPIDs,
				body:   []byte(`{"input":"Where is my order ORD-1003?"}`),
				header: http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + journeyKey}}},
			&target{name: "gateway-" + engine, kind: "gateway", engine: engine, url: base + "/v1/chat/completions", pid: w.Process.Pid, dbPIDs: dbPIDs,
				body:   []byte(`{"model":"bench","messages":[{"role":"user","content":"Where is my order ORD-1003? It was due on Monday."}],"max_tokens":32}`),
				header: http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + chatKey}}})
	}

	pk := &target{name: "portkey", kind: "portkey", engine: "-", url: "http://127.0.0.1:18787/v1/chat/completions",
		body: []byte(`{"model":"bench","messages":[{"role":"user","content":"Where is my order ORD-1003? It was due on Monday."}],"max_tokens":32}`),
		header: http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer sk-bench"},
			"X-Portkey-Provider": {"openai"}, "X-Portkey-Custom-Host": {fakeURL}}}
	gw := "bench/portkey/node_modules/@portkey-ai/gateway/build/start-server.js"
	if _, err := os.Stat(gw); err != nil || !want("portkey") {
		pk.results.skipped = "not installed (npm ci --prefix bench/portkey)"
	} else if node, err := exec.LookPath("node"); err != nil {
		pk.results.skipped = "no node"
	} else {
		p := start(*serverCore, nil, "portkey.log", node, gw, "--port=18787", "--headless")
		up("http://127.0.0.1:18787/", "portkey.log")
		pk.pid = p.Process.Pid
	}
	ts = append(ts, pk)

	rs := parseRates(*rates)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConns: 4000, MaxIdleConnsPerHost: 4000, IdleConnTimeout: 4 * time.Second}}
	rev, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	fmt.Printf("warden %s, %d cores, pinned=%v, load average %s\n", strings.TrimSpace(string(rev)), runtime.NumCPU(), pinned, loadavg())
	for _, t := range ts {
		if t.results.skipped != "" || !want(t.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "measuring %s...\n", t.name)
		measure(client, t, rs)
	}
	fmt.Printf("load average after %s\n\n", loadavg())
	report(ts, rs)
}

// measure runs a target: warm-up, a saturation run, then each fixed rate.
func measure(c *http.Client, t *target, rs []int) {
	settle(t.pid)
	closedLoop(c, t, *warmup)
	cpu0, _ := procstat.CPUTime(t.pid)
	db0 := cpuOf(t.dbPIDs)
	ok, errs, first, el := closedLoop(c, t, *duration)
	cpu1, _ := procstat.CPUTime(t.pid)
	dbUsed := cpuSince(t.dbPIDs, db0)
	t.results.sat = float64(ok) / el.Seconds()
	t.results.satErrors = errs
	t.results.firstErr = first
	if ok >= 50 { // fewer answers say nothing about a request's cost
		t.results.cpuPerReq = (cpu1 - cpu0) / time.Duration(ok)
		t.results.dbPerReq = dbUsed / time.Duration(ok)
	}
	for i, rate := range rs {
		settle(t.pid)
		cpu0, _ := procstat.CPUTime(t.pid)
		r := openLoop(c, t, rate, *duration)
		cpu1, _ := procstat.CPUTime(t.pid)
		if i == 0 && r.ok > 0 {
			t.results.cpuAtRate = (cpu1 - cpu0) / time.Duration(r.ok)
		}
		t.results.rates = append(t.results.rates, r)
	}
}

func send(c *http.Client, t *target) (bool, string) {
	req, _ := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(t.body))
	req.Header = t.header.Clone()
	resp, err := c.Do(req)
	if err != nil {
		return false, err.Error()
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return false, fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(b[:min(len(b), 300)]))
	}
	return true, ""
}

// closedLoop keeps -workers requests in flight for d.
func closedLoop(c *http.Client, t *target, d time.Duration) (ok, errs int, first string, elapsed time.Duration) {
	var nOK, nErr atomic.Int64
	var once sync.Once
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				if good, msg := send(c, t); good {
					nOK.Add(1)
				} else {
					nErr.Add(1)
					once.Do(func() { first = msg })
				}
			}
		}()
	}
	wg.Wait()
	return int(nOK.Load()), int(nErr.Load()), first, time.Since(start)
}

// openLoop sends at a fixed rate, whatever the answers take; latency is
// measured from each request's scheduled time.
func openLoop(c *http.Client, t *target, rate int, d time.Duration) rateResult {
	var mu sync.Mutex
	var lat []time.Duration
	res := rateResult{rate: rate}
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4000)
	for i := 0; i < int(d/interval); i++ {
		at := start.Add(time.Duration(i) * interval)
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		select {
		case sem <- struct{}{}:
		default:
			res.errors++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			good, _ := send(c, t)
			took := time.Since(at)
			mu.Lock()
			defer mu.Unlock()
			if good {
				res.ok++
				lat = append(lat, took)
			} else {
				res.errors++
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

func report(ts []*target, rs []int) {
	var floor *target
	for _, t := range ts {
		if t.kind == "minimal" && t.results.sat > 0 {
			floor = t
		}
	}
	ratio := func(a, b float64) string {
		if a == 0 || b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	fmt.Printf("%-17s %10s %10s %8s %10s %8s %8s", "target", "cpu µs/req", "at rate", "× floor", "sat req/s", "× floor", "errors")
	for _, r := range rs {
		fmt.Printf(" %17s", fmt.Sprintf("p50/p99 @%d", r))
	}
	fmt.Println()
	for _, t := range ts {
		r := t.results
		if r.skipped != "" {
			fmt.Printf("%-17s skipped: %s\n", t.name, r.skipped)
			continue
		}
		if r.sat == 0 && len(r.rates) == 0 {
			continue
		}
		var fc, fs float64
		if floor != nil {
			fc, fs = float64(floor.results.cpuPerReq), floor.results.sat
		}
		cpu := fmt.Sprintf("%d", r.cpuPerReq.Microseconds())
		if t.dbPIDs != nil {
			cpu = fmt.Sprintf("%d+%d", r.cpuPerReq.Microseconds(), r.dbPerReq.Microseconds())
		}
		fmt.Printf("%-17s %10s %10d %8s %10.0f %8s %8d", t.name, cpu, r.cpuAtRate.Microseconds(),
			ratio(float64(r.cpuPerReq+r.dbPerReq), fc), r.sat, ratio(r.sat, fs), r.satErrors)
		for _, x := range r.rates {
			s := fmt.Sprintf("%.2f/%.2fms", ms(x.p50), ms(x.p99))
			if x.errors > 0 {
				s += fmt.Sprintf("!%d", x.errors)
			}
			fmt.Printf(" %17s", s)
		}
		fmt.Println()
		if r.firstErr != "" {
			fmt.Printf("%-17s first error: %s\n", "", r.firstErr)
		}
	}
	// Ratios between Warden's targets: the gateway to Portkey, PostgreSQL
	// to SQLite.
	by := map[string]*target{}
	for _, t := range ts {
		by[t.name] = t
	}
	fmt.Println()
	totalCPU := func(t *target) float64 { return float64(t.results.cpuPerReq + t.results.dbPerReq) }
	if pk, gw := by["portkey"], by["gateway-sqlite"]; pk != nil && gw != nil && pk.results.sat > 0 && gw.results.sat > 0 {
		fmt.Printf("gateway/portkey: cpu %s, saturation %s\n", ratio(totalCPU(gw), totalCPU(pk)), ratio(gw.results.sat, pk.results.sat))
	}
	for _, k := range []string{"journey", "gateway"} {
		s, p := by[k+"-sqlite"], by[k+"-postgres"]
		if s != nil && p != nil && s.results.sat > 0 && p.results.sat > 0 {
			fmt.Printf("%s postgres/sqlite: saturation %s, cpu (warden+postgres) %s\n", k, ratio(p.results.sat, s.results.sat), ratio(totalCPU(p), totalCPU(s)))
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// setupGateway prepares Warden's database before it starts, as an admin
// would in the console: the fake upstream allowed and deployed as
// "bench", a tenant "bench" with a large budget and a key for the model.
func setupGateway(ctx context.Context, dataDir, dbURL, upstream string) string {
	db, err := store.OpenURL(ctx, dbURL, store.Options{DataDir: dataDir})
	must(err)
	defer db.Close()
	sealer, err := seal.LoadOrCreate(dataDir)
	must(err)
	actor := audit.Actor{Type: audit.ActorSystem, ID: "bench-setup"}
	u, _ := url.Parse(upstream)
	_, err = models.AllowHosts(ctx, db, actor, u.Hostname())
	must(err)
	_, err = models.Create(ctx, db, sealer, actor, models.Deployment{Name: "bench", Alias: "bench", BaseURL: upstream, UpstreamModel: "fake",
		InputMicrosPerM: 150_000, OutputMicrosPerM: 600_000, ContextWindow: 128_000, MaxOutputTokens: 64, Timeout: 10 * time.Second,
		Concurrency: 10000, Enabled: true}, "sk-bench")
	must(err)
	var secret string
	must(db.Transact(ctx, func(tx *store.Tx) error {
		tenant, err := tenants.Insert(ctx, tx, "bench", "Bench")
		if err != nil {
			return err
		}
		if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Month, LimitMicros: 1_000_000_000_000, AlertPercent: 100}, time.Now()); err != nil {
			return err
		}
		_, s, err := keys.Create(ctx, tx, sealer, keys.NewSpec{TenantID: tenant.ID, Name: "compare", Scopes: []string{"model:bench"},
			RatePerMin: 600_000, Burst: 10_000, CreatedBy: "cli"})
		secret = s.Key
		return err
	}))
	return secret
}

// createKey makes the journey key with the CLI, once the demo data exists
// (the server seeds it as it starts: the CLI is tried for up to 30 s).
func createKey(warden string, env []string) string {
	var msg []byte
	for range 60 {
		cmd := exec.Command(warden, "keys", "create", "--tenant", "acme", "--name", "compare",
			"--scopes", "skill:order_status,tool:lookup_order", "--rate-per-min", "600000", "--burst", "10000")
		cmd.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err == nil {
			for _, f := range strings.Fields(out.String()) {
				if strings.HasPrefix(f, "wk_") {
					return f
				}
			}
		}
		msg = append(out.Bytes(), errb.Bytes()...)
		time.Sleep(500 * time.Millisecond)
	}
	fail(fmt.Errorf("warden keys create: %s", msg))
	return ""
}

// freshPostgres creates a database of its own on server and returns its URL.
func freshPostgres(ctx context.Context, server string) string {
	u, err := url.Parse(server)
	must(err)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "warden_compare_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", server)
	must(err)
	defer admin.Close()
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	must(err)
	u.Path = "/" + name
	return u.String()
}

// postgresPIDs are the processes named postgres (the server on this
// machine: its CPU per request counts too).
func postgresPIDs() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/comm"); err == nil && strings.TrimSpace(string(b)) == "postgres" {
			out = append(out, pid)
		}
	}
	return out
}

// cpuOf snapshots the CPU time of each of pids' processes.
func cpuOf(pids func() []int) map[int]time.Duration {
	if pids == nil {
		return nil
	}
	out := map[int]time.Duration{}
	for _, p := range pids() {
		if c, ok := procstat.CPUTime(p); ok {
			out[p] = c
		}
	}
	return out
}

// cpuSince is the CPU time pids' processes spent since snapshot before:
// a process that ended meanwhile (a closed connection's backend) counts
// what it spent up to the second snapshot only when it is still there, so
// the sum never goes negative; a new one counts whole.
func cpuSince(pids func() []int, before map[int]time.Duration) time.Duration {
	var sum time.Duration
	for p, c := range cpuOf(pids) {
		sum += c - before[p]
	}
	return sum
}

// settle waits, up to 20 s, until pid is idle (under 10% of a core over
// half a second): a backlog the previous target left in a server it
// shares with the next one is not counted against the next.
func settle(pid int) {
	for range 40 {
		c0, ok := procstat.CPUTime(pid)
		if !ok {
			return
		}
		time.Sleep(500 * time.Millisecond)
		c1, _ := procstat.CPUTime(pid)
		if c1-c0 < 50*time.Millisecond {
			return
		}
	}
}

// pinSelf moves this process to -load-core, when taskset and two cores
// are there; it reports whether the servers can be pinned too.
func pinSelf() bool {
	if runtime.NumCPU() < 2 {
		return false
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return false
	}
	return exec.Command("taskset", "-a", "-p", "-c", strconv.Itoa(*loadCore), strconv.Itoa(os.Getpid())).Run() == nil
}

func parseRates(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 || r > 20000 {
			fail(fmt.Errorf("bad rate %q", f))
		}
		out = append(out, r)
	}
	return out
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// The processes this run started and its scratch folder, removed at the
// end (also on a failure or an interrupt).
var (
	work    string
	procsMu sync.Mutex
	procs   []*exec.Cmd
)

// stop ends one process the run started, cleanly (SIGTERM).
func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	procsMu.Lock()
	procs = slices.DeleteFunc(procs, func(c *exec.Cmd) bool { return c == cmd })
	procsMu.Unlock()
}

func cleanup() {
	procsMu.Lock()
	defer procsMu.Unlock()
	for _, p := range procs {
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	procs = nil
	if work != "" {
		os.RemoveAll(work)
	}
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compare:", err)
	cleanup()
	os.Exit(1)
}

// Command replicas measures journey reads (GET /v1/journeys/{id}) on real
// warden serve processes: one on SQLite, one on PostgreSQL, and two on
// the same PostgreSQL database with the load spread over both, in one run
// on one machine. It prints reads/s, p50 and p99 for each.
//
//	go build -o /tmp/warden ./cmd/warden
//	go run ./bench/replicas -warden /tmp/warden -pg 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

var (
	wardenBin   = flag.String("warden", "warden", "the warden binary")
	pgURL       = flag.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server (a database is created and dropped)")
	duration    = flag.Duration("duration", 10*time.Second, "how long each case reads")
	concurrency = flag.Int("c", 16, "concurrent readers")
	journeys    = flag.Int("journeys", 200, "journeys seeded before reading")
)

var (
	listeningRe = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	demoKeyRe   = regexp.MustCompile(`wk_[a-z0-9]+_[a-z0-9]+`)
)

type proc struct {
	cmd     *exec.Cmd
	url     string
	demoKey string
}

func hexKey() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// shared are the settings every replica of one installation shares.
var shared = []string{
	"WARDEN_SEALING_KEY=" + hexKey(), "WARDEN_REDACTION_KEY=" + hexKey(), "WARDEN_AUDIT_SIGNING_KEY=" + hexKey(),
	"WARDEN_SESSION_HASH_KEY=" + hexKey(), "WARDEN_SESSION_BLOCK_KEY=" + hexKey(),
	"WARDEN_TENANT_RATE=1000000", "WARDEN_API_MAX_INFLIGHT=10000", "WARDEN_DB_MAX_CONNS=10",
}

func start(dataDir string, env ...string) *proc {
	cmd := exec.Command(*wardenBin, "serve")
	cmd.Env = append(append(append(os.Environ(), "WARDEN_ADDR=127.0.0.1:0", "WARDEN_DATA_DIR="+dataDir), shared...), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	p := &proc{cmd: cmd}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := demoKeyRe.FindString(sc.Text()); m != "" {
				p.demoKey = m
				close(ready)
			}
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				p.url = m[1]
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		log.Fatalf("warden did not start:\n%s", logs.String())
	}
	return p
}

func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
}

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

func seed(p *proc, n int) []string {
	inputs := []string{"Where is my order ORD-1003?", "What's the status of order ORD-1002?", "The customer was charged twice for ORD-1005, refund $45.50 please"}
	var ids []string
	for i := 0; i < n; {
		body, _ := json.Marshal(map[string]string{"input": inputs[i%len(inputs)]})
		req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/journeys", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.demoKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		var j struct{ ID string }
		json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if j.ID == "" {
			log.Fatalf("POST /v1/journeys = %d", resp.StatusCode)
		}
		ids = append(ids, j.ID)
		i++
	}
	return ids
}

// readerKey creates a key that reads the whole tenant at a rate the
// benchmark does not reach, with warden keys create.
func readerKey(dataDir string, env ...string) string {
	cmd := exec.Command(*wardenBin, "keys", "create", "--tenant", "acme", "--name", "bench reader", "--scopes", "read:tenant",
		"--rate-per-min", "600000", "--burst", "10000")
	cmd.Env = append(append(append(os.Environ(), "WARDEN_DATA_DIR="+dataDir), shared...), env...)
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("keys create: %v", err)
	}
	return strings.SplitN(string(out), "\n", 2)[0]
}

type result struct {
	name          string
	reads, errors int
	perSec        float64
	p50, p99      time.Duration
}

func load(name string, urls []string, key string, ids []string) result {
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	deadline := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for w := range *concurrency {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for i := w; time.Now().Before(deadline); i++ {
				u := urls[i%len(urls)] + "/v1/journeys/" + ids[(i*7919)%len(ids)]
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					bad++
					continue
				}
				var sink bytes.Buffer
				sink.ReadFrom(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	r := result{name: name, reads: len(lat), errors: errs, perSec: float64(len(lat)) / duration.Seconds()}
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	log.Printf("%s: %d reads, %.0f/s, p50 %v, p99 %v, %d errors", name, r.reads, r.perSec, r.p50, r.p99, r.errors)
	return r
}

func main() {
	flag.Parse()
	tmp, err := os.MkdirTemp("", "warden-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	var results []result

	// SQLite, one process.
	s := start(filepath.Join(tmp, "sqlite"))
	ids := seed(s, *journeys)
	key := readerKey(filepath.Join(tmp, "sqlite"))
	results = append(results, load("SQLite, 1 replica", []string{s.url}, key, ids))
	s.stop()

	// PostgreSQL: a database of its own.
	admin, err := sql.Open("pgx", *pgURL)
	if err != nil {
		log.Fatal(err)
	}
	name := "warden_bench_" + hexKey()[:8]
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		log.Fatal(err)
	}
	defer admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	u, _ := url.Parse(*pgURL)
	u.Path = "/" + name
	dbEnv := "WARDEN_DATABASE_URL=" + u.String()

	r1 := start(filepath.Join(tmp, "pg1"), dbEnv)
	ids = seed(r1, *journeys)
	key = readerKey(filepath.Join(tmp, "pg1"), dbEnv)
	results = append(results, load("PostgreSQL, 1 replica", []string{r1.url}, key, ids))
	r2 := start(filepath.Join(tmp, "pg2"), dbEnv)
	results = append(results, load("PostgreSQL, 2 replicas", []string{r1.url, r2.url}, key, ids))
	r2.stop()
	r1.stop()

	fmt.Printf("\n%d concurrent readers, %v per case, %d journeys, GET /v1/journeys/{id}\n\n", *concurrency, *duration, *journeys)
	fmt.Println("| Case | Reads/s | p50 | p99 | Errors |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %.1f ms | %.1f ms | %d |\n", r.name, r.perSec, ms(r.p50), ms(r.p99), r.errors)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

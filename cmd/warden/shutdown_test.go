package main

import (
	"database/sql"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// TestSIGTERMEndsTheReplicasRunningJourneys: a real warden serve (on
// SQLite, or on PostgreSQL under storetest) has a journey of its own left
// running with budget reserved — what a disconnect used to leave on
// PostgreSQL: a journey whose admission committed although the client's
// hang-up made its COMMIT report an error, run by nobody. The periodic
// sweep leaves a live replica's journeys alone for 15 minutes. A clean
// shutdown (SIGTERM) ends it and gives its reservation back, so that
// nothing waits for the next start's sweep.
func TestSIGTERMEndsTheReplicasRunningJourneys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var env []string
	driver, dsn, ph := "sqlite", "file:"+filepath.Join(dir, "warden.db")+"?_pragma=busy_timeout(10000)", func(s string) string { return s }
	if storetest.Postgres() {
		dsn = storetest.URL(t)
		env = append(env, "WARDEN_DATABASE_URL="+dsn, "WARDEN_DB_MAX_CONNS=5")
		driver, ph = "pgx", pgPlaceholders
	}
	p := startProcess(t, dir, env...)
	waitReady(t, p)
	p.demoKey(t)
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// A journey that ran normally first: the process is serving.
	client := &http.Client{Timeout: 10 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/journeys", strings.NewReader(`{"input": "Where is my order ORD-1003?"}`))
	req.Header.Set("Authorization", "Bearer "+p.demoKey(t))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("journey: %d, want 200\n%s", resp.StatusCode, p.logs)
	}

	var tenant, key, replica string
	var reservedBefore int64
	if err := db.QueryRow(`SELECT id FROM tenants WHERE slug = 'acme'`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT id FROM virtual_keys WHERE tenant_id = `+ph("?")+` LIMIT 1`, tenant).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT id FROM replicas ORDER BY started_at DESC LIMIT 1`).Scan(&replica); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT reserved_micros FROM budgets WHERE tenant_id = `+ph("?"), tenant).Scan(&reservedBefore); err != nil {
		t.Fatal(err)
	}
	const left, reserved = "jrn_leftrunning", 123456
	if _, err := db.Exec(ph(`INSERT INTO journeys (id, tenant_id, key_id, principal_id, request_id, correlation_id, skill, release_digest,
		status, input, input_tokens, reserved_micros, created_at, replica_id)
		VALUES (?, ?, ?, '', 'req_x', 'cor_x', '', '', 'running', 'Where is my order ORD-1003', 7, ?, ?, ?)`),
		left, tenant, key, reserved, store.FormatTime(time.Now()), replica); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ph(`UPDATE budgets SET reserved_micros = reserved_micros + ? WHERE tenant_id = ?`), reserved, tenant); err != nil {
		t.Fatal(err)
	}
	status := func() (s, code string) {
		if err := db.QueryRow(`SELECT status, error_code FROM journeys WHERE id = `+ph("?"), left).Scan(&s, &code); err != nil {
			t.Fatal(err)
		}
		return s, code
	}
	if s, _ := status(); s != "running" {
		t.Fatalf("the journey left running is %s before the shutdown; the test proves nothing", s)
	}

	p.stop(t)
	if s, code := status(); s != "failed" || code != "interrupted" {
		t.Errorf("after SIGTERM the journey left running is %s (%s), want failed (interrupted)\n%s", s, code, p.logs)
	}
	var reservedAfter int64
	if err := db.QueryRow(`SELECT reserved_micros FROM budgets WHERE tenant_id = `+ph("?"), tenant).Scan(&reservedAfter); err != nil {
		t.Fatal(err)
	}
	if reservedAfter != reservedBefore {
		t.Errorf("after SIGTERM %d micro-units are reserved, want %d (the journey's %d released)", reservedAfter, reservedBefore, reserved)
	}
	var running int
	db.QueryRow(`SELECT COUNT(*) FROM journeys WHERE status = 'running'`).Scan(&running)
	if running != 0 {
		t.Errorf("%d journeys still running after a clean shutdown, want 0", running)
	}
	if !strings.Contains(p.logs.String(), "journeys still running at shutdown were ended") {
		t.Errorf("the shutdown did not log the journeys it ended:\n%s", p.logs)
	}
}

// pgPlaceholders numbers a query's ? placeholders for PostgreSQL.
func pgPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
)

var migrateInputs = []string{
	"Where is my order ORD-1003?",
	"What's the status of order ORD-1002?",
	"Please change the delivery address for ORD-1001 to 22 Quay Street, Bristol BS1 4QA",
	"Refund order ORD-1004: the customer returned the desk and the chair, refund the full amount",
	"The customer was charged twice for ORD-1005, refund $45.50 please",
	"Refund ORD-1002, the t-shirts arrived torn",
}

// postJourney starts a journey through the agent API and returns its id.
func postJourney(t *testing.T, client *http.Client, base, key, input string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"input": input})
	var resp *http.Response
	// The demo key's rate: a refused request (429) is sent again until
	// the key's rate lets it in.
	admitted := wait.ForEvery(30*time.Second, 100*time.Millisecond, func() bool {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/journeys", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		var err error
		if resp, err = client.Do(req); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			return false
		}
		return true
	})
	if !admitted {
		t.Fatalf("POST /v1/journeys still 429 (Retry-After %s) after 30 s", resp.Header.Get("Retry-After"))
	}
	defer resp.Body.Close()
	var j struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&j); err != nil || j.ID == "" || resp.StatusCode >= 300 {
		t.Fatalf("POST /v1/journeys = %d, %+v, %v", resp.StatusCode, j, err)
	}
	return j.ID
}

// getJourney reads a journey through the agent API.
func getJourney(t *testing.T, client *http.Client, base, key, id string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/journeys/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var j map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&j); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/journeys/%s = %d, %v", id, resp.StatusCode, err)
	}
	return j
}

// tableRows is every row of table as text, sorted, for
// comparing the two engines' copies.
func tableRows(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, table string) []string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), `SELECT * FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%s=%v;", cols[i], v)
		}
		out = append(out, b.String())
	}
	// Sorted here: the engines' collations order text differently.
	sort.Strings(out)
	return out
}

// A SQLite installation with the demo data and a few hundred decisions
// (journeys run through a real warden serve, approvals given in its
// console, the audit chain signed at shutdown) moves to PostgreSQL: the
// chain verifies there with the same head, every table has the same rows,
// and a warden serve on the target serves the same journeys.
func TestMigrateStoreRoundTrip(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	p := startProcess(t, dir)
	key := p.demoKey(t)
	client := &http.Client{Timeout: 20 * time.Second}
	var ids []string
	for i := range 300 {
		ids = append(ids, postJourney(t, client, p.URL, key, migrateInputs[i%len(migrateInputs)]))
	}
	src := openRO(t, filepath.Join(dir, "warden.db"))
	pending, err := store.Strings(ctx, src, `SELECT id FROM actions WHERE status = 'pending' AND approvals_required = 1 ORDER BY id LIMIT 6`)
	if err != nil || len(pending) == 0 {
		t.Fatalf("pending actions = %v, %v; want some to approve", pending, err)
	}
	alice := signInHTTP(t, p.URL, "alice")
	for _, id := range pending {
		alice.approve(id)
	}
	waitFor(t, "the approved actions to finish", func() bool {
		var n int
		src.QueryRow(`SELECT COUNT(*) FROM actions WHERE id IN ('` + strings.Join(pending, "','") + `') AND status IN ('approved', 'executing')`).Scan(&n)
		return n == 0
	})
	p.stop(t)

	var events int
	src.QueryRow(`SELECT COUNT(*) FROM audit_events`).Scan(&events)
	var decisions int
	src.QueryRow(`SELECT COUNT(*) FROM decisions`).Scan(&decisions)
	if events < 150 || decisions == 0 {
		t.Fatalf("source has %d audit events and %d approval decisions; want a few hundred and some", events, decisions)
	}

	target := storetest.URL(t)
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"migrate-store", "--from", "sqlite:" + filepath.Join(dir, "warden.db"), "--to", target, "--batch", "50"}, envMap(nil), &out, &errb); code != 0 {
		t.Fatalf("migrate-store = %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("audit chain intact on the target: %d events", events)) || !strings.Contains(out.String(), "row counts match") {
		t.Errorf("migrate-store reported %q", out.String())
	}

	dst, err := store.OpenURL(ctx, target, store.Options{DataDir: dir, MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	for _, table := range []string{"journeys", "journey_steps", "actions", "decisions", "audit_events", "audit_checkpoints",
		"effects", "virtual_keys", "tenants", "principals", "sessions", "budgets", "jobs", "release_bundles", "release_pointers",
		"spend_totals", "top_journeys"} {
		want, got := tableRows(t, src, table), tableRows(t, dst.Read(), table)
		if len(want) == 0 && table != "budgets" {
			t.Errorf("source %s is empty: the test data does not exercise it", table)
		}
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Errorf("%s differs after the copy: %d rows in the source, %d on the target", table, len(want), len(got))
		}
	}

	// warden audit verify on the target, with the installation's key.
	pgEnv := envMap(map[string]string{"WARDEN_DATA_DIR": dir, "WARDEN_DATABASE_URL": target})
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"audit", "verify"}, pgEnv, &out, &errb); code != exitIntact || !strings.Contains(out.String(), "signed checkpoint") {
		t.Fatalf("audit verify on the target = %d: %s %s", code, out.String(), errb.String())
	}

	// Read the journeys back from the source before a server on the
	// target changes anything, then from a warden serve on the target.
	// A key that reads the whole tenant, made by warden keys create on
	// the target: the demo key the journeys ran under is revoked when
	// serve starts again.
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"keys", "create", "--tenant", "acme", "--name", "reader", "--scopes", "read:tenant"}, pgEnv, &out, &errb); code != 0 {
		t.Fatalf("keys create on the target = %d: %s", code, errb.String())
	}
	reader := strings.SplitN(out.String(), "\n", 2)[0]
	p2 := startProcess(t, dir, "WARDEN_DATABASE_URL="+target, "WARDEN_DB_MAX_CONNS=5")
	for _, id := range append(ids[:12:12], ids[len(ids)-6:]...) {
		j := getJourney(t, client, p2.URL, reader, id)
		var status, skill string
		src.QueryRow(`SELECT status, skill FROM journeys WHERE id = ?`, id).Scan(&status, &skill)
		if j["id"] != id || j["status"] != status || j["skill"] != skill {
			t.Errorf("journey %s on the target's server: %v %v %v; in the source %s %s", id, j["id"], j["status"], j["skill"], status, skill)
		}
	}
	for _, id := range pending {
		var journey, status string
		src.QueryRow(`SELECT journey_id, status FROM actions WHERE id = ?`, id).Scan(&journey, &status)
		j := getJourney(t, client, p2.URL, reader, journey)
		a, _ := j["action"].(map[string]any)
		if a == nil || a["id"] != id || a["status"] != status {
			t.Errorf("journey %s's action on the target's server: %v; in the source %s %s", journey, j["action"], id, status)
		}
	}
	key2 := p2.demoKey(t)
	// New rows get new ids: the sequences moved past the copied ones.
	postJourney(t, client, p2.URL, key2, migrateInputs[0])
	p2.stop(t)
}

// migrate-store refuses, changing nothing, a URL that is not PostgreSQL,
// a server it cannot reach, and a target that already holds rows.
func TestMigrateStoreRefusals(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "warden.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, "acme", "Acme"); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)

	// A target with one row in it.
	full := storetest.URL(t)
	fdb, err := store.OpenURL(ctx, full, store.Options{DataDir: dir, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer fdb.Close()
	if err := fdb.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, "other", "Other"); return err }); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string { return strings.Join(tableRows(t, fdb.Read(), "tenants"), "\n") }
	fullBefore := snapshot()

	for _, tc := range []struct {
		name, to, want string
	}{
		{"not postgres", "mysql://root@127.0.0.1/warden", "--to: want a postgres:// URL"},
		{"unreachable", "postgres://postgres@127.0.0.1:1/warden?sslmode=disable&connect_timeout=2", "--to:"},
		{"not empty", full, "the target database is not empty"},
	} {
		var out, errb bytes.Buffer
		code := run(ctx, []string{"migrate-store", "--from", "sqlite:" + path, "--to", tc.to}, envMap(nil), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: migrate-store = %d, stderr %q; want 2 and %q", tc.name, code, errb.String(), tc.want)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a refused migrate-store changed the source")
	}
	if got := snapshot(); got != fullBefore {
		t.Errorf("a refused migrate-store changed the target: %s, was %s", got, fullBefore)
	}
	var n int
	fdb.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants`).Scan(&n)
	if n != 1 {
		t.Errorf("target tenants = %d after the refusal, want the 1 it had", n)
	}

	// A source at another schema version than the binary's: refused, and
	// the empty target is not even migrated.
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	empty := storetest.URL(t)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"migrate-store", "--from", "sqlite:" + path, "--to", empty}, envMap(nil), &out, &errb)
	if want := fmt.Sprintf("schema is at version %d and this binary's at %d", store.LatestVersion(store.SQLite)-1, store.LatestVersion(store.SQLite)); code != 2 || !strings.Contains(errb.String(), want) {
		t.Errorf("older source: migrate-store = %d, %q; want 2 and %q", code, errb.String(), want)
	}
	edb, err := store.OpenURL(ctx, empty, store.Options{DataDir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer edb.Close()
	var tables int
	edb.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables)
	if tables != 0 {
		t.Errorf("the refused migrate-store created %d tables on the target", tables)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/tenants"
)

// With WARDEN_DATABASE_URL set, a real warden serve keeps its data in
// PostgreSQL: /readyz names the engine, a journey runs, and no SQLite file
// appears in the data directory.
func TestProcessServesFromPostgres(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	dir := filepath.Join(t.TempDir(), "data")
	p := startProcess(t, dir, "WARDEN_DATABASE_URL="+storetest.URL(t), "WARDEN_DB_MAX_CONNS=5")
	client := &http.Client{Timeout: 5 * time.Second}
	var ready struct {
		Status  string
		Details map[string]any
	}
	waitFor(t, "readiness", func() bool {
		resp, err := client.Get(p.URL + "/readyz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&ready) == nil
	})
	if ready.Details["database"] != "postgres" {
		t.Errorf("readyz details %v, want database postgres", ready.Details)
	}
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/journeys", strings.NewReader(`{"input": "Where is my order ORD-1003?"}`))
	req.Header.Set("Authorization", "Bearer "+p.demoKey(t))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var j struct{ Status, Output string }
	err = json.NewDecoder(resp.Body).Decode(&j)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || j.Status != "completed" {
		t.Fatalf("journey = %d %+v (%v), want 200 completed\n%s", resp.StatusCode, j, err, p.logs)
	}
	if _, err := os.Stat(filepath.Join(dir, "warden.db")); !os.IsNotExist(err) {
		t.Errorf("warden.db in the data directory: %v; want none with PostgreSQL", err)
	}
}

// The operator commands open the store serve opens: with
// WARDEN_DATABASE_URL set, keys create, release publish, audit export and
// audit verify work on PostgreSQL, and none creates a SQLite file.
func TestCommandsUsePostgres(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	dir := t.TempDir()
	dbURL := storetest.URL(t)
	db, err := store.OpenURL(ctx, dbURL, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, "acme", "Acme"); return err }); err != nil {
		t.Fatal(err)
	}
	env := envMap(map[string]string{"WARDEN_DATA_DIR": dir, "WARDEN_DATABASE_URL": dbURL, "WARDEN_DB_MAX_CONNS": "3"})

	var out, errb bytes.Buffer
	if code := run(ctx, []string{"keys", "create", "--tenant", "acme", "--name", "bot", "--scopes", "skill:order_status"}, env, &out, &errb); code != 0 {
		t.Fatalf("keys create = %d: %s", code, errb.String())
	}
	secret := strings.SplitN(out.String(), "\n", 2)[0]
	if _, err := keys.Authenticate(ctx, db.Read(), secret, time.Now()); err != nil {
		t.Fatalf("the key keys create printed is not in PostgreSQL: %v", err)
	}

	file := filepath.Join(dir, "bundle.json")
	body := `{"skills":"sha256:s","model":"openai:gpt-4o-mini-2024-07-18","prompt":"sha256:p","tools":"sha256:t","routing":"sha256:r","approval":"sha256:a"}`
	os.WriteFile(file, []byte(body), 0o600)
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"release", "publish", file, "--activate"}, env, &out, &errb); code != 0 {
		t.Fatalf("release publish = %d: %s", code, errb.String())
	}
	if p, err := releases.Active(ctx, db.Read(), releases.DefaultAgent, releases.DefaultEnv); err != nil || p.Digest != strings.TrimSpace(out.String()) {
		t.Errorf("active release in PostgreSQL %+v, %v; want %s", p, err, out.String())
	}

	out.Reset()
	errb.Reset()
	export := filepath.Join(dir, "audit.jsonl")
	if code := run(ctx, []string{"audit", "export", "--format", "jsonl", "--out", export}, env, &out, &errb); code != 0 {
		t.Fatalf("audit export = %d: %s", code, errb.String())
	}
	if raw, err := os.ReadFile(export); err != nil || !strings.Contains(string(raw), "key.create") {
		t.Errorf("export %q, %v; want the key.create event written to PostgreSQL", raw, err)
	}

	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"audit", "verify"}, env, &out, &errb); code != exitIntact {
		t.Fatalf("audit verify = %d: %s", code, errb.String())
	}
	var events int
	if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events`).Scan(&events); err != nil || events < 2 {
		t.Fatalf("audit events in PostgreSQL = %d, %v", events, err)
	}
	if want := fmt.Sprintf("audit chain intact: %d events", events); !strings.Contains(out.String(), want) {
		t.Errorf("audit verify said %q, want %q", out.String(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "warden.db")); !os.IsNotExist(err) {
		t.Errorf("warden.db in the data directory: %v; want none with PostgreSQL", err)
	}

	// Tampering with a row in PostgreSQL is what verify reports.
	if _, err := db.Read().ExecContext(ctx, `ALTER TABLE audit_events DISABLE TRIGGER USER`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Read().ExecContext(ctx, `UPDATE audit_events SET verb = 'key.revoke' WHERE seq = 1`); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"audit", "verify"}, env, &out, &errb); code != exitBroken || !strings.Contains(errb.String(), "seq 1") {
		t.Errorf("audit verify of a tampered chain = %d, %q; want 1 naming seq 1", code, errb.String())
	}
}

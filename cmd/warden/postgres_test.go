package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/store/storetest"
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

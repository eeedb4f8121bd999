package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/tenants"
)

// warden labels export writes the labelled journeys as JSON lines, the
// input redacted again with the installation's key: an e-mail address
// that reached the journal unredacted is not in the file.
func TestLabelsExportCommand(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	const email = "jane.doe@example.com"
	var tenant tenants.Tenant
	err = db.Transact(ctx, func(tx *store.Tx) error {
		if tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, skill, release_digest, status, input, created_at)
			VALUES ('jrn_1', ?, 'req', 'cor', 'order_status', 'sha256:rel', 'completed', ?, ?)`, tenant.ID, "Where is ORD-1003? Mail "+email, store.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	who := routelabels.Who{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-carol"}, Name: "Carol"}
	if _, err := routelabels.Set(ctx, db, who, routelabels.Journey{ID: "jrn_1", TenantID: tenant.ID, TenantSlug: "acme",
		Agent: releases.DefaultAgent, Env: releases.DefaultEnv, Release: "sha256:rel", Routed: "order_status", At: time.Now()},
		routelabels.Verdict{Expected: "refunds"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out := filepath.Join(dir, "labels.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"labels", "export", "--out", out}, envMap(map[string]string{"WARDEN_DATA_DIR": dir}), &stdout, &stderr); code != 0 {
		t.Fatalf("labels export = %d: %s", code, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), email) || strings.Contains(string(raw), "Carol") {
		t.Fatalf("export has PII or the reviewer in the clear: %s", raw)
	}
	var row map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(raw), &row); err != nil {
		t.Fatalf("export %q: %v", raw, err)
	}
	if row["journey"] != "jrn_1" || row["verdict"] != "wrong" || row["expected_skill"] != "refunds" || row["release"] != "sha256:rel" ||
		!strings.Contains(row["input"].(string), "ORD-1003") {
		t.Errorf("export row %v", row)
	}
	if !strings.Contains(stdout.String(), "Wrote 1 labelled journeys") {
		t.Errorf("stdout %q", stdout.String())
	}
	if code := run(ctx, []string{"labels", "export"}, envMap(map[string]string{"WARDEN_DATA_DIR": dir}), &stdout, &stderr); code != 2 {
		t.Errorf("without --out = %d, want 2", code)
	}
}

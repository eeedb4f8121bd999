package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// The backup procedure of docs/deploy.md: pg_dump of a live database,
// pg_restore into an empty one, and warden audit verify on the restore
// reports the same head, signed checkpoint included.
func TestBackupRestoreVerifies(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("PostgreSQL only: set " + storetest.EnvPostgres)
	}
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	ctx := context.Background()
	dir := t.TempDir()
	src := storetest.URL(t)
	db, err := store.OpenURL(ctx, src, store.Options{DataDir: dir, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, "acme", "Acme"); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := func(url string) func(string) (string, bool) {
		return envMap(map[string]string{"WARDEN_DATA_DIR": dir, "WARDEN_DATABASE_URL": url})
	}
	var out, errb bytes.Buffer
	for range 3 {
		if code := run(ctx, []string{"keys", "create", "--tenant", "acme", "--name", "bot", "--scopes", "skill:order_status"}, env(src), &out, &errb); code != 0 {
			t.Fatalf("keys create = %d: %s", code, errb.String())
		}
	}
	// An export signs a checkpoint of the head.
	if code := run(ctx, []string{"audit", "export", "--format", "jsonl", "--out", filepath.Join(dir, "a.jsonl")}, env(src), &out, &errb); code != 0 {
		t.Fatalf("audit export = %d: %s", code, errb.String())
	}
	verify := func(url string) string {
		var out, errb bytes.Buffer
		if code := run(ctx, []string{"audit", "verify"}, env(url), &out, &errb); code != exitIntact {
			t.Fatalf("audit verify = %d: %s %s", code, out.String(), errb.String())
		}
		return strings.SplitN(out.String(), "\n", 2)[0]
	}
	want := verify(src)

	dump := filepath.Join(dir, "warden.dump")
	if b, err := exec.Command("pg_dump", "--format=custom", "--file="+dump, src).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, b)
	}
	dst := storetest.URL(t)
	if b, err := exec.Command("pg_restore", "--no-owner", "--dbname="+dst, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, b)
	}
	if got := verify(dst); got != want {
		t.Errorf("restore verifies as %q; the original as %q", got, want)
	}
}

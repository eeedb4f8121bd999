package main

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/keys"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
)

func TestKeysCreateCommand(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Transact(ctx, func(tx *sql.Tx) error { _, err := store.CreateTenant(ctx, tx, "acme", "Acme"); return err })
	db.Close()
	env := envMap(map[string]string{"WARDEN_DATA_DIR": dir})

	var out, errb bytes.Buffer
	code := run(ctx, []string{"keys", "create", "--tenant", "acme", "--name", "support bot", "--scopes", "skill:order_status, tool:lookup_order"}, env, &out, &errb)
	if code != 0 {
		t.Fatalf("keys create = %d: %s", code, errb.String())
	}
	secret := strings.TrimSpace(out.String())
	if !strings.HasPrefix(secret, "wk_") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("stdout = %q, want the key alone on one line", out.String())
	}
	if !strings.Contains(errb.String(), "shown once") {
		t.Errorf("no warning that the key is shown once: %q", errb.String())
	}

	db, err = store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k, err := keys.Authenticate(ctx, db.Read(), secret, time.Now())
	if err != nil {
		t.Fatalf("the printed key does not authenticate: %v", err)
	}
	if k.Name != "support bot" || !k.Allows("skill", "order_status") || !k.Allows("tool", "lookup_order") || k.Allows("tool", "issue_refund") {
		t.Errorf("key = %+v", k)
	}
	evs, _ := audit.List(ctx, db.Read(), audit.Filter{Limit: 1})
	if len(evs) != 1 || evs[0].Verb != "key.create" || strings.Contains(strings.Join([]string{evs[0].Subject.ID, evs[0].Actor.ID}, ""), secret) {
		t.Errorf("audit = %+v", evs)
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--tenant", "nope", "--name", "x", "--scopes", "skill:a"}, "--tenant"},
		{[]string{"--tenant", "acme", "--name", "", "--scopes", "skill:a"}, "--name"},
		{[]string{"--tenant", "acme", "--name", "x", "--scopes", ""}, "--scopes"},
		{[]string{"--tenant", "acme", "--name", "x", "--scopes", "everything"}, "--scopes"},
		{[]string{"--tenant", "acme", "--name", "x", "--scopes", "skill:a", "--expires", "soon"}, "--expires"},
		{[]string{"--tenant", "acme", "--name", "x", "--scopes", "skill:a", "--expires", "2001-01-01"}, "--expires-at"},
	}
	for _, b := range bad {
		var o, e bytes.Buffer
		if code := run(ctx, append([]string{"keys", "create"}, b.args...), env, &o, &e); code == 0 || !strings.Contains(e.String(), b.want) || o.Len() != 0 {
			t.Errorf("keys create %v = %d, stderr %q; want a refusal naming %s and no key", b.args, code, e.String(), b.want)
		}
	}
}

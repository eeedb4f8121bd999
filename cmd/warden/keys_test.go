package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

func TestKeysCreateCommand(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, "acme", "Acme"); return err })
	db.Close()
	env := envMap(map[string]string{"WARDEN_DATA_DIR": dir})

	var out, errb bytes.Buffer
	code := run(ctx, []string{"keys", "create", "--tenant", "acme", "--name", "support bot", "--scopes", "skill:order_status, tool:lookup_order"}, env, &out, &errb)
	if code != 0 {
		t.Fatalf("keys create = %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "wk_") || !strings.HasPrefix(lines[1], "whsec_") {
		t.Fatalf("stdout = %q, want the key, then its callback secret, each on its own line", out.String())
	}
	secret, callback := lines[0], lines[1]
	if !strings.Contains(errb.String(), "shown once") || !strings.Contains(errb.String(), "callback secret") {
		t.Errorf("no warning that the key and its callback secret are shown once: %q", errb.String())
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
	// The printed callback secret is the one Warden signs with: sealed
	// with the installation's key in the data directory, as serve opens it.
	sealer, err := seal.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := keys.CallbackSecrets(ctx, db.Read(), sealer, k.ID, time.Now()); err != nil || len(got) != 1 || got[0] != callback {
		t.Errorf("stored callback secret = %d secrets, %v; want the printed one", len(got), err)
	}
	if k.Name != "support bot" || !k.Allows("skill", "order_status") || !k.Allows("tool", "lookup_order") || k.Allows("tool", "issue_refund") {
		t.Errorf("key = %+v", k)
	}
	evs, _ := audit.List(ctx, db.Read(), audit.Filter{Limit: 1})
	if len(evs) != 1 || evs[0].Verb != "key.create" || strings.Contains(strings.Join([]string{evs[0].Subject.ID, evs[0].Actor.ID}, ""), secret) ||
		strings.Contains(fmt.Sprint(evs[0].Details), callback) {
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

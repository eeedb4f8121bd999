package models

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// forCall reads in one statement what For and callOptions read in two:
// the same deployments (API keys opened, in order) and the same options;
// an alias without deployments has none, and no error.
func TestForCallReadsWhatForAndCallOptionsRead(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	actor := audit.Actor{Type: audit.ActorSystem, ID: "test"}
	for i, name := range []string{"b", "a"} {
		if _, err := Create(ctx, db, sealer, actor, Deployment{Name: name, Alias: "chat", Priority: i, BaseURL: "https://models.example.com/v1", UpstreamModel: "m-" + name,
			ContextWindow: 8192, MaxOutputTokens: 64, Timeout: time.Second, Concurrency: 4, Enabled: true}, "sk-"+name); err != nil {
			t.Fatal(err)
		}
	}
	var tenant tenants.Tenant
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		tenant, err = tenants.Insert(ctx, tx, "t1", "T1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := SetTenantSettings(ctx, db, actor, tenant, TenantSettings{Content: ContentNone, OutboundRedaction: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := SetAliasSettings(ctx, db, actor, AliasSettings{Alias: "chat", Cascade: true, CacheTTL: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := SetAllowedHosts(ctx, db, actor, []string{"models.internal"}); err != nil {
		t.Fatal(err)
	}
	wantDeps, err := For(ctx, db.Read(), sealer, "chat")
	if err != nil || len(wantDeps) != 2 || wantDeps[0].APIKey != "sk-b" {
		t.Fatalf("For(chat) = %+v, %v", wantDeps, err)
	}
	wa, ws, wl, wh, err := callOptions(ctx, db.Read(), "chat", tenant.ID, "k1")
	if err != nil || !wa.Cascade || ws.Content != ContentNone || wh != "models.internal" {
		t.Fatalf("callOptions = %+v %+v %+v %q, %v", wa, ws, wl, wh, err)
	}
	deps, a, s, l, h, err := forCall(ctx, db.Read(), sealer, "chat", tenant.ID, "k1")
	if err != nil || !reflect.DeepEqual(deps, wantDeps) || a != wa || s != ws || l != wl || h != wh {
		t.Errorf("forCall = %+v %+v %+v %+v %q, %v;\nwant %+v %+v %+v %+v %q", deps, a, s, l, h, err, wantDeps, wa, ws, wl, wh)
	}
	if deps, _, _, _, _, err := forCall(ctx, db.Read(), sealer, "nope", tenant.ID, "k1"); err != nil || len(deps) != 0 {
		t.Errorf("forCall(nope) = %+v, %v; want no deployments, no error", deps, err)
	}
}

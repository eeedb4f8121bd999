package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

func TestAdminKeyCreateShowsSecretOnce(t *testing.T) {
	in, b := adminSession(t, "erin")

	form := b.get("/keys/new")
	if form.Status != http.StatusOK {
		t.Fatalf("GET /keys/new = %d", form.Status)
	}
	var offered []string
	form.Doc.Find(`input[name="scopes"]`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		offered = append(offered, v)
	})
	// Development mode adds the demo's model-driven skill (model_refunds).
	want := []string{"skill:order_status", "skill:order_support", "skill:refunds", "skill:customer_email", "skill:model_refunds", "tool:issue_refund", "tool:lookup_order", "read:tenant"}
	if strings.Join(offered, ",") != strings.Join(want, ",") {
		t.Errorf("scope checkboxes = %v, want %v", offered, want)
	}
	if v, _ := form.Doc.Find(`input[name="rate_per_min"]`).Attr("value"); v != "600" {
		t.Errorf("rate default = %q, want 600", v)
	}
	if v, _ := form.Doc.Find(`input[name="burst"]`).Attr("value"); v != "60" {
		t.Errorf("burst default = %q, want 60", v)
	}

	expiry := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")
	res := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"acme"}, "name": {"support-bot"}, "scopes": {"skill:refunds", "tool:lookup_order"},
		"rate_per_min": {"120"}, "burst": {"10"}, "expires_at": {expiry},
	}), nil)
	if res.Status != http.StatusOK || !strings.HasSuffix(res.URL.Path, "/created") {
		t.Fatalf("create = %d at %s: %s", res.Status, res.URL, text(res, "form-errors"))
	}
	// Reloading the page neither shows the secret again nor makes a key.
	defer func() {
		again := b.get(res.URL.Path)
		if strings.Contains(again.Body, "wk_") && text(again, "new-key-secret") != "" || text(again, "secret-gone") == "" {
			t.Errorf("reloaded result page shows the secret again or no notice")
		}
		if n := countRows(t, in.DB, `SELECT COUNT(*) FROM virtual_keys WHERE name = 'support-bot'`); n != 1 {
			t.Errorf("keys named support-bot = %d after a reload, want 1", n)
		}
	}()
	secret := text(res, "new-key-secret")
	if !strings.HasPrefix(secret, "wk_") || len(secret) != len("wk_")+8+1+32 {
		t.Fatalf("secret on the result page = %q, want a wk_ key", secret)
	}
	if n := strings.Count(res.Body, secret); n != 1 {
		t.Errorf("the secret appears %d times on the result page, want once", n)
	}
	if !strings.Contains(res.Body, "will not be shown again") {
		t.Error("the result page does not warn that the secret is shown once")
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("result page Cache-Control = %q, want no-store", cc)
	}

	// Stored as asked, authenticates, and never shown again.
	k, err := keys.Authenticate(context.Background(), in.DB.Read(), secret, time.Now())
	if err != nil {
		t.Fatalf("the shown secret does not authenticate: %v", err)
	}
	if k.TenantSlug != "acme" || k.Name != "support-bot" || k.RatePerMin != 120 || k.Burst != 10 ||
		strings.Join(k.Scopes, ",") != "skill:refunds,tool:lookup_order" || k.ExpiresAt == nil || k.ExpiresAt.Format("2006-01-02") != expiry {
		t.Errorf("stored key = %+v, want what the form said", k)
	}
	for range 2 {
		list := b.get("/keys")
		if strings.Contains(list.Body, secret) || strings.Contains(list.Body, secret[len("wk_")+9:]) {
			t.Fatal("the key list shows the secret")
		}
		if got := text(list, "key-state-"+k.ID); got != "active" {
			t.Errorf("key state = %q, want active", got)
		}
		if !strings.Contains(list.Body, "wk_"+k.Prefix+"…") {
			t.Errorf("key list lacks the prefix wk_%s…", k.Prefix)
		}
		if !strings.Contains(list.Doc.Find(`[data-testid="key-`+k.ID+`"]`).Text(), "Erin Admin") {
			t.Error("key list does not name the creator")
		}
	}
	evs := adminEvents(t, in.DB, "key.create")
	if len(evs) != 1 {
		t.Fatalf("key.create events = %d, want 1", len(evs))
	}
	raw, _ := json.Marshal(evs[0].Details)
	if strings.Contains(string(raw), secret) || strings.Contains(string(raw), secret[len("wk_")+9:]) {
		t.Fatalf("the audit event carries the secret: %s", raw)
	}
	if evs[0].Details["prefix"] != k.Prefix || evs[0].Details["name"] != "support-bot" || evs[0].Tenant != "acme" || evs[0].Subject.ID != k.ID {
		t.Errorf("key.create event = %s tenant %s subject %v, want prefix, name, tenant acme, the key", raw, evs[0].Tenant, evs[0].Subject)
	}
	if strings.Contains(in.Logs.String(), secret[len("wk_")+9:]) {
		t.Error("the logs carry the secret")
	}
}

func TestAdminKeyCreateRefusesBadInput(t *testing.T) {
	in, b := adminSession(t, "erin")
	before := auditCount(t, in.DB)
	good := url.Values{"tenant": {"acme"}, "name": {"bot"}, "scopes": {"tool:lookup_order"}, "rate_per_min": {"600"}, "burst": {"60"}}
	tests := []struct {
		name, field, value, want string
	}{
		{"no name", "name", " ", "Give the key a name"},
		{"no tenant", "tenant", "", "Choose the tenant"},
		{"unknown tenant", "tenant", "nope", "There is no tenant nope"},
		{"no scopes", "scopes", "", "Choose at least one skill or tool"},
		{"unknown tool", "scopes", "tool:launch_missiles", `"tool:launch_missiles" is not a skill or tool`},
		{"rate zero", "rate_per_min", "0", "between 1 and 600000"},
		{"rate text", "rate_per_min", "lots", "whole number"},
		{"burst too big", "burst", "10001", "between 1 and 10000"},
		{"expiry past", "expires_at", "2020-01-01", "must be in the future"},
		{"expiry garbage", "expires_at", "next week", "Enter a date"},
	}
	for _, tt := range tests {
		form := url.Values{}
		for k, v := range good {
			form[k] = v
		}
		if tt.value == "" {
			form.Del(tt.field)
		} else {
			form.Set(tt.field, tt.value)
		}
		p := b.post("/keys", b.withCSRF(form), nil)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", tt.name, p.Status)
			continue
		}
		if got := text(p, "error-"+tt.field); !strings.Contains(got, tt.want) {
			t.Errorf("%s: error = %q, want %q", tt.name, got, tt.want)
		}
		if p.Doc.Find(`[data-testid="new-key-secret"]`).Length() != 0 {
			t.Errorf("%s: a secret was shown", tt.name)
		}
		if v, _ := p.Doc.Find(`input[name="name"]`).Attr("value"); tt.field != "name" && v != "bot" {
			t.Errorf("%s: name input = %q, want the typed value kept", tt.name, v)
		}
		if tt.field != "scopes" && p.Doc.Find(`input[value="tool:lookup_order"][checked]`).Length() != 1 {
			t.Errorf("%s: the ticked scope was not kept", tt.name)
		}
	}
	ks, _ := keys.List(context.Background(), in.DB.Read(), nil)
	if len(ks) != 0 || auditCount(t, in.DB) != before {
		t.Errorf("refused creates left %d keys and %d audit events", len(ks), auditCount(t, in.DB)-before)
	}
}

func TestAdminKeyRevokeIsConfirmedAndIdempotent(t *testing.T) {
	in, b := adminSession(t, "erin")
	b.post("/keys", b.withCSRF(url.Values{"tenant": {"acme"}, "name": {"old-bot"}, "scopes": {"skill:refunds"}, "rate_per_min": {"600"}, "burst": {"60"}}), nil)
	ks, err := keys.List(context.Background(), in.DB.Read(), nil)
	if err != nil || len(ks) != 1 {
		t.Fatalf("keys = %v, %v", ks, err)
	}
	k := ks[0]

	confirm := b.get("/keys/" + k.ID + "/revoke")
	if got := text(confirm, "confirm-effect"); !strings.Contains(got, "wk_"+k.Prefix) || !strings.Contains(got, "401") {
		t.Errorf("confirm says %q, want the prefix and the effect", got)
	}
	if got, _ := keys.ByID(context.Background(), in.DB.Read(), k.ID); got.RevokedAt != nil {
		t.Fatal("opening the confirmation revoked the key")
	}
	p := b.post("/keys/"+k.ID+"/revoke", b.withCSRF(nil), nil)
	if p.URL.Path != "/keys" || text(p, "key-state-"+k.ID) != "revoked" {
		t.Fatalf("after revoke at %s, state %q; want /keys showing revoked", p.URL, text(p, "key-state-"+k.ID))
	}
	if got, _ := keys.ByID(context.Background(), in.DB.Read(), k.ID); got.RevokedAt == nil {
		t.Error("key not revoked in the database")
	}
	evs := adminEvents(t, in.DB, "key.revoke")
	if len(evs) != 1 || evs[0].Subject.ID != k.ID || evs[0].Tenant != "acme" {
		t.Fatalf("key.revoke events = %+v, want one for the key", evs)
	}
	before := auditCount(t, in.DB)
	p = b.post("/keys/"+k.ID+"/revoke", b.withCSRF(nil), nil)
	if !strings.Contains(text(p, "notice"), "already revoked") || auditCount(t, in.DB) != before {
		t.Errorf("second revoke: notice %q, %d new events; want already revoked and none", text(p, "notice"), auditCount(t, in.DB)-before)
	}
	if got := b.get("/keys/NOPE/revoke"); got.Status != http.StatusNotFound {
		t.Errorf("unknown key = %d, want 404", got.Status)
	}
}

func TestAdminKeyListPages(t *testing.T) {
	in, b := adminSession(t, "erin")
	globex := adminTenant(t, in.DB, "globex", "Globex")
	acme := adminTenantBySlug(t, in.DB, "acme")
	ctx := context.Background()
	err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		for i := range 53 {
			tn := acme.ID
			if i%10 == 0 {
				tn = globex.ID
			}
			if _, _, err := keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: tn, Name: "bot", Scopes: []string{"skill:refunds"}, RatePerMin: 1, Burst: 1, CreatedBy: "cli"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	first := b.get("/keys")
	if n := first.Doc.Find(`[data-testid="keys-table"] tbody tr`).Length(); n != 50 {
		t.Errorf("first page rows = %d, want 50", n)
	}
	older, ok := first.Doc.Find(`[data-testid="keys-older"]`).Attr("href")
	if !ok {
		t.Fatal("no link to the next page")
	}
	second := b.get(older)
	if n := second.Doc.Find(`[data-testid="keys-table"] tbody tr`).Length(); n != 3 {
		t.Errorf("second page rows = %d, want 3", n)
	}
	if second.Doc.Find(`[data-testid="keys-older"]`).Length() != 0 || second.Doc.Find(`[data-testid="keys-newer"]`).Length() != 1 {
		t.Error("second page pager wrong: want only a link back")
	}
	filtered := b.get("/keys?tenant=globex")
	if n := filtered.Doc.Find(`[data-testid="keys-table"] tbody tr`).Length(); n != 6 {
		t.Errorf("globex keys = %d, want 6", n)
	}
	if filtered.Doc.Find(`[data-testid="keys-table"] td.mono:contains("acme")`).Length() != 0 {
		t.Error("the globex filter shows acme keys")
	}
	// And back: the second page's link leads to the first page again.
	newer, _ := second.Doc.Find(`[data-testid="keys-newer"]`).Attr("href")
	if back := b.get(newer); !slices.Equal(keyRowIDs(back), keyRowIDs(first)) {
		t.Error("the link back from the second page does not show the first page")
	}
	if p := b.get("/keys?after=not-a-cursor"); p.Status != http.StatusBadRequest {
		t.Errorf("a forged page link = %d, want 400", p.Status)
	}
}

// No demo user is an admin scoped to one tenant, so the scope rules are
// checked by calling the handlers as such a principal.
func TestAdminScopedAdminIsRefusedOtherTenants(t *testing.T) {
	in := startWarden(t, nil)
	adminSeedTools(t, in.DB)
	ctx := context.Background()
	acme := adminTenantBySlug(t, in.DB, "acme")
	globex := adminTenant(t, in.DB, "globex", "Globex")
	var globexKey, acmeKey keys.Key
	err := in.DB.Transact(ctx, func(tx *store.Tx) (err error) {
		if acmeKey, _, err = keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: acme.ID, Name: "acme-bot", Scopes: []string{"skill:refunds"}, RatePerMin: 1, Burst: 1, CreatedBy: "cli"}); err != nil {
			return err
		}
		globexKey, _, err = keys.Create(ctx, tx, in.Agent.Journeys.Sealer(), keys.NewSpec{TenantID: globex.ID, Name: "globex-bot", Scopes: []string{"skill:refunds"}, RatePerMin: 1, Burst: 1, CreatedBy: "cli"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	adminInsertJourneys(t, in.DB,
		adminJourney{ID: "01JSCOPE0000000000000ACME1", TenantID: acme.ID, Skill: "refunds", Status: "completed", Input: "acme journey"},
		adminJourney{ID: "01JSCOPE000000000000GLOBEX", TenantID: globex.ID, Skill: "refunds", Status: "completed", Input: "globex journey"},
	)
	scoped := &identity.Principal{ID: "p-acme-admin", Name: "Scoped Admin", Roles: []string{"admin"}, Tenants: []string{"acme"}}
	h := &handlers.Console{DB: in.DB, Runtime: in.Agent.Journeys, Sealer: in.Agent.Journeys.Sealer()}
	before := auditCount(t, in.DB)

	refused := []struct {
		name   string
		call   func() error
		status int
	}{
		{"create key for globex", func() error {
			_, err := callAs(t, h.KeyCreate, scoped, http.MethodPost, "/keys",
				url.Values{"tenant": {"globex"}, "name": {"x"}, "scopes": {"skill:refunds"}, "rate_per_min": {"600"}, "burst": {"60"}})
			return err
		}, 403},
		{"revoke globex key", func() error {
			_, err := callAs(t, h.KeyRevoke, scoped, http.MethodPost, "/", url.Values{}, "id", globexKey.ID)
			return err
		}, 404},
		{"confirm revoke of globex key", func() error {
			_, err := callAs(t, h.KeyRevokeConfirm, scoped, http.MethodGet, "/", nil, "id", globexKey.ID)
			return err
		}, 404},
		{"show a globex key", func() error {
			_, err := callAs(t, h.KeyShow, scoped, http.MethodGet, "/", nil, "id", globexKey.ID)
			return err
		}, 404},
		{"confirm rotating a globex key's callback secret", func() error {
			_, err := callAs(t, h.KeyCallbackRotateConfirm, scoped, http.MethodGet, "/", nil, "id", globexKey.ID)
			return err
		}, 404},
		{"rotate a globex key's callback secret", func() error {
			_, err := callAs(t, h.KeyCallbackRotate, scoped, http.MethodPost, "/", url.Values{}, "id", globexKey.ID)
			return err
		}, 404},
		{"narrow a globex key's scopes", func() error {
			_, err := callAs(t, h.KeyScopes, scoped, http.MethodPost, "/", url.Values{"scopes": {"skill:refunds"}}, "id", globexKey.ID)
			return err
		}, 404},
		{"lower a globex key's rate limit", func() error {
			_, err := callAs(t, h.KeyRate, scoped, http.MethodPost, "/", url.Values{"rate_per_min": {"1"}, "burst": {"1"}}, "id", globexKey.ID)
			return err
		}, 404},
		{"show a created globex key", func() error {
			_, err := callAs(t, h.KeyCreated, scoped, http.MethodGet, "/", nil, "id", globexKey.ID)
			return err
		}, 404},
		{"list globex keys", func() error {
			_, err := callAs(t, h.KeyList, scoped, http.MethodGet, "/keys?tenant=globex", nil)
			return err
		}, 403},
		{"set globex budget", func() error {
			_, err := callAs(t, h.BudgetEdit, scoped, http.MethodPost, "/", url.Values{"period": {"month"}, "limit": {"1"}, "alert_percent": {"80"}}, "tenant", "globex")
			return err
		}, 403},
		{"show globex", func() error {
			_, err := callAs(t, h.TenantShow, scoped, http.MethodGet, "/", nil, "slug", "globex")
			return err
		}, 403},
		{"rename globex", func() error {
			_, err := callAs(t, h.TenantRename, scoped, http.MethodPost, "/", url.Values{"name": {"Mine"}}, "slug", "globex")
			return err
		}, 403},
		{"freeze globex", func() error {
			_, err := callAs(t, h.TenantFreeze, scoped, http.MethodPost, "/", url.Values{}, "slug", "globex")
			return err
		}, 403},
		{"retention of globex", func() error {
			_, err := callAs(t, h.TenantRetention, scoped, http.MethodPost, "/", url.Values{"retention_days": {"1"}}, "slug", "globex")
			return err
		}, 403},
		{"unknown tenant outside scope is 403, not 404", func() error {
			_, err := callAs(t, h.TenantShow, scoped, http.MethodGet, "/", nil, "slug", "initech")
			return err
		}, 403},
		{"create a tenant", func() error {
			_, err := callAs(t, h.TenantCreate, scoped, http.MethodPost, "/tenants", url.Values{"slug": {"initech"}, "name": {"Initech"}})
			return err
		}, 403},
		{"switch a tool off", func() error {
			_, err := callAs(t, h.ToolDisable, scoped, http.MethodPost, "/", url.Values{}, "name", "lookup_order")
			return err
		}, 403},
		{"edit a tool", func() error {
			_, err := callAs(t, h.ToolUpdate, scoped, http.MethodPost, "/", url.Values{"description": {"mine"}}, "name", "lookup_order")
			return err
		}, 403},
		{"globex trace", func() error {
			_, err := callAs(t, h.TraceDetail, scoped, http.MethodGet, "/", nil, "id", "01JSCOPE000000000000GLOBEX")
			return err
		}, 404},
		{"globex traces", func() error {
			_, err := callAs(t, h.TraceList, scoped, http.MethodGet, "/traces?tenant=globex", nil)
			return err
		}, 403},
	}
	// Objects named by id (keys, journeys) in another tenant answer 404,
	// as an unknown id does; tenants named by slug answer 403 whether or
	// not they exist. Neither tells a scoped admin what exists elsewhere.
	for _, tt := range refused {
		if got := httpStatus(tt.call()); got != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.status)
		}
	}
	if got := auditCount(t, in.DB); got != before {
		t.Errorf("refused calls wrote %d audit events", got-before)
	}
	gk, _ := keys.List(ctx, in.DB.Read(), []string{globex.ID})
	if len(gk) != 1 || gk[0].RevokedAt != nil || strings.Join(gk[0].Scopes, " ") != "skill:refunds" || gk[0].RatePerMin != 1 {
		t.Errorf("globex keys after refused calls = %+v, want the one unrevoked key, unchanged", gk)
	}
	// Its own tenant's keys the scoped admin may edit.
	if rec, err := callAs(t, h.KeyScopes, scoped, http.MethodPost, "/", url.Values{"scopes": {"skill:refunds"}}, "id", acmeKey.ID); err != nil || rec.Code != http.StatusSeeOther {
		t.Errorf("scoped admin saving an acme key's scopes = %d, %v; want 303", rec.Code, err)
	}
	if g, _ := tenants.BySlug(ctx, in.DB.Read(), "globex"); g.Frozen || g.Name != "Globex" {
		t.Errorf("globex after refused calls = %+v, want unchanged", g)
	}

	// Lists show only what is in scope.
	for _, tt := range []struct {
		name        string
		call        func() (string, error)
		mine, other string
	}{
		{"tenants", func() (string, error) {
			rec, err := callAs(t, h.TenantList, scoped, http.MethodGet, "/tenants", nil)
			return rec.Body.String(), err
		}, "tenant-acme", "tenant-globex"},
		{"keys", func() (string, error) {
			rec, err := callAs(t, h.KeyList, scoped, http.MethodGet, "/keys", nil)
			return rec.Body.String(), err
		}, "acme-bot", "globex-bot"},
		{"key form tenants", func() (string, error) {
			rec, err := callAs(t, h.KeyNew, scoped, http.MethodGet, "/keys/new", nil)
			return rec.Body.String(), err
		}, `value="acme"`, `value="globex"`},
		{"budgets", func() (string, error) {
			rec, err := callAs(t, h.BudgetList, scoped, http.MethodGet, "/budgets", nil)
			return rec.Body.String(), err
		}, "budget-acme", "budget-globex"},
		{"traces", func() (string, error) {
			rec, err := callAs(t, h.TraceList, scoped, http.MethodGet, "/traces", nil)
			return rec.Body.String(), err
		}, "01JSCOPE0000000000000ACME1", "01JSCOPE000000000000GLOBEX"},
	} {
		body, err := tt.call()
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !strings.Contains(body, tt.mine) || strings.Contains(body, tt.other) {
			t.Errorf("%s: shows %s = %v, %s = %v; want only the tenant in scope", tt.name, tt.mine, strings.Contains(body, tt.mine), tt.other, strings.Contains(body, tt.other))
		}
	}
	// The scoped admin sees the catalog but is offered no switch.
	rec, err := callAs(t, h.ToolList, scoped, http.MethodGet, "/tools", nil)
	if err != nil || strings.Contains(rec.Body.String(), "/tools/lookup_order/disable") || !strings.Contains(rec.Body.String(), "lookup_order") {
		t.Errorf("scoped admin's tool list: err %v, offers the switch = %v", err, strings.Contains(rec.Body.String(), "/disable"))
	}
}

// keyRowIDs lists the key ids a key list page shows, in order.
func keyRowIDs(p page) []string {
	var ids []string
	p.Doc.Find(`[data-testid="keys-table"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		ids = append(ids, s.Text())
	})
	return ids
}

// A key for the model door is made in the console like any other: the
// form offers model:ALIAS for each enabled alias, the key holds it, and
// an alias Warden does not know is refused with a sentence.
func TestAdminKeyCreateOffersModelAliases(t *testing.T) {
	in, b := adminSession(t, "erin")
	form := b.get("/keys/new")
	if !strings.Contains(text(form, "main"), "No model deployments") && form.Doc.Find(`input[value^="model:"]`).Length() != 0 {
		t.Fatalf("without deployments the form offers model scopes")
	}
	d := deployment("chat-a", "echo", 1)
	d.BaseURL = "http://127.0.0.1:9/v1"
	if _, err := models.Create(context.Background(), in.DB, in.Agent.Journeys.Sealer(), audit.Actor{Type: audit.ActorSystem, ID: "test"}, d, "sk-x"); err != nil {
		t.Fatal(err)
	}
	form = b.get("/keys/new")
	if form.Doc.Find(`input[name="scopes"][value="model:chat"]`).Length() != 1 {
		t.Fatalf("the key form does not offer model:chat")
	}
	res := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"acme"}, "name": {"model-bot"}, "scopes": {"model:chat"}, "rate_per_min": {"60"}, "burst": {"10"},
	}), nil)
	if res.Status != http.StatusOK || !strings.HasSuffix(res.URL.Path, "/created") {
		t.Fatalf("create with model:chat = %d at %s: %s", res.Status, res.URL, text(res, "form-errors"))
	}
	var scopes string
	if err := in.DB.Read().QueryRow(`SELECT scopes FROM virtual_keys WHERE name = 'model-bot'`).Scan(&scopes); err != nil || !strings.Contains(scopes, "model:chat") {
		t.Errorf("stored scopes = %q (%v), want model:chat", scopes, err)
	}
	bad := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"acme"}, "name": {"model-bot-2"}, "scopes": {"model:nope"}, "rate_per_min": {"60"}, "burst": {"10"},
	}), nil)
	if bad.Status != http.StatusUnprocessableEntity && bad.Status != http.StatusBadRequest || !strings.Contains(bad.Body, "is not a model alias Warden knows") {
		t.Errorf("model:nope = %d: %s", bad.Status, text(bad, "form-errors"))
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM virtual_keys WHERE name = 'model-bot-2'`); n != 0 {
		t.Errorf("a key with an unknown alias was made")
	}
}

package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
)

func modelFormValues(base string) url.Values {
	return url.Values{"name": {"fake-east"}, "alias": {"chat"}, "priority": {"0"}, "base_url": {base}, "upstream_model": {"fake"},
		"api_key": {"sk-console-secret-123"}, "input_price": {"0.15"}, "output_price": {"0.60"}, "context_window": {"8192"},
		"max_output_tokens": {"512"}, "timeout": {"5000"}, "concurrency": {"4"}}
}

func TestAdminModelsPage(t *testing.T) {
	in, b := adminSession(t, "erin")
	up := httptest.NewServer(fakeupstream.New())
	t.Cleanup(up.Close)
	ctx := context.Background()

	if p := b.get("/models"); p.Status != http.StatusOK || text(p, "models-empty") == "" {
		t.Fatalf("GET /models = %d", p.Status)
	}
	// Without the CSRF token nothing is created.
	if p := b.post("/models", modelFormValues(up.URL+"/v1"), nil); p.Status != http.StatusForbidden {
		t.Fatalf("POST /models without CSRF = %d, want 403", p.Status)
	}
	bad := modelFormValues("ftp://nowhere")
	bad.Set("input_price", "-1")
	if p := b.post("/models", b.withCSRF(bad), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-base_url") == "" || text(p, "error-input_price") == "" {
		t.Fatalf("invalid form = %d, errors %q %q", p.Status, text(p, "error-base_url"), text(p, "error-input_price"))
	}
	p := b.post("/models", b.withCSRF(modelFormValues(up.URL+"/v1")), nil)
	if p.Status != http.StatusOK || text(p, "notice") != "Deployment added." || !strings.Contains(text(p, "model-fake-east"), "$0.15 / 1M") {
		t.Fatalf("create = %d notice %q row %q", p.Status, text(p, "notice"), text(p, "model-fake-east"))
	}
	if strings.Contains(p.Body, "sk-console-secret-123") {
		t.Fatal("the page shows the API key")
	}
	if evs := adminEvents(t, in.DB, "model.create"); len(evs) != 1 || evs[0].Subject.ID != "fake-east" || strings.Contains(fmt.Sprint(evs[0].Details), "sk-console") {
		t.Fatalf("model.create events = %+v", evs)
	}
	d, err := models.For(ctx, in.DB.Read(), in.Agent.Journeys.Sealer(), "chat")
	if err != nil || len(d) != 1 || d[0].APIKey != "sk-console-secret-123" || d[0].InputMicrosPerM != 150_000 {
		t.Fatalf("stored = %+v, %v", d, err)
	}

	// Edit: a new priority, the key kept.
	if e := b.get("/models/fake-east/edit"); e.Status != http.StatusOK {
		t.Fatalf("edit form = %d", e.Status)
	} else if title := e.Doc.Find("title").Text(); !strings.HasPrefix(title, "Edit model fake-east") {
		t.Errorf("edit page title = %q, want it to name the model being edited", title)
	}
	edit := modelFormValues(up.URL + "/v1")
	edit.Set("priority", "5")
	edit.Del("api_key")
	if p := b.post("/models/fake-east", b.withCSRF(edit), nil); text(p, "notice") != "Deployment saved." {
		t.Fatalf("update notice %q", text(p, "notice"))
	}
	if evs := adminEvents(t, in.DB, "model.update"); len(evs) != 1 || fmt.Sprint(evs[0].Details["changed"]) != "[priority]" {
		t.Fatalf("model.update events = %+v", evs)
	}

	// A call through the gateway shows in Model calls.
	acme := adminTenantBySlug(t, in.DB, "acme")
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: acme.ID, Period: budgets.Month, LimitMicros: 1_000_000, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	_, key := newKeyIn(t, in, "acme", "chat-bot", []string{"model:chat"}, "test")
	client := openai.NewClient(option.WithBaseURL(in.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	// The fake upstream is on loopback: refused until an admin lists its
	// host on the Models page.
	if _, err := client.Chat.Completions.New(ctx, userChat("hello")); apiErr(t, err).StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a loopback deployment, not listed: %v", err)
	}
	if p := b.get("/models"); text(p, "model-allowed-hosts-empty") == "" {
		t.Fatalf("allowed hosts section = %q", text(p, "model-allowed-hosts"))
	}
	if p := b.post("/model-allowed-hosts", b.withCSRF(url.Values{"allowed_hosts": {"127.0.0.1\nhttp://bad.example:80/x"}}), nil); p.Status != http.StatusUnprocessableEntity ||
		text(p, "error-allowed_hosts") == "" || p.Doc.Find("#allowed_hosts").Text() != "127.0.0.1\nhttp://bad.example:80/x" {
		t.Fatalf("a bad host = %d, error %q, form %q", p.Status, text(p, "error-allowed_hosts"), p.Doc.Find("#allowed_hosts").Text())
	}
	if hs, _ := models.AllowedHosts(ctx, in.DB.Read()); len(hs) != 0 || len(adminEvents(t, in.DB, "model.allowed_hosts")) != 0 {
		t.Fatalf("a refused list changed the hosts to %v", hs)
	}
	other := newBrowser(t, in.URL)
	other.loginDev("alice")
	other.get("/")
	if p := other.post("/model-allowed-hosts", other.withCSRF(url.Values{"allowed_hosts": {"127.0.0.1"}}), nil); p.Status != http.StatusForbidden {
		t.Fatalf("alice POST /model-allowed-hosts = %d, want 403", p.Status)
	}
	// Adding an internal host loosens egress: frank approves it.
	approveAsFrank(t, in, b.post("/model-allowed-hosts", b.withCSRF(url.Values{"allowed_hosts": {"127.0.0.1"}}), nil))
	if p := b.get("/models"); !strings.Contains(text(p, "model-allowed-hosts-list"), "127.0.0.1") {
		t.Fatalf("allowed hosts saved = %d list %q", p.Status, text(p, "model-allowed-hosts-list"))
	}
	if evs := adminEvents(t, in.DB, "model.allowed_hosts"); len(evs) != 1 || fmt.Sprint(evs[0].Details["added"]) != "[127.0.0.1]" || evs[0].Actor.ID == "" {
		t.Fatalf("model.allowed_hosts events = %+v", evs)
	}
	if _, err := client.Chat.Completions.New(ctx, userChat("hello")); err != nil {
		t.Fatal(err)
	}
	p = b.get("/models")
	if !strings.Contains(p.Doc.Find(`[data-testid="model-calls"]`).Text(), "fake-east") {
		t.Fatalf("model calls section = %q", p.Doc.Find(`[data-testid="model-calls"]`).Text())
	}
	// Each call shows its reservation, the usage reported and the charge
	// side by side.
	calls, err := models.Calls(ctx, in.DB.Read(), nil, 1)
	if err != nil || len(calls) != 1 {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	c := calls[0]
	if text(p, "model-call-reserved-"+c.ID) == "" || !strings.Contains(text(p, "model-call-usage-"+c.ID), " in / ") || text(p, "model-call-charged-"+c.ID) == "" {
		t.Fatalf("call row: reserved %q, usage %q, charged %q", text(p, "model-call-reserved-"+c.ID), text(p, "model-call-usage-"+c.ID), text(p, "model-call-charged-"+c.ID))
	}

	// Switched off, the alias has no deployment left: 404.
	if p := b.post("/models/fake-east/disable", b.withCSRF(url.Values{"reason": {"testing the last deployment"}}), nil); text(p, "notice") == "" || len(adminEvents(t, in.DB, "model.disable")) != 1 {
		t.Fatalf("disable notice %q", text(p, "notice"))
	}
	_, err = client.Chat.Completions.New(ctx, userChat("hello"))
	if e := apiErr(t, err); e.StatusCode != http.StatusNotFound {
		t.Fatalf("after switching off: %d", e.StatusCode)
	}
}

func TestModelsPageIsForAdmins(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	for user, want := range map[string]int{"alice": 403, "carol": 403, "dave": 403, "erin": 200} {
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		if p := b.get("/models"); p.Status != want {
			t.Errorf("%s GET /models = %d, want %d", user, p.Status, want)
		}
	}
}

// The tenant's model settings, a key's model limits and an alias's
// options are set in the console: admins only, with CSRF, audited, and a
// bad value is a 422 that changes nothing.
func TestAdminModelSettingsControls(t *testing.T) {
	in, b := adminSession(t, "erin")
	up := httptest.NewServer(fakeupstream.New())
	t.Cleanup(up.Close)
	ctx := context.Background()
	acme := adminTenantBySlug(t, in.DB, "acme")

	// Tenant: what traces keep, and outbound redaction.
	if p := b.get("/tenants/acme"); p.Status != http.StatusOK || p.Doc.Find(`#model_content option[selected]`).AttrOr("value", "") != "redacted" {
		t.Fatalf("tenant page = %d, content %q", p.Status, p.Doc.Find(`#model_content option[selected]`).AttrOr("value", ""))
	}
	good := url.Values{"model_content": {"none"}, "model_outbound_redaction": {"on"}}
	if p := b.post("/tenants/acme/model-settings", good, nil); p.Status != http.StatusForbidden {
		t.Fatalf("without CSRF = %d, want 403", p.Status)
	}
	if p := b.post("/tenants/acme/model-settings", b.withCSRF(url.Values{"model_content": {"everything"}}), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-model_content") == "" {
		t.Fatalf("bad content = %d, error %q", p.Status, text(p, "error-model_content"))
	}
	if s, _ := models.TenantSettingsOf(ctx, in.DB.Read(), acme.ID); s != (models.TenantSettings{Content: models.ContentRedacted}) || len(adminEvents(t, in.DB, "model.tenant_settings")) != 0 {
		t.Fatalf("a refused change changed %+v", s)
	}
	if p := b.post("/tenants/acme/model-settings", b.withCSRF(good), nil); text(p, "notice") == "" || p.Doc.Find(`[data-testid="model-outbound"]`).AttrOr("checked", "no") == "no" {
		t.Fatalf("save = %d notice %q", p.Status, text(p, "notice"))
	}
	if s, _ := models.TenantSettingsOf(ctx, in.DB.Read(), acme.ID); s != (models.TenantSettings{Content: models.ContentNone, OutboundRedaction: true}) {
		t.Fatalf("stored = %+v", s)
	}
	if evs := adminEvents(t, in.DB, "model.tenant_settings"); len(evs) != 1 || evs[0].Tenant != "acme" {
		t.Fatalf("events = %+v", evs)
	}

	// Key: model requests and tokens a minute.
	k, _ := newKeyIn(t, in, "acme", "limited-bot", []string{"model:chat"}, "test")
	if p := b.get("/keys/" + k.ID); p.Status != http.StatusOK || p.Doc.Find("#model_rpm").AttrOr("value", "") != "0" {
		t.Fatalf("key page = %d rpm %q", p.Status, p.Doc.Find("#model_rpm").AttrOr("value", ""))
	}
	if p := b.post("/keys/"+k.ID+"/model-limits", b.withCSRF(url.Values{"model_rpm": {"lots"}, "model_tpm": {"-3"}}), nil); p.Status != http.StatusUnprocessableEntity ||
		text(p, "error-model_rpm") == "" || p.Doc.Find("#model_rpm").AttrOr("value", "") != "lots" {
		t.Fatalf("bad limits = %d, error %q", p.Status, text(p, "error-model_rpm"))
	}
	if p := b.post("/keys/"+k.ID+"/model-limits", b.withCSRF(url.Values{"model_rpm": {"10"}, "model_tpm": {"-3"}}), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-model_tpm") == "" {
		t.Fatalf("negative tpm = %d, error %q", p.Status, text(p, "error-model_tpm"))
	}
	if p := b.post("/keys/"+k.ID+"/model-limits", b.withCSRF(url.Values{"model_rpm": {"10"}, "model_tpm": {"5000"}}), nil); text(p, "notice") == "" {
		t.Fatalf("save limits = %d", p.Status)
	}
	if l, _ := models.KeyLimitsOf(ctx, in.DB.Read(), k.ID); l != (models.KeyLimits{RPM: 10, TPM: 5000}) || len(adminEvents(t, in.DB, "model.key_limits")) != 1 {
		t.Fatalf("stored limits = %+v", l)
	}
	// Raising a limit widens the key: it waits for a second admin; erin
	// may not approve her own; frank does. Lowering applies at once.
	landed := b.post("/keys/"+k.ID+"/model-limits", b.withCSRF(url.Values{"model_rpm": {"20"}, "model_tpm": {"5000"}}), nil)
	if l, _ := models.KeyLimitsOf(ctx, in.DB.Read(), k.ID); l.RPM != 10 {
		t.Fatalf("raising the key's limit applied before a second admin approved: %+v", l)
	}
	chID := strings.TrimPrefix(landed.URL.Path, "/changes/")
	if c, err := changes.Get(ctx, in.DB.Read(), chID); err != nil || c.Kind != changes.KeyRateLimit {
		t.Fatalf("the raise landed on %s: %+v %v", landed.URL.Path, c, err)
	} else if own := b.post("/changes/"+chID+"/decide", b.withCSRF(url.Values{"decision": {"approve"}, "digest": {c.PayloadDigest}}), nil); own.Status != http.StatusForbidden {
		t.Errorf("erin approving her own raise = %d, want 403", own.Status)
	}
	if p := b.get("/keys/" + k.ID); p.Doc.Find(`[data-testid="pending-changes"] a[href="/changes/`+chID+`"]`).Length() != 1 {
		t.Error("the key's page does not show the pending raise")
	}
	approveAsFrank(t, in, landed)
	if l, _ := models.KeyLimitsOf(ctx, in.DB.Read(), k.ID); l != (models.KeyLimits{RPM: 20, TPM: 5000}) {
		t.Fatalf("after frank approved, limits = %+v", l)
	}
	if p := b.post("/keys/"+k.ID+"/model-limits", b.withCSRF(url.Values{"model_rpm": {"5"}, "model_tpm": {"5000"}}), nil); strings.HasPrefix(p.URL.Path, "/changes/") {
		t.Error("lowering the key's limit waited for a second admin")
	}
	if l, _ := models.KeyLimitsOf(ctx, in.DB.Read(), k.ID); l.RPM != 5 {
		t.Fatalf("after lowering, limits = %+v", l)
	}

	// Deployment weight and alias options on /models.
	bad := modelFormValues(up.URL + "/v1")
	bad.Set("weight", "0")
	if p := b.post("/models", b.withCSRF(bad), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-weight") == "" {
		t.Fatalf("weight 0 = %d, error %q", p.Status, text(p, "error-weight"))
	}
	withWeight := modelFormValues(up.URL + "/v1")
	withWeight.Set("weight", "3")
	if p := b.post("/models", b.withCSRF(withWeight), nil); text(p, "notice") != "Deployment added." || !strings.Contains(text(p, "model-fake-east"), "3") {
		t.Fatalf("create with weight = %d %q", p.Status, text(p, "notice"))
	}
	if p := b.post("/model-aliases", b.withCSRF(url.Values{"alias": {"chat"}, "cache_ttl": {"-5"}, "cascade": {"on"}}), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-cache_ttl") == "" {
		t.Fatalf("bad ttl = %d, error %q", p.Status, text(p, "error-cache_ttl"))
	}
	if p := b.post("/model-aliases", b.withCSRF(url.Values{"alias": {"nope"}, "cache_ttl": {"60"}}), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-alias") == "" {
		t.Fatalf("unknown alias = %d, error %q", p.Status, text(p, "error-alias"))
	}
	if s, _ := models.AliasSettingsOf(ctx, in.DB.Read(), "chat"); s.Cascade || s.CacheTTL != 0 {
		t.Fatalf("a refused change changed %+v", s)
	}
	if p := b.post("/model-aliases", b.withCSRF(url.Values{"alias": {"chat"}, "cache_ttl": {"60"}, "cascade": {"on"}}), nil); text(p, "notice") == "" ||
		!strings.Contains(text(p, "alias-chat"), "60 s") {
		t.Fatalf("alias save = %d notice %q row %q", p.Status, text(p, "notice"), text(p, "alias-chat"))
	}
	if s, _ := models.AliasSettingsOf(ctx, in.DB.Read(), "chat"); !s.Cascade || s.CacheTTL != 60 || len(adminEvents(t, in.DB, "model.alias")) != 1 {
		t.Fatalf("stored alias options = %+v", s)
	}

	// Not an admin: refused, nothing changes.
	other := newBrowser(t, in.URL)
	other.loginDev("alice")
	other.get("/")
	for path, form := range map[string]url.Values{
		"/tenants/acme/model-settings":    {"model_content": {"redacted"}},
		"/keys/" + k.ID + "/model-limits": {"model_rpm": {"0"}, "model_tpm": {"0"}},
		"/model-aliases":                  {"alias": {"chat"}, "cache_ttl": {"0"}},
	} {
		if p := other.post(path, other.withCSRF(form), nil); p.Status != http.StatusForbidden {
			t.Errorf("alice POST %s = %d, want 403", path, p.Status)
		}
	}
	if s, _ := models.TenantSettingsOf(ctx, in.DB.Read(), acme.ID); s.Content != models.ContentNone {
		t.Fatalf("a refused change changed %+v", s)
	}
}

// Switching a deployment off asks first, like every other switch: the
// confirmation says what stops and takes a required reason, redacted and
// kept in the audit event. Switching on is one press; pressing either
// twice records nothing; approvers may do neither.
func TestModelSwitchOffConfirmsWithAReason(t *testing.T) {
	in, b := adminSession(t, "erin")
	up := httptest.NewServer(fakeupstream.New())
	t.Cleanup(up.Close)
	ctx := context.Background()
	for _, name := range []string{"fake-east", "fake-west"} {
		f := modelFormValues(up.URL + "/v1")
		f.Set("name", name)
		if p := b.post("/models", b.withCSRF(f), nil); text(p, "notice") != "Deployment added." {
			t.Fatalf("create %s = %d, notice %q", name, p.Status, text(p, "notice"))
		}
	}
	enabled := func(name string) bool {
		t.Helper()
		d, err := models.Get(ctx, in.DB.Read(), name)
		if err != nil {
			t.Fatal(err)
		}
		return d.Enabled
	}

	// The Models page's button leads to the confirmation.
	list := b.get("/models")
	if href, _ := list.Doc.Find(`[data-testid="model-disable-fake-east"]`).Attr("href"); href != "/models/fake-east/disable" {
		t.Fatalf("the Switch off button of fake-east leads to %q, want its confirmation", href)
	}
	confirm := b.get("/models/fake-east/disable")
	effect := text(confirm, "model-disable-effect")
	if confirm.Status != http.StatusOK || !strings.Contains(effect, "fake-east") || !strings.Contains(effect, "alias chat") ||
		!strings.Contains(effect, "other deployments that are on: fake-west") || confirm.Doc.Find(`textarea[name="reason"][required]`).Length() != 1 {
		t.Fatalf("confirmation = %d, effect %q, want what stops, where calls go and a required reason", confirm.Status, effect)
	}

	// Refused: no reason, a reason too long, no CSRF token. Nothing changes.
	long := strings.Repeat("x", models.MaxSwitchReason+1)
	for _, c := range []struct {
		name, reason string
		csrf         bool
		status       int
	}{
		{"no reason", "   ", true, http.StatusUnprocessableEntity},
		{"a reason too long", long, true, http.StatusUnprocessableEntity},
		{"no CSRF token", "provider incident", false, http.StatusForbidden},
	} {
		form := url.Values{"reason": {c.reason}}
		if c.csrf {
			form = b.withCSRF(form)
		}
		p := b.post("/models/fake-east/disable", form, nil)
		if p.Status != c.status {
			t.Errorf("%s: POST = %d, want %d", c.name, p.Status, c.status)
		}
		if c.status == http.StatusUnprocessableEntity {
			if text(p, "error-reason") == "" || p.Doc.Find(`textarea[name="reason"]`).Text() != c.reason {
				t.Errorf("%s: error %q, reason kept %q; want an error and the input as typed", c.name, text(p, "error-reason"), p.Doc.Find(`textarea[name="reason"]`).Text())
			}
		}
		if !enabled("fake-east") || len(adminEvents(t, in.DB, "model.disable")) != 0 {
			t.Fatalf("%s: fake-east switched off or recorded", c.name)
		}
	}

	// With a reason: off, audited with the reason, redacted.
	const email = "jane.doe+planted@example.com"
	form := b.withCSRF(url.Values{"reason": {"INC-12: provider answers 500, reported by " + email}})
	p := b.post("/models/fake-east/disable", form, nil)
	if p.Status != http.StatusOK || text(p, "notice") != "Deployment switched off: calls to its alias skip it." || enabled("fake-east") {
		t.Fatalf("switch off = %d, notice %q, enabled %v", p.Status, text(p, "notice"), enabled("fake-east"))
	}
	evs := adminEvents(t, in.DB, "model.disable")
	if len(evs) != 1 {
		t.Fatalf("model.disable events = %d, want 1", len(evs))
	}
	reason, _ := evs[0].Details["reason"].(string)
	if evs[0].Subject.ID != "fake-east" || evs[0].Details["alias"] != "chat" || evs[0].Actor.ID == "" ||
		!strings.HasPrefix(reason, "INC-12: provider answers 500") || strings.Contains(reason, email) {
		t.Errorf("model.disable = %v by %q, reason %q; want fake-east of chat with the reason, the e-mail redacted", evs[0].Subject, evs[0].Actor.ID, reason)
	}
	// Pressed again: nothing more.
	if p := b.post("/models/fake-east/disable", form, nil); text(p, "notice") != "The deployment was already off; nothing changed." || len(adminEvents(t, in.DB, "model.disable")) != 1 {
		t.Errorf("second press: notice %q, %d events", text(p, "notice"), len(adminEvents(t, in.DB, "model.disable")))
	}

	// The last deployment on: the confirmation says calls will fail.
	if effect := text(b.get("/models/fake-west/disable"), "model-disable-effect"); !strings.Contains(effect, "last deployment of chat") || !strings.Contains(effect, "404 model_not_found") {
		t.Errorf("confirmation for the last deployment: %q", effect)
	}

	// An approver may not switch: 403, nothing changes.
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	if p := alice.get("/models/fake-west/disable"); p.Status != http.StatusForbidden {
		t.Errorf("alice GET the confirmation = %d, want 403", p.Status)
	}
	if p := alice.post("/models/fake-west/disable", alice.withCSRF(url.Values{"reason": {"trying"}}), nil); p.Status != http.StatusForbidden || !enabled("fake-west") {
		t.Errorf("alice POST = %d, fake-west on %v; want 403 and on", p.Status, enabled("fake-west"))
	}
	if p := alice.post("/models/fake-east/enable", alice.withCSRF(nil), nil); p.Status != http.StatusForbidden || enabled("fake-east") {
		t.Errorf("alice switching on = %d, fake-east on %v; want 403 and off", p.Status, enabled("fake-east"))
	}

	// On again: one press, once.
	list = b.get("/models")
	if list.Doc.Find(`form[action="/models/fake-east/enable"] [data-testid="model-enable-fake-east"]`).Length() != 1 {
		t.Error("the Models page offers no one-press Switch on for fake-east")
	}
	for i, want := range []string{"Deployment switched on.", "The deployment was already on; nothing changed."} {
		if p := b.post("/models/fake-east/enable", b.withCSRF(nil), nil); text(p, "notice") != want {
			t.Errorf("switch on #%d: notice %q, want %q", i+1, text(p, "notice"), want)
		}
	}
	if evs := adminEvents(t, in.DB, "model.enable"); !enabled("fake-east") || len(evs) != 1 || evs[0].Details["reason"] != nil {
		t.Errorf("after switching on twice: on %v, %d model.enable events", enabled("fake-east"), len(evs))
	}
}

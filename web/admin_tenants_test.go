package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wardenhq/warden/tenants"
)

func TestAdminTenantCreateAppearsAndIsAudited(t *testing.T) {
	in, b := adminSession(t, "erin")

	list := b.get("/tenants")
	if list.Doc.Find(`[data-testid="tenant-create-form"]`).Length() != 1 {
		t.Fatalf("erin's /tenants has no create form:\n%s", list.Body)
	}
	p := b.post("/tenants", b.withCSRF(url.Values{"slug": {"globex"}, "name": {"  Globex Inc.  "}}), nil)
	if p.Status != http.StatusOK || p.URL.Path != "/tenants/globex" {
		t.Fatalf("create ended at %s (%d), want /tenants/globex", p.URL, p.Status)
	}
	if got := text(p, "notice"); !strings.HasPrefix(got, "Tenant created") {
		t.Errorf("notice = %q, want Tenant created", got)
	}
	list = b.get("/tenants")
	if got := text(list, "tenant-name-globex"); got != "Globex Inc." {
		t.Errorf("list shows globex named %q, want %q (trimmed)", got, "Globex Inc.")
	}
	if got := text(list, "tenant-state-globex"); got != "active" {
		t.Errorf("globex state = %q, want active", got)
	}
	tn := adminTenantBySlug(t, in.DB, "globex")
	if tn.RetentionDays != 30 {
		t.Errorf("new tenant retention = %d, want the default 30", tn.RetentionDays)
	}
	evs := adminEvents(t, in.DB, "tenant.create")
	if len(evs) != 1 {
		t.Fatalf("tenant.create events = %d, want 1", len(evs))
	}
	ev := evs[0]
	if ev.Tenant != "globex" || ev.Subject.Type != "tenant" || ev.Subject.ID != tn.ID || ev.Actor.Type != "principal" || ev.Details["name"] != "Globex Inc." {
		t.Errorf("tenant.create event = %+v, want tenant globex, subject tenant/%s, by a principal, name in details", ev, tn.ID)
	}
}

func TestAdminTenantCreateRefusesBadInput(t *testing.T) {
	in, b := adminSession(t, "erin")
	before := auditCount(t, in.DB)
	tests := []struct {
		name, slug, tenantName string
		field, wantMsg         string
	}{
		{"upper case", "Globex", "Globex", "slug", "Use 2–63 lower-case letters"},
		{"too short", "g", "Globex", "slug", "Use 2–63 lower-case letters"},
		{"spaces", "glo bex", "Globex", "slug", "Use 2–63 lower-case letters"},
		{"too long", strings.Repeat("a", 64), "Globex", "slug", "Use 2–63 lower-case letters"},
		{"duplicate", "acme", "Another Acme", "slug", "There is already a tenant acme"},
		{"no name", "globex", "   ", "name", "Give the tenant a name"},
	}
	for _, tt := range tests {
		p := b.post("/tenants", b.withCSRF(url.Values{"slug": {tt.slug}, "name": {tt.tenantName}}), nil)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", tt.name, p.Status)
			continue
		}
		if got := text(p, "error-"+tt.field); !strings.Contains(got, tt.wantMsg) {
			t.Errorf("%s: error on %s = %q, want it to contain %q", tt.name, tt.field, got, tt.wantMsg)
		}
		if got, _ := p.Doc.Find(`input[name="slug"]`).Attr("value"); got != tt.slug {
			t.Errorf("%s: slug input = %q, want the typed %q kept", tt.name, got, tt.slug)
		}
		if got, _ := p.Doc.Find(`input[name="name"]`).Attr("value"); got != tt.tenantName {
			t.Errorf("%s: name input = %q, want the typed %q kept", tt.name, got, tt.tenantName)
		}
		if aria, _ := p.Doc.Find(`input[name="` + tt.field + `"]`).Attr("aria-invalid"); aria != "true" {
			t.Errorf("%s: the %s input is not marked aria-invalid", tt.name, tt.field)
		}
	}
	if got := auditCount(t, in.DB); got != before {
		t.Errorf("audit events %d after refused creates, want %d", got, before)
	}
	ts, err := tenants.List(t.Context(), in.DB, nil)
	if err != nil || len(ts) != 1 || ts[0].Name != "Acme" {
		t.Errorf("tenants after refused creates = %+v (%v), want only the unchanged acme", ts, err)
	}
}

func TestAdminTenantFreezeNeedsConfirmationAndIsIdempotent(t *testing.T) {
	in, b := adminSession(t, "erin")
	acme := adminTenantBySlug(t, in.DB, "acme")

	confirm := b.get("/tenants/acme/freeze")
	if confirm.Status != http.StatusOK {
		t.Fatalf("GET freeze confirm = %d", confirm.Status)
	}
	if got := text(confirm, "confirm-effect"); !strings.Contains(got, "acme") || !strings.Contains(got, "403 tenant_frozen") || !strings.Contains(got, "until the tenant is unfrozen") {
		t.Errorf("confirm page says %q, want the effect on acme's agents", got)
	}
	if adminTenantBySlug(t, in.DB, "acme").Frozen {
		t.Fatal("opening the confirmation froze the tenant")
	}
	action, _ := confirm.Doc.Find(`[data-testid="confirm"] form`).Attr("action")
	if action != "/tenants/acme/freeze" {
		t.Fatalf("confirm form posts to %q", action)
	}

	// A reason is required: without one the confirmation comes back and
	// nothing changes or is recorded.
	n := auditCount(t, in.DB)
	p := b.post(action, b.withCSRF(nil), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-reason") == "" || auditCount(t, in.DB) != n || adminTenantBySlug(t, in.DB, "acme").Frozen {
		t.Fatalf("freeze without a reason = %d (error %q), %d events; want 422, nothing frozen or recorded", p.Status, text(p, "error-reason"), auditCount(t, in.DB)-n)
	}
	p = b.post(action, b.withCSRF(url.Values{"reason": {"INC-12: leaked key"}}), nil)
	if got := text(p, "tenant-freeze-reason"); got != "Reason: INC-12: leaked key" {
		t.Errorf("tenant page shows %q, want the freeze's reason", got)
	}
	if p.URL.Path != "/tenants/acme" || p.Status != http.StatusOK {
		t.Fatalf("freeze ended at %s (%d)", p.URL, p.Status)
	}
	if got := text(p, "tenant-state"); !strings.Contains(got, "frozen") {
		t.Errorf("tenant page state = %q, want frozen", got)
	}
	if got := text(b.get("/tenants"), "tenant-state-acme"); got != "frozen" {
		t.Errorf("list state = %q, want frozen", got)
	}
	if !adminTenantBySlug(t, in.DB, "acme").Frozen {
		t.Error("acme is not frozen in the database")
	}
	evs := adminEvents(t, in.DB, "tenant.freeze")
	if len(evs) != 1 || evs[0].Tenant != "acme" || evs[0].Subject.ID != acme.ID {
		t.Fatalf("tenant.freeze events = %+v, want one for acme", evs)
	}
	if r, _ := evs[0].Details["reason"].(string); r != "INC-12: leaked key" {
		t.Errorf("tenant.freeze reason = %q, want the one typed", r)
	}

	// Again: nothing changes, nothing is recorded, and the page says so.
	before := auditCount(t, in.DB)
	p = b.post("/tenants/acme/freeze", b.withCSRF(url.Values{"reason": {"again"}}), nil)
	if got := text(p, "notice"); !strings.Contains(got, "already frozen") {
		t.Errorf("second freeze notice = %q, want already frozen", got)
	}
	if got := auditCount(t, in.DB); got != before {
		t.Errorf("second freeze wrote %d audit events, want 0", got-before)
	}

	// Unfreeze the same way.
	if got := text(b.get("/tenants/acme/unfreeze"), "confirm-effect"); !strings.Contains(got, "can call the API again") {
		t.Errorf("unfreeze confirm says %q", got)
	}
	// Unfreezing loosens: it waits for a second admin (docs/changes.md).
	landed := b.post("/tenants/acme/unfreeze", b.withCSRF(nil), nil)
	if !adminTenantBySlug(t, in.DB, "acme").Frozen {
		t.Fatal("asking to unfreeze acme unfroze it before a second admin approved")
	}
	approveAsFrank(t, in, landed)
	if adminTenantBySlug(t, in.DB, "acme").Frozen {
		t.Error("acme still frozen after frank approved the unfreeze")
	}
	if evs := adminEvents(t, in.DB, "tenant.unfreeze"); len(evs) != 1 {
		t.Errorf("tenant.unfreeze events = %d, want 1", len(evs))
	}
}

func TestAdminTenantRenameAndRetention(t *testing.T) {
	in, b := adminSession(t, "erin")

	p := b.post("/tenants/acme/rename", b.withCSRF(url.Values{"name": {"Acme Corporation"}}), nil)
	if p.URL.Path != "/tenants/acme" || text(p, "tenant-title") != "Acme Corporation" {
		t.Fatalf("rename ended at %s with title %q", p.URL, text(p, "tenant-title"))
	}
	if evs := adminEvents(t, in.DB, "tenant.rename"); len(evs) != 1 || evs[0].Details["from"] != "Acme" || evs[0].Details["to"] != "Acme Corporation" {
		t.Errorf("tenant.rename events = %+v, want one from Acme to Acme Corporation", evs)
	}

	p = b.post("/tenants/acme/retention", b.withCSRF(url.Values{"retention_days": {"90"}}), nil)
	if got := text(p, "tenant-retention"); got != "90 days" {
		t.Errorf("retention shown = %q, want 90 days", got)
	}
	if got := adminTenantBySlug(t, in.DB, "acme").RetentionDays; got != 90 {
		t.Errorf("stored retention = %d, want 90", got)
	}
	if evs := adminEvents(t, in.DB, "tenant.retention"); len(evs) != 1 {
		t.Errorf("tenant.retention events = %d, want 1", len(evs))
	}

	before := auditCount(t, in.DB)
	for _, bad := range []string{"0", "3651", "-5", "ninety", ""} {
		p := b.post("/tenants/acme/retention", b.withCSRF(url.Values{"retention_days": {bad}}), nil)
		if p.Status != http.StatusUnprocessableEntity || text(p, "error-retention_days") == "" {
			t.Errorf("retention %q: status %d, error %q; want 422 with a message", bad, p.Status, text(p, "error-retention_days"))
		}
		if got, _ := p.Doc.Find(`input[name="retention_days"]`).Attr("value"); got != bad {
			t.Errorf("retention %q: input shows %q, want the typed value", bad, got)
		}
	}
	p = b.post("/tenants/acme/rename", b.withCSRF(url.Values{"name": {" "}}), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-name") == "" {
		t.Errorf("empty rename: status %d, error %q", p.Status, text(p, "error-name"))
	}
	tn := adminTenantBySlug(t, in.DB, "acme")
	if tn.RetentionDays != 90 || tn.Name != "Acme Corporation" {
		t.Errorf("after refused changes tenant = %+v, want unchanged", tn)
	}
	if got := auditCount(t, in.DB); got != before {
		t.Errorf("refused changes wrote %d audit events", got-before)
	}
	if got := b.get("/tenants/nope"); got.Status != http.StatusNotFound {
		t.Errorf("unknown tenant page = %d, want 404", got.Status)
	}
}

func TestAdminHTMLInjectionIsEscaped(t *testing.T) {
	_, b := adminSession(t, "erin")
	const evil = `<script>alert(1)</script>`
	const evilAttr = `"><img src=x onerror=alert(2)>`
	p := b.post("/tenants", b.withCSRF(url.Values{"slug": {"evil"}, "name": {evil}}), nil)
	if p.Status != http.StatusOK {
		t.Fatalf("creating the tenant = %d", p.Status)
	}
	key := b.post("/keys", b.withCSRF(url.Values{
		"tenant": {"evil"}, "name": {evilAttr}, "scopes": {"tool:lookup_order"}, "rate_per_min": {"600"}, "burst": {"60"},
	}), nil)
	if key.Status != http.StatusOK {
		t.Fatalf("creating the key = %d: %s", key.Status, text(key, "form-errors"))
	}
	pages := []string{"/tenants", "/tenants/evil", "/tenants/evil/freeze", "/keys", "/keys/new", "/budgets", "/traces"}
	for _, path := range pages {
		p := b.get(path)
		if p.Status != http.StatusOK {
			t.Errorf("GET %s = %d", path, p.Status)
			continue
		}
		for _, raw := range []string{evil, "<img src=x"} {
			if strings.Contains(p.Body, raw) {
				t.Errorf("GET %s contains the raw markup %q", path, raw)
			}
		}
		if p.Doc.Find(`script:not([src="/static/menu.js"])`).Length() != 0 || p.Doc.Find("img").Length() != 0 {
			t.Errorf("GET %s: injected elements were parsed into the page", path)
		}
	}
	if got := text(b.get("/tenants"), "tenant-name-evil"); got != evil {
		t.Errorf("the tenant name reads %q, want it shown as text %q", got, evil)
	}
	if !strings.Contains(b.get("/keys").Doc.Find(`[data-testid="keys-table"]`).Text(), evilAttr) {
		t.Error("the key name is not shown as text on /keys")
	}
}

func TestAdminTenantDualControlDecidesApprovalsRequired(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("erin")

	p := b.post("/tenants/acme/dual-control", b.withCSRF(url.Values{"dual_control": {"40.00"}}), nil)
	if got := text(p, "tenant-dual-control"); got != "$40.00" {
		t.Fatalf("threshold shown = %q, want $40.00", got)
	}
	if evs := adminEvents(t, in.DB, "tenant.dual_control"); len(evs) != 1 {
		t.Errorf("tenant.dual_control events = %d, want 1", len(evs))
	}
	for _, bad := range []string{"-1", "ten", "1.005"} {
		if p := b.post("/tenants/acme/dual-control", b.withCSRF(url.Values{"dual_control": {bad}}), nil); p.Status != http.StatusUnprocessableEntity || text(p, "error-dual_control") == "" {
			t.Errorf("threshold %q = %d, want 422 with a message", bad, p.Status)
		}
	}
	// A $45.50 refund is now at or above the threshold: two approvers.
	r := journey(t, in, in.DemoKey, "The customer was charged twice for ORD-1005, refund $45.50 please", nil)
	action, _ := r.Body["action"].(map[string]any)
	if action == nil || action["approvals_required"] != float64(2) {
		t.Errorf("action = %v, want 2 approvals required under the new threshold", action)
	}
}

// A threshold of 0 switches dual control off, the one surprising
// loosening: without the confirmation box it is refused with a 422 that
// says what 0 means, and nothing is saved; ticked, it is saved, and the
// notice says actions already waiting keep their approvers — which they
// do.
func TestAdminTenantDualControlOffNeedsConfirmation(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev("erin")
	b.post("/tenants/acme/dual-control", b.withCSRF(url.Values{"dual_control": {"40.00"}}), nil)
	waiting := journey(t, in, in.DemoKey, "The customer was charged twice for ORD-1005, refund $45.50 please", nil)
	waitingAction, _ := waiting.Body["action"].(map[string]any)
	if waitingAction == nil || waitingAction["approvals_required"] != float64(2) {
		t.Fatalf("action = %v, want 2 approvals required over a $40 threshold", waitingAction)
	}
	before := auditCount(t, in.DB)

	form := b.get("/tenants/acme")
	if help := text(form, "tenant-dual-control-form"); !strings.Contains(help, "0 switches dual control off") || form.Doc.Find(`[data-testid="dual-control-confirm-off"]`).Length() != 1 {
		t.Errorf("the threshold form does not say what 0 means or has no confirmation box: %q", help)
	}
	p := b.post("/tenants/acme/dual-control", b.withCSRF(url.Values{"dual_control": {"0"}}), nil)
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(text(p, "error-confirm_off"), "one approver will be enough for any amount") {
		t.Errorf("0 without confirmation = %d (error %q), want 422 saying what 0 does", p.Status, text(p, "error-confirm_off"))
	}
	if got := text(p, "tenant-dual-control"); got != "$40.00" || auditCount(t, in.DB) != before {
		t.Errorf("after a refused 0: threshold %q, %d new events; want $40.00 kept, none", got, auditCount(t, in.DB)-before)
	}

	// Switching dual control off loosens it: frank approves.
	approveAsFrank(t, in, b.post("/tenants/acme/dual-control", b.withCSRF(url.Values{"dual_control": {"0"}, "confirm_off": {"yes"}}), nil))
	p = b.get("/tenants/acme")
	if got := text(p, "threshold-USD"); !strings.Contains(got, "never") {
		t.Errorf("USD threshold row = %q, want never (one approver)", got)
	}
	// What the notice says: the waiting action still needs two; a new one
	// needs one.
	if a := approvalsRequired(t, in, waitingAction["id"].(string)); a != 2 {
		t.Errorf("the waiting action now needs %d approvers, want still 2", a)
	}
	r := journey(t, in, in.DemoKey, "The customer was charged twice for ORD-1004, refund $45.50 please", nil)
	if action, _ := r.Body["action"].(map[string]any); action == nil || action["approvals_required"] != float64(1) {
		t.Errorf("new action = %v, want 1 approval required with dual control off", action)
	}
}

func approvalsRequired(t *testing.T, in *instance, id string) int {
	t.Helper()
	return countRows(t, in.DB, `SELECT approvals_required FROM actions WHERE id = ?`, id)
}

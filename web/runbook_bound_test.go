package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/store"
)

// failTool records n failed refunds journeys of acme in the last minute,
// each ending on a failed call of tool, and evaluates the alert rules.
func failTool(t *testing.T, in *instance, prefix, tool string, n int) {
	t.Helper()
	acme := tenantID(t, in, "acme")
	for i := range n {
		id := fmt.Sprint(prefix, i)
		if _, err := in.DB.Read().Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, skill, release_digest, status, error_code, latency_ms, created_at)
			VALUES (?, ?, 'r', 'c', 'refunds', 'sha256:x', ?, 'dependency_unavailable', 100, ?)`, id, acme, journeys.StatusFailed, store.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := in.DB.Read().Exec(`INSERT INTO journey_steps (journey_id, n, kind, tool, status, started_at) VALUES (?, 1, 'tool', ?, 'failed', ?)`,
			id, tool, store.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alerts.Evaluate(context.Background(), in.DB, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// confirmForm is the confirmation page's form as a browser would send it.
func confirmForm(p page, reason string) url.Values {
	form := url.Values{}
	p.Doc.Find(`form input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		value, _ := s.Attr("value")
		form.Set(name, value)
	})
	form.Set("reason", reason)
	return form
}

// A runbook's parameters are bound into its confirmation: the page shows
// the values the alert resolved to, the press runs exactly those, and if
// the alert now names others (or the form was altered) nothing changes.
func TestRunbookPressRunsTheConfirmedValues(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	acme := tenantID(t, in, "acme")
	failTool(t, in, "jlook", "lookup_order", 20)
	var alertID string
	if err := in.DB.Read().QueryRow(`SELECT id FROM alerts WHERE kind = 'failure_rate' AND subject = 'refunds'`).Scan(&alertID); err != nil {
		t.Fatal(err)
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	path := "/runbooks/tool-provider-outage/actions/switch-off-tool"
	confirm := carol.get(path + "?alert=" + alertID)
	if confirm.Status != http.StatusOK || text(confirm, "runbook-bound-tool") != "lookup_order" || text(confirm, "runbook-bound-tenant") != "acme" {
		t.Fatalf("confirmation = %d showing tool %q tenant %q, want lookup_order for acme", confirm.Status,
			text(confirm, "runbook-bound-tool"), text(confirm, "runbook-bound-tenant"))
	}
	stale := confirmForm(confirm, "provider down")

	// The failures move to issue_refund while the page is open.
	failTool(t, in, "jrefund", "issue_refund", 40)
	before := auditCount(t, in.DB)
	r := carol.post(path, carol.withCSRF(stale), nil)
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, "The alert changed since you confirmed") ||
		!strings.Contains(r.Body, "tool is now issue_refund (you confirmed lookup_order)") {
		t.Errorf("press after the alert changed = %d %.300q, want 409 saying the alert changed", r.Status, text(r, "problem-detail")+r.Body)
	}
	for _, tool := range []string{"lookup_order", "issue_refund"} {
		if off, _ := catalog.OffForTenant(ctx, in.DB.Read(), tool, acme); off {
			t.Errorf("%s was switched off for acme by a refused press", tool)
		}
	}
	if auditCount(t, in.DB) != before || countRows(t, in.DB, `SELECT COUNT(*) FROM runbook_runs`) != 0 {
		t.Error("a refused press was recorded")
	}

	// A value altered in the form is refused, even one the alert once named.
	fresh := carol.get(path + "?alert=" + alertID)
	if text(fresh, "runbook-bound-tool") != "issue_refund" {
		t.Fatalf("fresh confirmation shows tool %q, want issue_refund", text(fresh, "runbook-bound-tool"))
	}
	tampered := confirmForm(fresh, "provider down")
	tampered.Set("param_tool", "lookup_order")
	if r := carol.post(path, carol.withCSRF(tampered), nil); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "were altered in the form") {
		t.Errorf("tampered press = %d, want 400 confirmation_altered", r.Status)
	}
	noSeal := confirmForm(fresh, "provider down")
	noSeal.Del("bound")
	if r := carol.post(path, carol.withCSRF(noSeal), nil); r.Status != http.StatusBadRequest {
		t.Errorf("press without the sealed values = %d, want 400", r.Status)
	}
	for _, tool := range []string{"lookup_order", "issue_refund"} {
		if off, _ := catalog.OffForTenant(ctx, in.DB.Read(), tool, acme); off {
			t.Errorf("%s was switched off for acme by a refused press", tool)
		}
	}

	// The confirmed values run.
	done := carol.post(path, carol.withCSRF(confirmForm(fresh, "provider down")), nil)
	if done.Status != http.StatusOK || text(done, "run-status") != "Done" && !strings.Contains(done.Body, "done") {
		t.Fatalf("press of the fresh confirmation = %d %q", done.Status, text(done, "run-outcome"))
	}
	if off, _ := catalog.OffForTenant(ctx, in.DB.Read(), "issue_refund", acme); !off {
		t.Error("issue_refund is not off for acme after the confirmed press")
	}
	if off, _ := catalog.OffForTenant(ctx, in.DB.Read(), "lookup_order", acme); off {
		t.Error("lookup_order was switched off, which the press did not confirm")
	}
}

package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tenants"
)

// approveAsFrank takes a page that landed on a pending change, checks it
// is one, and approves it as frank, the second admin; it returns the
// change's page after the approval.
func approveAsFrank(t *testing.T, in *instance, landed page) page {
	t.Helper()
	if !strings.HasPrefix(landed.URL.Path, "/changes/chg_") || !strings.Contains(text(landed, "notice"), "second admin") {
		t.Fatalf("the loosening change landed on %s (%d) %q, want its pending change", landed.URL, landed.Status, text(landed, "notice"))
	}
	f := newBrowser(t, in.URL)
	f.loginDev("frank")
	cp := f.get(landed.URL.Path)
	digest, _ := cp.Doc.Find(`input[name="digest"]`).Attr("value")
	p := f.post(landed.URL.Path+"/decide", f.withCSRF(url.Values{"decision": {"approve"}, "digest": {digest}}), nil)
	if p.Status != http.StatusOK || !strings.Contains(text(p, "change-status"), "applied") {
		t.Fatalf("frank approving %s: %d %q", landed.URL.Path, p.Status, text(p, "change-status"))
	}
	return p
}

// TestLooseningChangesWaitForASecondAdmin drives every governed kind
// through the console: asked by erin, nothing changes and the change is
// pending; erin may not approve it; frank approves and it applies. The
// same forms tighten at once.
func TestLooseningChangesWaitForASecondAdmin(t *testing.T) {
	in, erin := adminSession(t, "erin")
	ctx := context.Background()
	acme := adminTenantBySlug(t, in.DB, "acme")
	if _, err := budgets.SetAudited(ctx, in.DB, testActor, budgets.Spec{TenantID: acme.ID, Period: budgets.Day, LimitMicros: 10_000_000, AlertPercent: 80}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Switch(ctx, in.DB, testActor, "issue_refund", false, "INC-1"); err != nil {
		t.Fatal(err)
	}
	threshold := func() int64 {
		m, _ := tenants.ThresholdFor(ctx, in.DB.Read(), acme.ID, "USD")
		return m
	}
	toolOn := func() bool { tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); return tl.Enabled }
	toolImpact := func() risk.Impact { tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); return tl.Impact }
	limit := func() int64 { b, _ := budgets.Get(ctx, in.DB.Read(), acme.ID); return b.LimitMicros }
	window := func() int { tn := adminTenantBySlug(t, in.DB, "acme"); return int(tn.DualControlWindow.Hours()) }
	hosts := func() string { h, _ := models.AllowedHosts(ctx, in.DB.Read()); return strings.Join(h, " ") }
	toolForm := func(impact string) url.Values {
		form := toolFormValues()
		form.Set("description", "Refund an order")
		form.Set("reversibility", "irreversible")
		form.Set("impact", impact)
		return form
	}

	kinds := []struct {
		kind   string
		path   string
		form   url.Values
		before func() string
	}{
		{changes.DualControl, "/tenants/acme/dual-control", url.Values{"currency": {"USD"}, "dual_control": {"1000000.00"}}, func() string { return strconv.FormatInt(threshold(), 10) }},
		{changes.DualControlWindow, "/tenants/acme/dual-control-window", url.Values{"window_hours": {"1"}}, func() string { return strconv.Itoa(window()) }},
		{changes.ToolSwitch, "/tools/issue_refund/enable", url.Values{}, func() string { return strconv.FormatBool(toolOn()) }},
		{changes.ToolRisk, "/tools/issue_refund", nil, func() string { return string(toolImpact()) }},
		{changes.BudgetLimit, "/budgets/acme", url.Values{"period": {"day"}, "limit": {"500"}, "alert_percent": {"80"}}, func() string { return strconv.FormatInt(limit(), 10) }},
		{changes.AllowHost, "/model-allowed-hosts", url.Values{"allowed_hosts": {"llm.corp.internal"}}, hosts},
	}
	for _, k := range kinds {
		form := k.form
		if form == nil {
			form = toolForm("low")
		}
		form.Set("change_reason", "INC-42 "+k.kind)
		was := k.before()
		landed := erin.post(k.path, erin.withCSRF(form), nil)
		if got := k.before(); got != was {
			t.Errorf("%s: asking changed it from %s to %s before a second admin approved", k.kind, was, got)
		}
		if text(landed, "change-reason") != "INC-42 "+k.kind || text(landed, "change-requested-by") == "" {
			t.Errorf("%s: the pending change shows reason %q, asked by %q", k.kind, text(landed, "change-reason"), text(landed, "change-requested-by"))
		}
		// The requester is refused, even with the right digest.
		digest, _ := landed.Doc.Find(`input[name="digest"]`).Attr("value")
		if text(landed, "change-why") == "" || digest != "" {
			t.Errorf("%s: the requester is offered the decision", k.kind)
		}
		id := strings.TrimPrefix(landed.URL.Path, "/changes/")
		c, _ := changes.Get(ctx, in.DB.Read(), id)
		own := erin.post("/changes/"+id+"/decide", erin.withCSRF(url.Values{"decision": {"approve"}, "digest": {c.PayloadDigest}}), nil)
		if own.Status != http.StatusForbidden || k.before() != was {
			t.Errorf("%s: the requester approving = %d, value %s; want 403 and unchanged", k.kind, own.Status, k.before())
		}
		approveAsFrank(t, in, landed)
		if got := k.before(); got == was {
			t.Errorf("%s: still %s after frank approved", k.kind, got)
		}
	}
	if threshold() != 100_000_000 || window() != 1 || !toolOn() || toolImpact() != risk.ImpactLow || limit() != 500_000_000 || hosts() != "llm.corp.internal" {
		t.Errorf("after approvals: threshold %d, window %d, tool on %v, impact %s, limit %d, hosts %q", threshold(), window(), toolOn(), toolImpact(), limit(), hosts())
	}

	// Tightening applies at once, with no change recorded.
	tight := []struct {
		path string
		form url.Values
		ok   func() bool
	}{
		{"/tenants/acme/dual-control", url.Values{"currency": {"USD"}, "dual_control": {"500.00"}}, func() bool { return threshold() == 50_000 }},
		{"/tenants/acme/dual-control-window", url.Values{"window_hours": {"48"}}, func() bool { return window() == 48 }},
		{"/budgets/acme", url.Values{"period": {"day"}, "limit": {"100"}, "alert_percent": {"80"}}, func() bool { return limit() == 100_000_000 }},
		{"/tools/issue_refund", toolForm("high"), func() bool { return toolImpact() == risk.ImpactHigh }},
		{"/model-allowed-hosts", url.Values{"allowed_hosts": {""}}, func() bool { return hosts() == "" }},
	}
	for _, tt := range tight {
		p := erin.post(tt.path, erin.withCSRF(tt.form), nil)
		if strings.HasPrefix(p.URL.Path, "/changes/") || !tt.ok() {
			t.Errorf("tightening %s landed on %s (%d); applied %v, want at once", tt.path, p.URL.Path, p.Status, tt.ok())
		}
	}
	p := erin.post("/tools/issue_refund/disable", erin.withCSRF(url.Values{"reason": {"INC-43"}}), nil)
	if toolOn() || strings.HasPrefix(p.URL.Path, "/changes/") {
		t.Errorf("switching off landed on %s; tool on %v, want off at once", p.URL.Path, toolOn())
	}
}

package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/budgets"
)

func TestAdminBudgetSetStoresExactMicros(t *testing.T) {
	in, b := adminSession(t, "erin")
	acme := adminTenantBySlug(t, in.DB, "acme")

	p := b.get("/budgets")
	if got := text(p, "budget-none-acme"); !strings.Contains(got, "cannot run journeys") {
		t.Errorf("acme without a budget says %q", got)
	}
	// A first budget loosens (without one nothing runs): frank approves it.
	approveAsFrank(t, in, b.post("/budgets/acme", b.withCSRF(url.Values{"period": {"month"}, "limit": {"250.00"}, "alert_percent": {"80"}}), nil))
	p = b.get("/budgets")
	if p.Status != http.StatusOK || p.URL.Path != "/budgets" {
		t.Fatalf("save ended at %s (%d): %s", p.URL, p.Status, text(p, "form-errors"))
	}
	got, err := budgets.Get(context.Background(), in.DB.Read(), acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LimitMicros != 250_000_000 || got.Period != budgets.Month || got.AlertPercent != 80 {
		t.Errorf("stored budget = %+v, want 250_000_000 micros a month, alert 80", got)
	}
	if s := text(p, "budget-limit-acme"); s != "$250.00" {
		t.Errorf("limit shown = %q, want $250.00", s)
	}
	if v, _ := p.Doc.Find(`#acme-limit`).Attr("value"); v != "250.00" {
		t.Errorf("limit input = %q, want 250.00", v)
	}
	evs := adminEvents(t, in.DB, "budget.set")
	if len(evs) != 1 || evs[0].Tenant != "acme" || evs[0].Details["limit_micros"] == nil || evs[0].Details["period"] != "month" {
		t.Fatalf("budget.set events = %+v", evs)
	}
	if n := evs[0].Details["limit_micros"]; fmt.Sprint(n) != "250000000" {
		t.Errorf("audited limit = %v, want 250000000", n)
	}
	// Saving the same values again changes and records nothing.
	before := auditCount(t, in.DB)
	p = b.post("/budgets/acme", b.withCSRF(url.Values{"period": {"month"}, "limit": {"250"}, "alert_percent": {"80"}}), nil)
	if !strings.Contains(text(p, "notice"), "nothing changed") || auditCount(t, in.DB) != before {
		t.Errorf("unchanged save: notice %q, %d new events", text(p, "notice"), auditCount(t, in.DB)-before)
	}
}

func TestAdminBudgetRefusesBadLimits(t *testing.T) {
	in, b := adminSession(t, "erin")
	acme := adminTenantBySlug(t, in.DB, "acme")
	approveAsFrank(t, in, b.post("/budgets/acme", b.withCSRF(url.Values{"period": {"day"}, "limit": {"10"}, "alert_percent": {"50"}}), nil))
	before := auditCount(t, in.DB)

	tests := []struct {
		field, value, want string
	}{
		{"limit", "abc", "Write the amount as digits"},
		{"limit", "-1", "cannot be negative"},
		{"limit", "1.1234567", "at most 6 decimal places"},
		{"limit", "", "Enter an amount"},
		{"limit", "1e9", "Write the amount as digits"},
		{"limit", "$100", "without separators or currency"},
		{"limit", "+100", "without separators or currency"},
		{"limit", "100 USD", "without separators or currency"},
		{"alert_percent", "+50", "whole percentage"},
		{"alert_percent", "0", "from 1 to 100"},
		{"alert_percent", "101", "from 1 to 100"},
		{"alert_percent", "half", "whole percentage"},
		{"period", "week", "Choose day, month or total"},
	}
	for _, tt := range tests {
		form := url.Values{"period": {"month"}, "limit": {"99.5"}, "alert_percent": {"90"}}
		form.Set(tt.field, tt.value)
		p := b.post("/budgets/acme", b.withCSRF(form), nil)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s=%q: status %d, want 422", tt.field, tt.value, p.Status)
			continue
		}
		if got := text(p, "error-"+tt.field); !strings.Contains(got, tt.want) {
			t.Errorf("%s=%q: error %q, want %q", tt.field, tt.value, got, tt.want)
		}
		wantLimit := form.Get("limit")
		if v, _ := p.Doc.Find(`#acme-limit`).Attr("value"); v != wantLimit {
			t.Errorf("%s=%q: limit input = %q, want the typed %q", tt.field, tt.value, v, wantLimit)
		}
	}
	got, err := budgets.Get(context.Background(), in.DB.Read(), acme.ID)
	if err != nil || got.LimitMicros != 10_000_000 || got.Period != budgets.Day || got.AlertPercent != 50 {
		t.Errorf("budget after refused saves = %+v (%v), want the earlier $10 a day at 50%%", got, err)
	}
	if n := auditCount(t, in.DB); n != before {
		t.Errorf("refused saves wrote %d audit events", n-before)
	}
}

func TestAdminBudgetShowsUseAlertAndTopSpenders(t *testing.T) {
	in, b := adminSession(t, "erin")
	acme := adminTenantBySlug(t, in.DB, "acme")
	approveAsFrank(t, in, b.post("/budgets/acme", b.withCSRF(url.Values{"period": {"total"}, "limit": {"100"}, "alert_percent": {"80"}}), nil))
	if _, err := in.DB.Read().Exec(`UPDATE budgets SET spent_micros = 70000000, reserved_micros = 15000000 WHERE tenant_id = ?`, acme.ID); err != nil {
		t.Fatal(err)
	}
	var js []adminJourney
	for i, cost := range []int64{1_000, 9_000, 5_000, 7_000, 3_000, 8_000, 0} {
		js = append(js, adminJourney{ID: "01JTOP00000000000000000" + string(rune('A'+i)) + "X", TenantID: acme.ID, Skill: "refunds", Status: "completed", CostMicros: cost})
	}
	adminInsertJourneys(t, in.DB, js...)

	p := b.get("/budgets")
	for id, want := range map[string]string{"limit": "$100.00", "spent": "$70.00", "reserved": "$15.00", "remaining": "$15.00"} {
		if got := text(p, "budget-"+id+"-acme"); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if got := text(p, "budget-alert-acme"); !strings.Contains(got, "80%") {
		t.Errorf("alert badge = %q, want it shown at 85%% used", got)
	}
	meter := p.Doc.Find("meter#budget-meter-acme")
	if v, _ := meter.Attr("value"); v != "85" {
		t.Errorf("meter value = %q, want 85", v)
	}
	if p.Doc.Find("[style]").Length() != 0 {
		t.Error("the page uses inline style attributes, which the CSP refuses")
	}
	var top []string
	p.Doc.Find(`[data-testid="budget-top-acme"] tbody a`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		top = append(top, href)
	})
	want := []string{"/traces/01JTOP00000000000000000BX", "/traces/01JTOP00000000000000000FX", "/traces/01JTOP00000000000000000DX", "/traces/01JTOP00000000000000000CX", "/traces/01JTOP00000000000000000EX"}
	if strings.Join(top, " ") != strings.Join(want, " ") {
		t.Errorf("top spenders link to %v, want %v", top, want)
	}

	// Under the threshold: no alert.
	if _, err := in.DB.Read().Exec(`UPDATE budgets SET spent_micros = 10000000, reserved_micros = 0 WHERE tenant_id = ?`, acme.ID); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/budgets"); p.Doc.Find(`[data-testid="budget-alert-acme"]`).Length() != 0 {
		t.Error("alert badge shown at 10% used")
	}
}

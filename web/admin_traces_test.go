package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
)

func traceIDs(p page) []string {
	var ids []string
	p.Doc.Find(`[data-testid="traces-table"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-testid")
		ids = append(ids, strings.TrimPrefix(id, "trace-"))
	})
	return ids
}

func TestAdminTracesListFilters(t *testing.T) {
	in, b := adminSession(t, "carol") // on-call
	acme := adminTenantBySlug(t, in.DB, "acme")
	globex := adminTenant(t, in.DB, "globex", "Globex")

	if p := b.get("/traces"); text(p, "traces-empty") == "" {
		t.Errorf("no journeys, but no empty state:\n%s", p.Body)
	}
	day := func(d int) time.Time { return time.Date(2026, 3, d, 10, 0, 0, 0, time.UTC) }
	adminInsertJourneys(t, in.DB,
		adminJourney{ID: "01JTRACE000000000000000001", TenantID: acme.ID, Skill: "refunds", Status: "completed", Created: day(1)},
		adminJourney{ID: "01JTRACE000000000000000002", TenantID: acme.ID, Skill: "order_status", Status: "failed", ErrorCode: "tool_disabled", Created: day(2)},
		adminJourney{ID: "01JTRACE000000000000000003", TenantID: globex.ID, Skill: "refunds", Status: "awaiting_approval", Created: day(3)},
		adminJourney{ID: "01JTRACE000000000000000004", TenantID: acme.ID, Skill: "refunds", Status: "running", Created: day(4)},
	)
	tests := []struct {
		query string
		want  []string // journey id suffixes, newest first
	}{
		{"", []string{"4", "3", "2", "1"}},
		{"?status=completed", []string{"1"}},
		{"?status=failed", []string{"2"}},
		// Running and completed journeys are left out of the status
		// indexes (migration 0046): each filter still finds its own.
		{"?status=running", []string{"4"}},
		{"?tenant=acme&status=running", []string{"4"}},
		{"?tenant=globex&status=running", nil},
		{"?status=awaiting_approval", []string{"3"}},
		{"?tenant=globex&status=awaiting_approval", []string{"3"}},
		{"?tenant=acme&status=completed", []string{"1"}},
		{"?skill=refunds", []string{"4", "3", "1"}},
		{"?skill=refunds&status=completed", []string{"1"}},
		{"?tenant=globex", []string{"3"}},
		{"?tenant=acme&skill=refunds", []string{"4", "1"}},
		{"?from=2026-03-02", []string{"4", "3", "2"}},
		{"?to=2026-03-02", []string{"2", "1"}},
		{"?from=2026-03-02&to=2026-03-02", []string{"2"}},
		{"?skill=nothing", nil},
	}
	for _, tt := range tests {
		p := b.get("/traces" + tt.query)
		if p.Status != http.StatusOK {
			t.Errorf("%s: %d", tt.query, p.Status)
			continue
		}
		var want []string
		for _, s := range tt.want {
			want = append(want, "01JTRACE00000000000000000"+s)
		}
		if got := traceIDs(p); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("/traces%s lists %v, want %v", tt.query, got, want)
		}
		if len(tt.want) == 0 && !strings.Contains(text(p, "traces-empty"), "match") {
			t.Errorf("/traces%s: empty result without the no-match message", tt.query)
		}
	}
	if p := b.get("/traces?from=March"); p.Status != http.StatusBadRequest {
		t.Errorf("bad date = %d, want 400", p.Status)
	}
	// The filter form keeps what was chosen.
	p := b.get("/traces?status=failed&skill=order_status")
	if v, _ := p.Doc.Find(`#status option[selected]`).Attr("value"); v != "failed" {
		t.Errorf("status filter shows %q", v)
	}
	if v, _ := p.Doc.Find(`#skill`).Attr("value"); v != "order_status" {
		t.Errorf("skill filter shows %q", v)
	}
}

func TestAdminTracesOlderPages(t *testing.T) {
	in, b := adminSession(t, "dave") // auditor
	acme := adminTenantBySlug(t, in.DB, "acme")
	var js []adminJourney
	for i := range 55 {
		js = append(js, adminJourney{ID: fmt.Sprintf("01JPAGE%019d", i), TenantID: acme.ID, Skill: "refunds", Status: "completed"})
	}
	adminInsertJourneys(t, in.DB, js...)
	first := b.get("/traces?status=completed")
	ids := traceIDs(first)
	if len(ids) != 50 || ids[0] != fmt.Sprintf("01JPAGE%019d", 54) {
		t.Fatalf("first page: %d rows starting %v", len(ids), ids[:1])
	}
	older, ok := first.Doc.Find(`[data-testid="traces-older"]`).Attr("href")
	if !ok || !strings.Contains(older, "status=completed") {
		t.Fatalf("older link = %q, want one that keeps the filter", older)
	}
	second := traceIDs(b.get(older))
	if len(second) != 5 || second[0] != fmt.Sprintf("01JPAGE%019d", 4) || second[4] != fmt.Sprintf("01JPAGE%019d", 0) {
		t.Errorf("second page = %v, want the 5 oldest", second)
	}
}

func TestAdminTraceDetail(t *testing.T) {
	in, b := adminSession(t, "erin")
	acme := adminTenantBySlug(t, in.DB, "acme")
	adminInsertJourneys(t, in.DB, adminJourney{
		ID: "01JDETAIL00000000000000001", TenantID: acme.ID, PrincipalID: "", Skill: "refunds", Status: "failed",
		ErrorCode: "tool_disabled", Input: "Refund order 1234 for [EMAIL_1]", Output: "", CostMicros: 12_345,
		Steps: []adminStep{
			{Kind: "route", Status: "ok", Result: `{"skill":"refunds"}`},
			{Kind: "tool", Tool: "lookup_order", Args: `{"order_id":"1234"}`, Result: `{"status":"shipped"}`, Status: "ok", Units: 1},
			{Kind: "tool", Tool: "issue_refund", Args: `{"order_id":"1234","amount":2400}`, Status: "refused", Error: "tool_disabled"},
		},
	})
	p := b.get("/traces/01JDETAIL00000000000000001")
	if p.Status != http.StatusOK {
		t.Fatalf("detail = %d", p.Status)
	}
	for id, want := range map[string]string{
		"trace-request-id": "req-01JDETAIL00000000000000001",
		"trace-skill":      "refunds",
		"trace-error":      "tool_disabled",
		"trace-cost":       "$0.012345",
		"trace-input":      "Refund order 1234 for [EMAIL_1]",
	} {
		if got := text(p, id); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if n := p.Doc.Find(`[data-testid="trace-steps"] tbody tr`).Length(); n != 3 {
		t.Fatalf("steps = %d, want 3", n)
	}
	step3 := p.Doc.Find(`[data-testid="step-3"]`).Text()
	for _, want := range []string{"issue_refund", `"amount":2400`, "Refused", "tool_disabled"} {
		if !strings.Contains(step3, want) {
			t.Errorf("step 3 %q lacks %q", step3, want)
		}
	}
	// Statuses read as words; the raw value stays for machines.
	if st, _ := p.Doc.Find(`[data-testid="step-3"] [data-status]`).Attr("data-status"); st != "refused" {
		t.Errorf("step 3 data-status = %q, want refused", st)
	}
	if strings.Contains(step3, "refused") {
		t.Errorf("step 3 %q shows the raw status", step3)
	}
	if got := b.get("/traces/01JNOSUCHJOURNEY0000000000"); got.Status != http.StatusNotFound {
		t.Errorf("unknown journey = %d, want 404", got.Status)
	}
}

// Another tenant's journey answers as an unknown id does, 404 with the
// same words, so a scoped reader learns nothing of which ids exist.
func TestTraceOutsideScopeIsNotFound(t *testing.T) {
	in, _ := adminSession(t, "carol")
	globex := adminTenant(t, in.DB, "globex", "Globex")
	adminInsertJourneys(t, in.DB, adminJourney{ID: "01JTRACESCOPE0000000000001", TenantID: globex.ID, Skill: "refunds", Status: "completed", Created: time.Now()})
	h := &handlers.Console{DB: in.DB}
	acmeOncall := &identity.Principal{ID: "p-acme", Name: "Acme On-call", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	message := func(id string) (int, string) {
		_, err := callAs(t, h.TraceDetail, acmeOncall, http.MethodGet, "/traces/"+id, nil, "id", id)
		var p *problem.Error
		if !errors.As(err, &p) {
			return httpStatus(err), ""
		}
		return p.Status(), p.Message
	}
	status, msg := message("01JTRACESCOPE0000000000001")
	unknownStatus, unknownMsg := message("01JTRACESCOPE0000000000999")
	if status != http.StatusNotFound || status != unknownStatus || msg != unknownMsg {
		t.Errorf("globex's journey = %d %q, unknown = %d %q; want the same 404", status, msg, unknownStatus, unknownMsg)
	}
	all := &identity.Principal{ID: "p-all", Name: "All", Roles: []string{identity.RoleOncall}, Tenants: []string{"*"}}
	if _, err := callAs(t, h.TraceDetail, all, http.MethodGet, "/traces/01JTRACESCOPE0000000000001", nil, "id", "01JTRACESCOPE0000000000001"); err != nil {
		t.Errorf("a reader of every tenant = %v, want the page", err)
	}
}

// A model-driven journey stopped by max_steps says so in words on its
// trace and in the list, with the code beside it.
func TestAdminTraceErrorInWords(t *testing.T) {
	in, b := adminSession(t, "erin")
	acme := adminTenantBySlug(t, in.DB, "acme")
	adminInsertJourneys(t, in.DB, adminJourney{
		ID: "01JMAXSTEPS000000000000001", TenantID: acme.ID, Skill: "model_refunds", Status: "failed",
		ErrorCode: "max_steps_exceeded", Input: "Refund order ORD-1006",
		Steps: []adminStep{{Kind: "route", Status: "ok", Result: `{"skill":"model_refunds"}`}},
	})
	p := b.get("/traces/01JMAXSTEPS000000000000001")
	if p.Status != http.StatusOK {
		t.Fatalf("detail = %d", p.Status)
	}
	if got := text(p, "trace-error-words"); !strings.Contains(got, "more tool calls than the skill's max_steps allows") {
		t.Errorf("trace-error-words = %q, want the reason in words", got)
	}
	if got := text(p, "trace-error"); got != "max_steps_exceeded" {
		t.Errorf("trace-error = %q, want the code", got)
	}
	list := b.get("/traces")
	if got := list.Doc.Find(`[data-testid="trace-01JMAXSTEPS000000000000001"] [data-testid="trace-row-error"]`).Text(); !strings.Contains(got, "more tool calls") {
		t.Errorf("list row error = %q, want the reason in words", got)
	}
}

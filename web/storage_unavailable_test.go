package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// When the storage refuses writes (a full disk, a file system gone
// read-only), every write path answers alike: the agent API 503
// storage_unavailable with Retry-After, the console a "Storage
// unavailable" page with Retry-After, nothing changes; reads keep working;
// /readyz is 503 while writes fail and 200 again by itself afterwards.
func TestStorageUnavailableAnswersAlikeEverywhere(t *testing.T) {
	t.Parallel()
	in, alice := approvalSession(t, "alice")
	desk := pendingAction(t, in, "ORD-1004")
	digest := digestOnPage(t, alice.get("/approvals/"+desk.ID), "approve-form")
	tok := alice.csrf()
	ctx := context.Background()
	events := auditCount(t, in.DB)

	if err := in.DB.FailWrites(ctx, true); err != nil {
		t.Fatal(err)
	}
	lifted := false
	defer func() {
		if !lifted {
			in.DB.FailWrites(ctx, false)
		}
	}()

	check := func(what string, status int, hdr http.Header, body string) {
		t.Helper()
		if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
			t.Errorf("%s = %d (Retry-After %q), want 503 with Retry-After", what, status, hdr.Get("Retry-After"))
		}
		if !strings.Contains(body, "storage") {
			t.Errorf("%s does not say the storage is unavailable: %.300s", what, body)
		}
	}
	j := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	check("POST /v1/journeys", j.Status, j.Header, string(j.Raw))
	if j.code() != "storage_unavailable" {
		t.Errorf("journey code %q, want storage_unavailable", j.code())
	}
	a := propose(t, in, in.DemoKey, map[string]any{"tool": "lookup_order", "arguments": map[string]any{"order_id": "ORD-1003"}, "summary": "Look up ORD-1003", "reason": "check"}, nil)
	check("POST /v1/actions", a.Status, a.Header, string(a.Raw))
	form := decideForm("reject", "disk full drill", digest)
	form.Set("_csrf", tok)
	p := alice.post("/approvals/"+desk.ID+"/decide", form, nil)
	check("console decide", p.Status, p.Header, strings.ToLower(p.Body))
	if !strings.Contains(p.Body, "Storage unavailable") {
		t.Error("the console page is not titled Storage unavailable")
	}
	fresh := newBrowser(t, in.URL)
	if lp := fresh.loginDev("bob"); lp.Status != http.StatusServiceUnavailable {
		t.Errorf("sign-in while storage fails = %d, want 503", lp.Status)
	}
	if r := alice.get("/approvals"); r.Status != http.StatusOK {
		t.Errorf("reading the queue while writes fail = %d, want 200", r.Status)
	}
	if r := alice.get("/readyz"); r.Status != http.StatusServiceUnavailable {
		t.Errorf("/readyz while writes fail = %d, want 503", r.Status)
	}

	if err := in.DB.FailWrites(ctx, false); err != nil {
		t.Fatal(err)
	}
	lifted = true
	if got := auditCount(t, in.DB); got != events {
		t.Errorf("refused writes changed the audit trail: %d events, was %d", got, events)
	}
	if r := alice.get("/readyz"); r.Status != http.StatusOK {
		t.Errorf("/readyz after the storage recovered = %d, want 200", r.Status)
	}
	if j := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil); j.Status != http.StatusOK {
		t.Errorf("journey after recovery = %d %s", j.Status, j.Raw)
	}
}

package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/wait"
)

// TestStatusListsFailedJobsAndRetriesThem: a job that failed for good is
// on the status page of an on-call engineer who sees every tenant, with
// why and what it was about; Retry runs it again, audited, and says so. A
// scoped on-call engineer neither sees the list nor may retry.
func TestStatusListsFailedJobsAndRetriesThem(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	// An execution job for an action that does not exist: its first run
	// fails for good (a permanent error), on either engine.
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		return jobs.Enqueue(ctx, tx, "execute_action", map[string]string{"action_id": "act_gone"}, jobs.Options{})
	}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, in.URL)
	b.loginDev("carol")
	var p page
	if !wait.ForEvery(15*time.Second, 100*time.Millisecond, func() bool {
		p = b.get("/status")
		return strings.Contains(text(p, "failed-jobs"), "act_gone")
	}) {
		t.Fatalf("the failed job is not on the status page: %q", text(p, "failed-jobs"))
	}
	got := text(p, "failed-jobs")
	for _, want := range []string{"Execute an approved action", "A permanent error", "There is no action with this id", "1 job(s) stopped retrying"} {
		if !strings.Contains(got, want) {
			t.Errorf("failed jobs section lacks %q: %q", want, got)
		}
	}
	if p.Doc.Find(`[data-testid="failed-jobs"] a[href="/approvals/act_gone"]`).Length() != 1 {
		t.Error("the failed job does not link to the action it was about")
	}
	action, ok := p.Doc.Find(`[data-testid="failed-jobs"] form`).Attr("action")
	if !ok {
		t.Fatal("no Retry form")
	}
	after := b.post(action, b.withCSRF(url.Values{}), nil)
	if after.Status != http.StatusOK || !strings.Contains(after.Doc.Text(), "The job will run again at once") {
		t.Fatalf("after Retry: %d, notice missing: %q", after.Status, after.Doc.Find("main").Text())
	}
	events, err := audit.List(ctx, in.DB.Read(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	retried := false
	for _, e := range events {
		retried = retried || (e.Verb == "job.retried" && e.Actor.ID != "" && e.Details["kind"] == "execute_action")
	}
	if !retried {
		t.Error("the retry is not in the audit trail")
	}
	// Retrying the same job again while it is not failed changes nothing.
	if again := b.post(action, b.withCSRF(url.Values{}), nil); again.Status != http.StatusOK {
		t.Errorf("a second Retry: %d", again.Status)
	}
	if b.post("/status/jobs/999999/retry", b.withCSRF(url.Values{}), nil).Status != http.StatusNotFound {
		t.Error("retrying an unknown job is not a 404")
	}
	if b.post(action, url.Values{}, nil).Status != http.StatusForbidden {
		t.Error("a Retry without the CSRF token was not refused")
	}

	acme := &identity.Principal{ID: "p-acme", Name: "Acme On-call", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	h := &handlers.Console{DB: in.DB, StatusView: in.Server.status}
	rec, err := callAs(t, h.Status, acme, http.MethodGet, "/status", nil)
	if err != nil || strings.Contains(rec.Body.String(), "failed-jobs") || strings.Contains(rec.Body.String(), "act_gone") {
		t.Errorf("a scoped on-call engineer sees the failed jobs (err %v)", err)
	}
	id := strings.Split(action, "/")[3]
	if _, err := callAs(t, h.JobRetry, acme, http.MethodPost, action, url.Values{}, "id", id); httpStatus(err) != http.StatusForbidden {
		t.Errorf("a scoped on-call engineer's Retry: %v, want 403", err)
	}
}

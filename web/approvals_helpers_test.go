package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
)

// approvalSession starts Warden with the demo data and its background
// work, and signs in as user.
func approvalSession(t *testing.T, user string) (*instance, *browser) {
	t.Helper()
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	b := newBrowser(t, in.URL)
	b.loginDev(user)
	return in, b
}

// queueRows lists the queue's rows as "summary | tenant | amount |
// approvals", in the order shown.
func queueRows(p page) []string {
	var out []string
	p.Doc.Find(`[data-testid="approvals-table"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.Join([]string{
			strings.TrimSpace(s.Find(".queue-summary").Text()),
			strings.TrimSpace(s.Find(".tenant").Text()),
			strings.TrimSpace(s.Find(".amount").Text()),
			strings.TrimSpace(s.Find(".approvals").Text()),
		}, " | "))
	})
	return out
}

// queueActionIDs lists the ids of the actions the queue shows.
func queueActionIDs(p page) []string {
	var ids []string
	p.Doc.Find(`[data-testid="approvals-table"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-testid")
		ids = append(ids, strings.TrimPrefix(id, "approval-"))
	})
	return ids
}

// pendingAction finds the one pending action whose summary contains text.
func pendingAction(t *testing.T, in *instance, text string) approvals.Action {
	t.Helper()
	var id string
	err := in.DB.Read().QueryRow(`SELECT id FROM actions WHERE status = 'pending' AND summary LIKE ?`, "%"+text+"%").Scan(&id)
	if err != nil {
		t.Fatalf("pending action %q: %v", text, err)
	}
	return getAction(t, in, id)
}

func getAction(t *testing.T, in *instance, id string) approvals.Action {
	t.Helper()
	a, err := approvals.Get(context.Background(), in.DB.Read(), id)
	if err != nil {
		t.Fatalf("action %s: %v", id, err)
	}
	return a
}

// createActions records n pending refunds for tenant directly, as an
// agent's request would, with amounts of amount, amount+1, ... cents.
// edit, when given, changes each spec before it is recorded.
func createActions(t *testing.T, in *instance, tenant tenants.Tenant, n int, amount int64, edit ...func(*approvals.Spec)) []approvals.Action {
	t.Helper()
	ctx := context.Background()
	sealer, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	refund, err := catalog.Get(ctx, in.DB.Read(), "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	var out []approvals.Action
	err = in.DB.Transact(ctx, func(tx *store.Tx) error {
		for i := range n {
			minor := amount + int64(i)
			args, _ := json.Marshal(map[string]any{"order_id": fmt.Sprintf("ORD-%d", 7000+i), "amount_minor": minor, "currency": "USD", "account": "9182"})
			spec := approvals.Spec{
				TenantID: tenant.ID, TenantSlug: tenant.Slug, JourneyID: fmt.Sprintf("jrn_test_%s_%d", tenant.Slug, i), StepN: 1,
				Tool: catalog.ForApproval(refund), Args: args, ArgsRedacted: args, Summary: fmt.Sprintf("Refund test %s %d", tenant.Slug, i),
				AmountMinor: &minor, Currency: "USD", Reason: "test", Rule: "test rule", ApprovalsRequired: 1,
			}
			for _, f := range edit {
				f(&spec)
			}
			a, err := approvals.Create(ctx, tx, sealer, spec, time.Now())
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decideForm is the form the action page posts.
func decideForm(decision, comment, digest string) url.Values {
	return url.Values{"decision": {decision}, "comment": {comment}, "digest": {digest}}
}

func decisionCount(t *testing.T, in *instance, id string) int {
	t.Helper()
	return countRows(t, in.DB, `SELECT COUNT(*) FROM decisions WHERE action_id = ?`, id)
}

// waitStatus reloads the action page until its status is want, for up to
// 10 s (execution runs in the background worker).
func waitStatus(t *testing.T, b *browser, id, want string) page {
	t.Helper()
	var p page
	if !wait.ForEvery(10*time.Second, 100*time.Millisecond, func() bool {
		p = b.get("/approvals/" + id)
		return statusOf(p, "action-status") == want
	}) {
		t.Fatalf("action %s status = %q after 10 s, want %q", id, statusOf(p, "action-status"), want)
	}
	return p
}

// lastAuditOf returns the newest event of verb about the action id.
func lastAuditOf(t *testing.T, in *instance, verb, id string) audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), in.DB.Read(), audit.Filter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Verb == verb && e.Subject.ID == id {
			return e
		}
	}
	t.Fatalf("no %s event for %s", verb, id)
	return audit.Event{}
}

// statusOf is the status an action's badge stands for (its data-status;
// the badge itself says it in words).
func statusOf(p page, testid string) string {
	st, _ := p.Doc.Find(`[data-testid="` + testid + `"]`).First().Attr("data-status")
	return st
}

package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
)

// TestRacingApproversExecuteOnce: 100 actions, two approvers deciding each
// at the same moment: one recorded outcome per action, and at the provider
// exactly one refund per approved action.
func TestRacingApproversExecuteOnce(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	tenant, _ := tenants.BySlug(ctx, in.DB.Read(), "acme")
	tool, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund")
	before, _ := in.Agent.Sim.EffectCount(ctx, "issue_refund")
	var actions []approvals.Action
	for i := range 100 {
		amount := int64(100)
		in.DB.Transact(ctx, func(tx *store.Tx) error {
			a, err := approvals.Create(ctx, tx, in.Agent.Journeys.Sealer(), approvals.Spec{
				TenantID: tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprintf("race-%d", i), KeyID: "race", Tool: catalog.ForApproval(tool),
				Args:         json.RawMessage(`{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"GB74BUKB20201555559182"}`),
				ArgsRedacted: json.RawMessage(`{}`), Summary: "race", AmountMinor: &amount, Currency: "USD", Rule: "test", ApprovalsRequired: 1,
			}, time.Now())
			actions = append(actions, a)
			return err
		})
	}
	p1 := identity.Principal{ID: "p-1", Name: "One", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	p2 := identity.Principal{ID: "p-2", Name: "Two", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := map[string]int{}
	for _, a := range actions {
		for _, p := range []identity.Principal{p1, p2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := in.Agent.Execution.Decide(ctx, approvals.Request{Principal: p, ActionID: a.ID, Decision: approvals.Approve, Digest: a.PayloadDigest})
				if err == nil {
					mu.Lock()
					wins[a.ID]++
					mu.Unlock()
				} else if !errors.Is(err, approvals.ErrAlreadyDecided) {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	for _, a := range actions {
		if wins[a.ID] != 1 {
			t.Fatalf("action %s: %d winning decisions, want 1", a.ID, wins[a.ID])
		}
	}
	var executed int
	if !wait.For(60*time.Second, func() bool {
		in.DB.Read().QueryRow(`SELECT COUNT(*) FROM actions WHERE journey_id LIKE 'race-%' AND status = 'executed'`).Scan(&executed)
		return executed == 100
	}) {
		t.Fatalf("%d of 100 approved actions executed", executed)
	}
	after, _ := in.Agent.Sim.EffectCount(ctx, "issue_refund")
	if after-before != 100 {
		t.Errorf("refunds at the provider = %d, want exactly 100 (one per approved action)", after-before)
	}
}

// Issue 21, finding 9: the same approval sent six times at once (a
// double click, a browser retrying) answered 500 on PostgreSQL, a unique
// violation on decisions. One is recorded and redirects to the action;
// the other five are 409 "already decided", and nothing else is recorded.
func TestSameDecisionSentSixTimesAtOnce(t *testing.T) {
	in, alice := approvalSession(t, "alice")
	a := pendingAction(t, in, "ORD-1005")
	if a.ApprovalsRequired != 1 {
		t.Fatalf("the ORD-1005 demo action needs %d approvers, want 1", a.ApprovalsRequired)
	}
	form := alice.withCSRF(decideForm(approvals.Approve, "", digestOnPage(t, alice.get("/approvals/"+a.ID), "approve-form")))
	once := alice.noRedirect()
	start := make(chan struct{})
	var wg sync.WaitGroup
	pages := make([]page, 6)
	for i := range pages {
		wg.Go(func() {
			<-start
			pages[i] = once.post("/approvals/"+a.ID+"/decide", form, nil)
		})
	}
	close(start)
	wg.Wait()
	recorded, refused := 0, 0
	for _, p := range pages {
		switch {
		case p.Status == http.StatusSeeOther:
			recorded++
		case p.Status == http.StatusConflict && strings.Contains(p.Body, "already decided") && strings.Contains(p.Body, "Your decision was not recorded"):
			refused++
		default:
			t.Errorf("a copy of the decision = %d: %.300s", p.Status, p.Body)
		}
	}
	if recorded != 1 || refused != 5 {
		t.Errorf("six identical approvals at once: %d recorded, %d refused as already decided; want 1 and 5", recorded, refused)
	}
	if n := decisionCount(t, in, a.ID); n != 1 {
		t.Errorf("%d decisions recorded, want 1", n)
	}
}

package notify_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
)

var (
	bob   = identity.Principal{ID: "bob", Name: "Bob Approver", Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
	alice = identity.Principal{ID: "alice", Name: "Alice Approver", Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
)

func (r *rig) genericChannel(t *testing.T) notify.Channel {
	t.Helper()
	c, err := notify.GetChannel(t.Context(), r.db.Read(), "generic")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTake: an approver who may decide a pending action takes it; others
// see who holds it until the claim time (set to 10 minutes) passes, when
// it is released by itself; taking one someone holds takes it over and
// says from whom; the holder releases it; someone who may not decide it
// (an auditor, an approver of another tenant, the requester) cannot take
// it; a second approver still decides a taken action. Each Take and
// Release is audited, and the routes of "assigned" hear "Bob Approver is
// reviewing".
func TestTake(t *testing.T) {
	r, rc := webhookRig(t)
	r.route(t, notify.Route{Event: notify.EventAssigned, ChannelID: r.genericChannel(t).ID, TenantID: r.tenant.ID})
	if err := r.db.Transact(t.Context(), func(tx *store.Tx) error { return notify.SetClaimTime(t.Context(), tx, admin, 10*time.Minute) }); err != nil {
		t.Fatal(err)
	}
	a := r.propose(t, 240000)
	now := a.CreatedAt.Add(time.Minute)

	if _, held, err := approvals.ClaimOf(t.Context(), r.db.Read(), a.ID, now); err != nil || held {
		t.Fatalf("a new action is held (%v, %v)", held, err)
	}
	res, err := approvals.Take(t.Context(), r.db, bob, a.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != nil || res.Claim.PrincipalName != "Bob Approver" || !res.Claim.ExpiresAt.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("take: %+v", res)
	}
	c, held, err := approvals.ClaimOf(t.Context(), r.db.Read(), a.ID, now.Add(9*time.Minute))
	if err != nil || !held || c.PrincipalName != "Bob Approver" {
		t.Fatalf("after 9 minutes: %+v %v %v", c, held, err)
	}
	if _, held, _ := approvals.ClaimOf(t.Context(), r.db.Read(), a.ID, now.Add(10*time.Minute)); held {
		t.Error("the claim still holds after its 10 minutes")
	}
	if m, _ := approvals.ClaimsOf(t.Context(), r.db.Read(), []string{a.ID}, now.Add(11*time.Minute)); len(m) != 0 {
		t.Errorf("the queue still shows an expired claim: %+v", m)
	}

	// Alice takes it over while Bob holds it: told from whom.
	res, err = approvals.Take(t.Context(), r.db, alice, a.ID, now.Add(2*time.Minute))
	if err != nil || res.Previous == nil || res.Previous.PrincipalName != "Bob Approver" {
		t.Fatalf("take over: %+v %v", res, err)
	}
	// Bob no longer holds it: nothing to release; Alice releases hers.
	if err := approvals.Release(t.Context(), r.db, bob, a.ID, now.Add(3*time.Minute)); !errors.Is(err, approvals.ErrNotClaimed) {
		t.Errorf("Bob released a claim he no longer holds: %v", err)
	}
	if err := approvals.Release(t.Context(), r.db, alice, a.ID, now.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, held, _ := approvals.ClaimOf(t.Context(), r.db.Read(), a.ID, now.Add(3*time.Minute)); held {
		t.Error("still held after release")
	}

	// Only those who may decide it take it.
	auditor := identity.Principal{ID: "dave", Name: "Dave", Roles: []string{identity.RoleAuditor}, Tenants: []string{"*"}}
	other := identity.Principal{ID: "olga", Name: "Olga", Roles: []string{identity.RoleApprover}, Tenants: []string{"globex"}}
	for _, p := range []identity.Principal{auditor, other} {
		if _, err := approvals.Take(t.Context(), r.db, p, a.ID, now.Add(4*time.Minute)); err == nil {
			t.Errorf("%s took an action they may not decide", p.ID)
		}
	}

	// Advisory: Bob takes it, Alice approves anyway, the decision counts.
	if _, err := approvals.Take(t.Context(), r.db, bob, a.ID, now.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	dec, err := approvals.Decide(t.Context(), r.db, approvals.Request{Principal: alice, ActionID: a.ID, Decision: approvals.Approve, Digest: a.PayloadDigest}, nil, now.Add(6*time.Minute))
	if err != nil || dec.Action.ApprovalsGiven != 1 {
		t.Fatalf("alice approving a taken action: %+v %v", dec, err)
	}
	// An expired action cannot be taken.
	b := r.propose(t, 240000)
	if _, err := approvals.Take(t.Context(), r.db, bob, b.ID, b.ExpiresAt.Add(time.Second)); !errors.Is(err, approvals.ErrExpired) {
		t.Errorf("taking an expired action: %v", err)
	}

	if got := len(r.events(t, "action.taken")); got != 3 {
		t.Errorf("%d action.taken events, want 3", got)
	}
	if ev := r.events(t, "action.taken"); len(ev) > 1 && !strings.Contains(ev[1], `"from":"Bob Approver"`) {
		t.Errorf("take-over event: %s", ev[1])
	}
	if got := len(r.events(t, "action.released")); got != 1 {
		t.Errorf("%d action.released events, want 1", got)
	}
	r.start(t, 2)
	waitFor(t, "Bob is reviewing, in the generic webhook", func() bool {
		for _, req := range rc.generic.requests() {
			if get(req.Decoded, "event") == notify.EventAssigned && strings.Contains(string(req.Body), "Bob Approver is reviewing: Refund $2,400.00 for ORD-1004") {
				return true
			}
		}
		return false
	})
	for _, req := range rc.slack.requests() {
		if strings.Contains(string(req.Body), "is reviewing") {
			t.Errorf("slack has no assigned route but heard: %s", req.Body)
		}
	}
}

// TestExpiryNotice: an action that expires undecided tells its tenant's
// escalation routes "Expired undecided", in the expiry's transaction; an
// action expired by hand (ExpireNow, with a reason) does not, nor does a
// tenant without an escalation route.
func TestExpiryNotice(t *testing.T) {
	r, rc := webhookRig(t)
	quiet := r.propose(t, 240000)
	if n, err := approvals.Expire(t.Context(), r.db, nil, quiet.ExpiresAt.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if got := r.deliveryStatuses(t)["queued"]; got != 3 {
		t.Fatalf("without an escalation route the expiry queued messages: %d queued, want the proposal's 3", got)
	}
	r.route(t, notify.Route{Event: notify.EventEscalation, ChannelID: r.genericChannel(t).ID, TenantID: r.tenant.ID})
	a := r.propose(t, 240000)
	byHand := r.propose(t, 240000)
	if n, err := approvals.ExpireNow(t.Context(), r.db, []string{byHand.ID}, admin, "incident cleanup", nil, a.CreatedAt.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("expire by hand: %d %v", n, err)
	}
	if ok, err := approvals.ExpireDue(t.Context(), r.db, a.ID, nil, a.ExpiresAt.Add(time.Second)); err != nil || !ok {
		t.Fatalf("expire due: %v %v", ok, err)
	}
	r.start(t, 2)
	waitFor(t, "the expiry notice", func() bool {
		for _, req := range rc.generic.requests() {
			if strings.Contains(string(req.Body), "Expired undecided: Refund $2,400.00 for ORD-1004") && strings.Contains(string(req.Body), "/approvals/"+a.ID) {
				return true
			}
		}
		return false
	})
	for _, req := range rc.generic.requests() {
		if strings.Contains(string(req.Body), "/approvals/"+byHand.ID) && strings.Contains(string(req.Body), "Expired undecided") {
			t.Errorf("an action expired by hand sent an expiry notice")
		}
		if found := contains(string(req.Body), pii...); len(found) > 0 {
			t.Errorf("message carries personal data %q", found)
		}
	}
}

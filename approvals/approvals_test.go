package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

var (
	alice   = identity.Principal{ID: "p-alice", Name: "Alice", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	bob     = identity.Principal{ID: "p-bob", Name: "Bob", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	globex  = identity.Principal{ID: "p-gina", Name: "Gina", Roles: []string{"approver"}, Tenants: []string{"globex"}}
	auditor = identity.Principal{ID: "p-dave", Name: "Dave", Roles: []string{"auditor"}, Tenants: []string{"*"}}
	// aliceElsewhere is Alice signed in through another issuer: another
	// principal, the same e-mail.
	aliceElsewhere = identity.Principal{ID: "p-alice-new", Issuer: "https://new.example", Subject: "alice", Name: "Alice", Email: "alice@example.com", Roles: []string{"approver"}, Tenants: []string{"acme"}}
	erin           = identity.Principal{ID: "p-erin", Name: "Erin", Roles: []string{"approver", "admin"}, Tenants: []string{"*"}}
)

func TestCheckPolicy(t *testing.T) {
	now := time.Now()
	pending := Action{ID: "a1", Status: StatusPending, PayloadDigest: "d1", ExpiresAt: now.Add(time.Hour), RequestedBy: "p-erin"}
	tests := []struct {
		name       string
		p          identity.Principal
		a          Action
		approvedBy []Approver
		digest     string
		want       error
	}{
		{"approver in scope", alice, pending, nil, "d1", nil},
		{"wildcard scope", erin, Action{Status: StatusPending, PayloadDigest: "d1", ExpiresAt: now.Add(time.Hour)}, nil, "d1", nil},
		{"not an approver", auditor, pending, nil, "d1", ErrNotApprover},
		{"other tenant", globex, pending, nil, "d1", ErrOutOfScope},
		{"own request", erin, pending, nil, "d1", ErrOwnRequest},
		{"request through a key the approver created", alice, Action{Status: StatusPending, PayloadDigest: "d1", ExpiresAt: now.Add(time.Hour), KeyOwner: "p-alice"}, nil, "d1", ErrOwnKey},
		{"second approval by the same person", alice, pending, []Approver{{ID: "p-alice"}}, "d1", ErrAlreadyApproved},
		{"the same e-mail through another issuer", aliceElsewhere, pending, []Approver{{ID: "p-alice", Issuer: "https://old.example", Email: "alice@example.com"}}, "d1", ErrSameEmail},
		{"the same e-mail in other case", aliceElsewhere, pending, []Approver{{ID: "p-alice", Issuer: "https://old.example", Email: " Alice@Example.COM"}}, "d1", ErrSameEmail},
		{"another e-mail counts", aliceElsewhere, pending, []Approver{{ID: "p-bob", Issuer: "https://old.example", Email: "bob@example.com"}}, "d1", nil},
		{"no e-mail on either side counts", alice, pending, []Approver{{ID: "p-bob"}}, "d1", nil},
		{"stale digest", alice, pending, nil, "d0", ErrStale},
		{"expired by time", alice, Action{Status: StatusPending, PayloadDigest: "d1", ExpiresAt: now.Add(-time.Second)}, nil, "d1", ErrExpired},
		{"expired by status", alice, Action{Status: StatusExpired, PayloadDigest: "d1", ExpiresAt: now.Add(-time.Hour)}, nil, "d1", ErrExpired},
		{"already approved", alice, Action{Status: StatusApproved, PayloadDigest: "d1", ExpiresAt: now.Add(time.Hour)}, nil, "d1", ErrAlreadyDecided},
		{"already rejected", alice, Action{Status: StatusRejected, PayloadDigest: "d1", ExpiresAt: now.Add(time.Hour)}, nil, "d1", ErrAlreadyDecided},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Check(tt.p, tt.a, "acme", tt.approvedBy, tt.digest, now); !errors.Is(got, tt.want) {
				t.Errorf("Check = %v, want %v", got, tt.want)
			}
		})
	}
}

type fixture struct {
	db     *store.DB
	sealer *seal.Sealer
	tenant tenants.Tenant
	url    string // the database, for a second handle (replica)
	dir    string
}

func setup(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	u := storetest.URL(t)
	db, err := store.OpenURL(context.Background(), u, store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, _ := seal.LoadOrCreate(dir)
	var tenant tenants.Tenant
	db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		tenant, err = tenants.Insert(context.Background(), tx, "acme", "Acme")
		return err
	})
	return fixture{db: db, sealer: s, tenant: tenant, url: u, dir: dir}
}

var refundTool = Tool{Name: "issue_refund", Impact: risk.ImpactHigh, Reversibility: risk.Compensatable, ApprovalTTL: time.Hour}

func (f fixture) newAction(t *testing.T, n int, required int) Action {
	t.Helper()
	var a Action
	amount := int64(240000)
	err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		a, err = Create(context.Background(), tx, f.sealer, Spec{
			TenantID: f.tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprintf("j%d", n), StepN: 2, KeyID: "k1", Tool: refundTool,
			Args: json.RawMessage(fmt.Sprintf(`{"order_id":"ORD-%d","amount_minor":240000}`, 1000+n)), ArgsRedacted: json.RawMessage(`{}`),
			Summary: "Refund", AmountMinor: &amount, Currency: "USD", Rule: "high", ApprovalsRequired: required,
		}, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestDualControlAndRejection(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.newAction(t, 1, 2)
	var executions atomic.Int32
	onApproved := func(ctx context.Context, tx *store.Tx, a Action) error {
		if a.Status == StatusApproved {
			executions.Add(1)
		}
		return nil
	}

	r, err := Decide(ctx, f.db, Request{Principal: alice, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, onApproved, time.Now())
	if err != nil || r.Final || r.Action.Status != StatusPending || r.Action.ApprovalsGiven != 1 {
		t.Fatalf("first approval = %+v, %v; want pending 1 of 2", r, err)
	}
	if _, err := Decide(ctx, f.db, Request{Principal: alice, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, onApproved, time.Now()); !errors.Is(err, ErrAlreadyApproved) {
		t.Fatalf("alice again = %v, want ErrAlreadyApproved", err)
	}
	if _, err := Decide(ctx, f.db, Request{Principal: bob, ActionID: a.ID, Decision: Approve, Digest: "other"}, onApproved, time.Now()); !errors.Is(err, ErrStale) {
		t.Fatalf("stale digest = %v, want ErrStale", err)
	}
	r, err = Decide(ctx, f.db, Request{Principal: bob, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, onApproved, time.Now())
	if err != nil || !r.Final || r.Action.Status != StatusApproved || executions.Load() != 1 {
		t.Fatalf("second approval = %+v, %v (executions %d); want approved and one execution", r, err, executions.Load())
	}
	ds, _ := Decisions(ctx, f.db.Read(), a.ID)
	if len(ds) != 2 || ds[0].PrincipalName != "Alice" || ds[1].PrincipalName != "Bob" {
		t.Errorf("decisions = %+v", ds)
	}

	b := f.newAction(t, 2, 1)
	if _, err := Decide(ctx, f.db, Request{Principal: alice, ActionID: b.ID, Decision: Reject, Digest: b.PayloadDigest}, onApproved, time.Now()); !errors.Is(err, ErrReasonRequired) {
		t.Fatalf("reject without reason = %v", err)
	}
	if got, _ := Get(ctx, f.db.Read(), b.ID); got.Status != StatusPending {
		t.Fatalf("a refused rejection changed the action to %s", got.Status)
	}
	r, err = Decide(ctx, f.db, Request{Principal: alice, ActionID: b.ID, Decision: Reject, Comment: "duplicate request", Digest: b.PayloadDigest}, onApproved, time.Now())
	if err != nil || r.Action.Status != StatusRejected {
		t.Fatalf("reject = %+v, %v", r, err)
	}
	evs, _ := audit.List(ctx, f.db.Read(), audit.Filter{Limit: 1})
	if evs[0].Verb != "action.rejected" || evs[0].Details["comment"] != "duplicate request" {
		t.Errorf("last audit = %s %v", evs[0].Verb, evs[0].Details)
	}
}

func TestOutboxFailureRecordsNothing(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.newAction(t, 1, 1)
	before, _ := audit.Count(ctx, f.db.Read())
	boom := errors.New("enqueue failed")
	_, err := Decide(ctx, f.db, Request{Principal: alice, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest},
		func(ctx context.Context, tx *store.Tx, a Action) error { return boom }, time.Now())
	if !errors.Is(err, boom) {
		t.Fatalf("Decide = %v, want the outbox error", err)
	}
	got, _ := Get(ctx, f.db.Read(), a.ID)
	ds, _ := Decisions(ctx, f.db.Read(), a.ID)
	after, _ := audit.Count(ctx, f.db.Read())
	if got.Status != StatusPending || len(ds) != 0 || after != before {
		t.Fatalf("after a failed outbox write: status %s, %d decisions, audit %d→%d; want nothing recorded", got.Status, len(ds), before, after)
	}
}

func TestRacingApproversRecordOneOutcome(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	var actions []Action
	for i := range 100 {
		actions = append(actions, f.newAction(t, i, 1))
	}
	var executions sync.Map
	onApproved := func(ctx context.Context, tx *store.Tx, a Action) error {
		if a.Status != StatusApproved {
			return nil
		}
		n, _ := executions.LoadOrStore(a.ID, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		return nil
	}
	var wg sync.WaitGroup
	var wins, losses atomic.Int32
	for _, a := range actions {
		for _, p := range []identity.Principal{alice, bob} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				decision, comment := Approve, ""
				if p.ID == bob.ID && a.JourneyID[len(a.JourneyID)-1]%2 == 0 {
					decision, comment = Reject, "not needed"
				}
				_, err := Decide(ctx, f.db, Request{Principal: p, ActionID: a.ID, Decision: decision, Comment: comment, Digest: a.PayloadDigest}, onApproved, time.Now())
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, ErrAlreadyDecided):
					losses.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	if wins.Load() != 100 || losses.Load() != 100 {
		t.Fatalf("wins %d losses %d, want 100 and 100", wins.Load(), losses.Load())
	}
	for _, a := range actions {
		ds, _ := Decisions(ctx, f.db.Read(), a.ID)
		got, _ := Get(ctx, f.db.Read(), a.ID)
		n := 0
		if v, ok := executions.Load(a.ID); ok {
			n = int(v.(*atomic.Int32).Load())
		}
		if len(ds) != 1 {
			t.Fatalf("action %s has %d recorded decisions, want 1", a.ID, len(ds))
		}
		wantExec := 0
		if ds[0].Decision == Approve {
			wantExec = 1
		}
		if n != wantExec || (got.Status == StatusApproved) != (wantExec == 1) {
			t.Fatalf("action %s: status %s, executions %d for decision %s", a.ID, got.Status, n, ds[0].Decision)
		}
	}
}

func TestExpireAndCancel(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.newAction(t, 1, 1)
	b := f.newAction(t, 2, 1)
	if n, err := Expire(ctx, f.db, nil, time.Now()); err != nil || n != 0 {
		t.Fatalf("Expire before expiry = %d, %v", n, err)
	}
	if n, err := Expire(ctx, f.db, nil, time.Now().Add(2*time.Hour)); err != nil || n != 2 {
		t.Fatalf("Expire after expiry = %d, %v; want 2", n, err)
	}
	got, _ := Get(ctx, f.db.Read(), a.ID)
	if got.Status != StatusExpired {
		t.Fatalf("status = %s, want expired", got.Status)
	}
	if _, err := Decide(ctx, f.db, Request{Principal: alice, ActionID: a.ID, Decision: Approve, Digest: a.PayloadDigest}, nil, time.Now()); !errors.Is(err, ErrExpired) {
		t.Fatalf("approving an expired action = %v", err)
	}
	_ = b
	c := f.newAction(t, 3, 1)
	if _, err := Cancel(ctx, f.db, c.ID, "other-key", nil, time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cancel by another key = %v, want not found", err)
	}
	if got, err := Cancel(ctx, f.db, c.ID, "k1", nil, time.Now()); err != nil || got.Status != StatusCancelled {
		t.Fatalf("cancel = %+v, %v", got, err)
	}
	if _, err := Cancel(ctx, f.db, c.ID, "k1", nil, time.Now()); !errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("second cancel = %v", err)
	}
}

func TestListFiltersAndSorts(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	for i := range 5 {
		f.newAction(t, i, 1)
	}
	page, total, err := List(ctx, f.db.Read(), Filter{Page: store.Page{Size: 2}}, time.Now())
	rows := page.Rows
	if err != nil || total != 5 || len(rows) != 2 || rows[0].TenantSlug != "acme" {
		t.Fatalf("List = %d rows of %d, %v", len(rows), total, err)
	}
	if _, total, _ := List(ctx, f.db.Read(), Filter{TenantIDs: []string{"nope"}}, time.Now()); total != 0 {
		t.Errorf("other tenant sees %d", total)
	}
	min := int64(300000)
	if _, total, _ := List(ctx, f.db.Read(), Filter{MinMinor: &min}, time.Now()); total != 0 {
		t.Errorf("amount filter kept %d", total)
	}
	if _, total, _ := List(ctx, f.db.Read(), Filter{}, time.Now().Add(2*time.Hour)); total != 0 {
		t.Errorf("expired actions still listed as pending: %d", total)
	}
}

func TestExpireNowExpiresOnlyTheGivenPending(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	a := f.newAction(t, 1, 1)
	b := f.newAction(t, 2, 1)
	c := f.newAction(t, 3, 1)
	var ended []string
	hook := func(_ context.Context, _ *store.Tx, x Action) error {
		ended = append(ended, x.ID+":"+x.Status)
		return nil
	}
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: "oncall"}
	n, err := ExpireNow(ctx, f.db, []string{a.ID, b.ID, "nope"}, actor, "incident", hook, time.Now())
	if err != nil || n != 2 {
		t.Fatalf("ExpireNow = %d, %v; want 2", n, err)
	}
	if n, err := ExpireNow(ctx, f.db, []string{a.ID}, actor, "incident", hook, time.Now()); err != nil || n != 0 {
		t.Fatalf("ExpireNow again = %d, %v; want 0", n, err)
	}
	for id, want := range map[string]string{a.ID: StatusExpired, b.ID: StatusExpired, c.ID: StatusPending} {
		if got, _ := Get(ctx, f.db.Read(), id); got.Status != want {
			t.Errorf("status of %s = %s, want %s", id, got.Status, want)
		}
	}
	if want := []string{a.ID + ":expired", b.ID + ":expired"}; !slices.Equal(ended, want) {
		t.Errorf("OnDecided ran for %v, want %v", ended, want)
	}
	var events int
	f.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_events WHERE verb = 'action.expired' AND actor_id = 'oncall'`).Scan(&events)
	if events != 2 {
		t.Errorf("action.expired events by oncall = %d, want 2", events)
	}
}

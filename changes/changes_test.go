package changes

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

var (
	erin  = identity.Principal{ID: "p-erin", Name: "Erin Admin", Email: "erin@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	frank = identity.Principal{ID: "p-frank", Name: "Frank Admin", Email: "frank@example.com", Roles: []string{identity.RoleAdmin}, Tenants: []string{identity.AllTenants}}
	// An admin of acme only, and an approver (not an admin) of all tenants.
	acmeAdmin  = identity.Principal{ID: "p-acme", Name: "Acme Admin", Email: "a@acme.test", Roles: []string{identity.RoleAdmin}, Tenants: []string{"acme"}}
	otherAdmin = identity.Principal{ID: "p-other", Name: "Other Admin", Email: "o@other.test", Roles: []string{identity.RoleAdmin}, Tenants: []string{"other"}}
	approver   = identity.Principal{ID: "p-alice", Name: "Alice", Email: "alice@example.com", Roles: []string{identity.RoleApprover}, Tenants: []string{identity.AllTenants}}
)

func raise() Proposal {
	return Proposal{Kind: DualControl, TenantID: "t-acme", TenantSlug: "acme", Subject: "acme",
		Summary: "Raise acme's dual-control threshold in USD from 1,000.00 to 1,000,000.00",
		Before:  Threshold{Currency: "USD", Set: true, Minor: 100_000}, After: Threshold{Currency: "USD", Set: true, Minor: 100_000_000},
		Reason: "finance asked"}
}

func verbs(t *testing.T, db *store.DB, id string) []string {
	t.Helper()
	out, err := store.Strings(context.Background(), db.Read(), `SELECT verb FROM audit_events WHERE subject_type = 'change' AND subject_id = ? ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPendingUntilASecondAdminApproves(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	c, err := Request(ctx, db, erin, raise(), now)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != Pending || c.RequestedByName != "Erin Admin" || c.PayloadDigest == "" {
		t.Fatalf("Request = %+v, want pending, asked by Erin, with a digest", c)
	}
	decide := func(p identity.Principal, d, digest string, at time.Time) (Change, error) {
		return Decide(ctx, db, Decision{Principal: p, ChangeID: c.ID, Decision: d, Digest: digest, Comment: "ok"}, at)
	}
	refusals := []struct {
		name string
		p    identity.Principal
		dig  string
		want error
	}{
		{"the requester", erin, c.PayloadDigest, ErrOwnRequest},
		{"the requester under another sign-in", identity.Principal{ID: "p-erin-2", Email: "ERIN@example.com", Roles: erin.Roles, Tenants: erin.Tenants}, c.PayloadDigest, ErrSamePerson},
		{"an approver who is no admin", approver, c.PayloadDigest, ErrNotAdmin},
		{"an admin of another tenant", otherAdmin, c.PayloadDigest, ErrOutOfScope},
	}
	for _, r := range refusals {
		if _, err := decide(r.p, approvals.Approve, r.dig, now); !errors.Is(err, r.want) {
			t.Errorf("%s approving: %v, want %v", r.name, err, r.want)
		}
	}
	if _, err := decide(frank, approvals.Approve, "0000", now); err == nil {
		t.Error("approving a digest other than the change's succeeded")
	}
	if got, _ := Get(ctx, db.Read(), c.ID); got.Status != Pending {
		t.Fatalf("after refusals status = %s, want pending", got.Status)
	}
	// An admin of the change's tenant only may decide it.
	got, err := decide(acmeAdmin, approvals.Approve, c.PayloadDigest, now)
	if err != nil || got.Status != Approved || got.DecidedByName != "Acme Admin" {
		t.Fatalf("second admin approving = %+v, %v; want approved by Acme Admin", got, err)
	}
	if _, err := decide(frank, approvals.Approve, c.PayloadDigest, now); err == nil {
		t.Error("deciding an approved change again succeeded")
	}
	if got, err = MarkApplied(ctx, db, c.ID, "", now); err != nil || got.Status != Applied {
		t.Fatalf("MarkApplied = %+v, %v", got, err)
	}
	want := []string{"change.requested", "change.approved", "change.applied"}
	if v := verbs(t, db, c.ID); len(v) != 3 || v[0] != want[0] || v[1] != want[1] || v[2] != want[2] {
		t.Errorf("audit verbs = %v, want %v", v, want)
	}
	if _, err := audit.Verify(ctx, db.Read(), nil); err != nil {
		t.Errorf("audit chain: %v", err)
	}
}

func TestInstallationWideChangeNeedsAnAdminOfAllTenants(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now()
	c, err := Request(ctx, db, erin, Proposal{Kind: ToolSwitch, Subject: "issue_refund", Summary: "Switch on issue_refund",
		Before: Switch{false}, After: Switch{true}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decide(ctx, db, Decision{Principal: acmeAdmin, ChangeID: c.ID, Decision: approvals.Approve, Digest: c.PayloadDigest}, now); !errors.Is(err, ErrOutOfScope) {
		t.Errorf("a tenant admin approving a global change: %v, want ErrOutOfScope", err)
	}
	pending, _, err := Queue(ctx, db.Read(), acmeAdmin, now)
	if err != nil || len(pending) != 0 {
		t.Errorf("a tenant admin's queue = %v, %v; want no global change", pending, err)
	}
	pending, _, _ = Queue(ctx, db.Read(), frank, now)
	if len(pending) != 1 || pending[0].ID != c.ID {
		t.Errorf("frank's queue = %v, want the change", pending)
	}
}

func TestRejectAndExpire(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now()
	c, _ := Request(ctx, db, erin, raise(), now)
	if _, err := Decide(ctx, db, Decision{Principal: frank, ChangeID: c.ID, Decision: approvals.Reject, Digest: c.PayloadDigest}, now); err == nil {
		t.Error("a rejection without a reason succeeded")
	}
	got, err := Decide(ctx, db, Decision{Principal: frank, ChangeID: c.ID, Decision: approvals.Reject, Comment: "not now", Digest: c.PayloadDigest}, now)
	if err != nil || got.Status != Rejected {
		t.Fatalf("reject = %+v, %v", got, err)
	}
	late, _ := Request(ctx, db, erin, raise(), now)
	if _, err := Decide(ctx, db, Decision{Principal: frank, ChangeID: late.ID, Decision: approvals.Approve, Digest: late.PayloadDigest}, now.Add(TTL)); err == nil {
		t.Error("approving an expired change succeeded")
	}
	if s := late.StatusAt(now.Add(TTL)); s != Expired {
		t.Errorf("StatusAt(expiry) = %s, want expired", s)
	}
}

func TestBreakGlass(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now()
	if _, err := BreakGlass(ctx, db, erin, raise(), false, now); !errors.Is(err, ErrNoBreakGlass) {
		t.Errorf("break glass not allowed: %v, want ErrNoBreakGlass", err)
	}
	p := raise()
	p.Reason = " "
	if _, err := BreakGlass(ctx, db, erin, p, true, now); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("break glass without a reason: %v, want ErrReasonRequired", err)
	}
	c, err := BreakGlass(ctx, db, erin, raise(), true, now)
	if err != nil || c.Status != Applied || !c.BreakGlass {
		t.Fatalf("BreakGlass = %+v, %v", c, err)
	}
	if v := verbs(t, db, c.ID); len(v) != 1 || v[0] != "break_glass" {
		t.Errorf("audit verbs = %v, want [break_glass]", v)
	}
	open, _ := Unreviewed(ctx, db.Read(), frank)
	if len(open) != 1 || open[0].ID != c.ID {
		t.Fatalf("Unreviewed = %v, want the change", open)
	}
	if _, err := Review(ctx, db, erin, c.ID, "", now); !errors.Is(err, ErrOwnBreakGlass) {
		t.Errorf("the breaker reviewing: %v, want ErrOwnBreakGlass", err)
	}
	if _, err := Review(ctx, db, frank, c.ID, "checked with finance", now); err != nil {
		t.Fatal(err)
	}
	if open, _ := Unreviewed(ctx, db.Read(), frank); len(open) != 0 {
		t.Errorf("Unreviewed after review = %v, want none", open)
	}
}

// TestExpireDue: the expiry job marks a pending change past its expiry as
// expired with a change.expired event; one decided before is left alone,
// and a second run marks nothing.
func TestExpireDue(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	stale, err := Request(ctx, db, erin, raise(), now)
	if err != nil {
		t.Fatal(err)
	}
	decided, err := Request(ctx, db, erin, raise(), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decide(ctx, db, Decision{Principal: frank, ChangeID: decided.ID, Decision: approvals.Reject, Comment: "no", Digest: decided.PayloadDigest}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := ExpireDue(ctx, db, now.Add(TTL-time.Minute)); err != nil || n != 0 {
		t.Fatalf("before expiry ExpireDue = %d, %v; want 0", n, err)
	}
	if n, err := ExpireDue(ctx, db, now.Add(TTL)); err != nil || n != 1 {
		t.Fatalf("at expiry ExpireDue = %d, %v; want 1", n, err)
	}
	if c, _ := Get(ctx, db.Read(), stale.ID); c.Status != Expired {
		t.Errorf("the stale change is %s, want expired", c.Status)
	}
	if c, _ := Get(ctx, db.Read(), decided.ID); c.Status != Rejected {
		t.Errorf("the decided change is %s, want still rejected", c.Status)
	}
	if v := verbs(t, db, stale.ID); len(v) != 2 || v[1] != "change.expired" {
		t.Errorf("events of the expired change = %v, want requested then expired", v)
	}
	if n, err := ExpireDue(ctx, db, now.Add(2*TTL)); err != nil || n != 0 {
		t.Errorf("a second run = %d, %v; want 0", n, err)
	}
	if _, err := Decide(ctx, db, Decision{Principal: frank, ChangeID: stale.ID, Decision: approvals.Approve, Digest: stale.PayloadDigest}, now.Add(TTL+time.Hour)); err == nil {
		t.Error("an expired change was approved")
	}
}

// TestPendingToRead: of the changes of the kinds asked for, a reader of
// one tenant reads their tenant's and the installation-wide ones, not
// another tenant's nor other kinds; decided and expired ones are gone.
func TestPendingToRead(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now()
	ask := func(p Proposal) Change {
		t.Helper()
		c, err := Request(ctx, db, erin, p, now)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rule := func(skill string) Proposal {
		return Proposal{Kind: AlertRule, Subject: skill, Summary: "Raise " + skill + "'s alert thresholds",
			Before: AlertRuleValue{FailurePercent: 10}, After: AlertRuleValue{FailurePercent: 50}}
	}
	global := ask(rule("refunds"))
	ask(Proposal{Kind: ToolSwitch, Subject: "issue_refund", Summary: "Switch on issue_refund", Before: Switch{false}, After: Switch{true}})
	acme := ask(raise())
	other := raise()
	other.TenantID, other.TenantSlug, other.Subject = "t-other", "other", "other"
	otherC := ask(other)
	decided := ask(rule("faq"))
	if _, err := Decide(ctx, db, Decision{Principal: frank, ChangeID: decided.ID, Decision: approvals.Reject, Comment: "no", Digest: decided.PayloadDigest}, now); err != nil {
		t.Fatal(err)
	}
	oncall := identity.Principal{ID: "p-oncall", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	ids := func(cs []Change) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		p     identity.Principal
		at    time.Time
		kinds []string
		want  []string
	}{
		{"acme's on-call, alert rules", oncall, now, []string{AlertRule}, []string{global.ID}},
		{"acme's on-call, rules and thresholds", oncall, now, []string{AlertRule, DualControl}, []string{global.ID, acme.ID}},
		{"another tenant's admin", otherAdmin, now, []string{DualControl}, []string{otherC.ID}},
		{"no kinds", frank, now, nil, nil},
		{"after expiry", frank, now.Add(TTL + time.Minute), []string{AlertRule}, nil},
	} {
		got, err := PendingToRead(ctx, db.Read(), tt.p, tt.at, tt.kinds...)
		if g := ids(got); err != nil || !slices.Equal(g, tt.want) {
			t.Errorf("%s: PendingToRead = %v, %v; want %v", tt.name, g, err, tt.want)
		}
	}
}

package views

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tenants"
)

// TestActionPageStates renders the action page in each state an action
// can be in, for an approver, an on-call engineer and an auditor, and
// checks the headings, the sentence that says where it stands, and the
// buttons each of them is offered.
func TestActionPageStates(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	approver := identity.Principal{ID: "p_alice", Name: "Alice", Roles: []string{identity.RoleApprover}, Tenants: []string{"*"}}
	oncall := identity.Principal{ID: "p_carol", Name: "Carol", Roles: []string{identity.RoleOncall}, Tenants: []string{"*"}}
	auditor := identity.Principal{ID: "p_dave", Name: "Dave", Roles: []string{identity.RoleAuditor}, Tenants: []string{"*"}}

	base := approvals.Action{
		ID: "act_1", TenantID: "t1", JourneyID: "jrn_1", KeyID: "key_1", Tool: "issue_refund",
		Summary: "Refund $2,400.00 to account ••9182 for order ORD-1004", Reason: "Customer reports damage.",
		Impact: risk.ImpactHigh, Reversibility: risk.Compensatable, ApprovalsRequired: 1, PayloadDigest: "d1",
		IdempotencyKey: "wdn_1", Status: approvals.StatusPending, CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(22 * time.Hour),
		ArgumentsRedacted: []byte(`{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"[iban:d38bf348]"}`),
	}
	on := catalog.SwitchState{Enabled: true}
	with := func(edit func(*ApprovalView)) ApprovalView {
		v := ApprovalView{Action: base, TenantSlug: "acme", Now: now, ToolSwitch: on, CompensatingTool: "reverse_refund"}
		edit(&v)
		return v
	}
	executed := func(v *ApprovalView) {
		v.Action.Status, v.Action.ApprovalsGiven, v.Action.DecidedAt, v.Action.ExecutedAt = approvals.StatusExecuted, 1, at(-time.Hour), at(-50*time.Minute)
		v.Action.Receipt = []byte(`{"refund_id":"rf_1","status":"refunded","amount_minor":240000,"currency":"USD","account_last4":"9182"}`)
		v.Decisions = []approvals.Decided{{PrincipalID: "p_bob", Decision: approvals.Approve}}
	}
	reversal := func(status string) *approvals.Action {
		return &approvals.Action{ID: "act_rev", Summary: "Reverse: refund", Status: status, Compensates: "act_1", RequestedBy: "p_carol"}
	}
	blocked := func(kind string) func(*ApprovalView) {
		return func(v *ApprovalView) {
			v.Action.Status, v.Action.ApprovalsGiven, v.Action.DecidedAt = approvals.StatusFailed, 1, at(-time.Hour)
			v.Action.Failure = approvals.BlockedFailure(kind, v.Action.Tool)
			v.Decisions = []approvals.Decided{{PrincipalID: "p_bob", Decision: approvals.Approve}}
			if kind == approvals.BlockToolOff {
				v.ToolSwitch = catalog.SwitchState{Enabled: false, Reason: "INC-7 provider down", At: at(-90 * time.Minute)}
			} else {
				v.Freeze = tenants.Freeze{Frozen: true, Reason: "INC-12 leaked key", At: at(-30 * time.Minute)}
			}
		}
	}

	type want struct {
		what, why, state string
		buttons          []string // data-testids of the buttons offered
	}
	none := []string{}
	tests := []struct {
		name                      string
		v                         ApprovalView
		approver, oncall, auditor want
	}{
		{"pending", with(func(v *ApprovalView) {}),
			want{"What will happen", "Why it needs you", "Awaiting approval: it needs 1 more approval.", []string{"approve", "reject"}},
			want{"What will happen", "Why it needs approval", "Awaiting approval", none},
			want{"What will happen", "Why it needs approval", "Awaiting approval", none}},
		{"one of two (by this approver)", with(func(v *ApprovalView) {
			v.Action.ApprovalsRequired, v.Action.ApprovalsGiven = 2, 1
			v.Decisions = []approvals.Decided{{PrincipalID: "p_alice", Decision: approvals.Approve}}
		}),
			want{"What will happen", "Why it needs approval", "Awaiting approval: you approved; it waits for another approver.", none},
			want{"What will happen", "Why it needs approval", "Awaiting approval: it needs 1 more approval.", none},
			want{"What will happen", "Why it needs approval", "Awaiting approval: it needs 1 more approval.", none}},
		{"approved", with(func(v *ApprovalView) {
			v.Action.Status, v.Action.ApprovalsGiven, v.Action.DecidedAt = approvals.StatusApproved, 1, at(-time.Minute)
		}),
			want{"What will happen", "Why it needed approval", "Approved. It is queued to run exactly once.", none},
			want{"What will happen", "Why it needed approval", "Approved. It is queued", none},
			want{"What will happen", "Why it needed approval", "Approved. It is queued", none}},
		{"executing", with(func(v *ApprovalView) {
			v.Action.Status, v.Action.ApprovalsGiven, v.Action.DecidedAt = approvals.StatusExecuting, 1, at(-time.Minute)
		}),
			want{"What will happen", "Why it needed approval", "Approved and running now.", none},
			want{"What will happen", "Why it needed approval", "running now", none},
			want{"What will happen", "Why it needed approval", "running now", none}},
		{"executed", with(executed),
			want{"What happened", "Why it needed approval", "Approved and executed.", []string{"reverse"}},
			want{"What happened", "Why it needed approval", "Approved and executed.", []string{"reverse"}},
			want{"What happened", "Why it needed approval", "Approved and executed.", none}},
		{"reversed", with(func(v *ApprovalView) { executed(v); v.Reversal = reversal(approvals.StatusExecuted) }),
			want{"What happened", "Why it needed approval", "Executed, then reversed by act_rev (Executed).", none},
			want{"What happened", "Why it needed approval", "Executed, then reversed by act_rev (Executed).", none},
			want{"What happened", "Why it needed approval", "Executed, then reversed by act_rev (Executed).", none}},
		{"reversal pending", with(func(v *ApprovalView) { executed(v); v.Reversal = reversal(approvals.StatusPending) }),
			want{"What happened", "Why it needed approval", "Executed. Reversal requested (Awaiting approval): act_rev.", none},
			want{"What happened", "Why it needed approval", "Reversal requested (Awaiting approval)", none},
			want{"What happened", "Why it needed approval", "Reversal requested (Awaiting approval)", none}},
		{"failed: tool off", with(blocked(approvals.BlockToolOff)),
			want{"What was asked", "Why it needed approval", "blocked before anything was sent: the tool issue_refund was switched off", none},
			want{"What was asked", "Why it needed approval", "blocked before anything was sent", none},
			want{"What was asked", "Why it needed approval", "blocked before anything was sent", none}},
		{"failed: tool off, then on again", with(func(v *ApprovalView) { blocked(approvals.BlockToolOff)(v); v.ToolSwitch = on }),
			want{"What was asked", "Why it needed approval", "the tool issue_refund was switched off", none},
			want{"What was asked", "Why it needed approval", "the tool issue_refund was switched off", []string{"retry"}},
			want{"What was asked", "Why it needed approval", "the tool issue_refund was switched off", none}},
		{"failed: tenant frozen", with(blocked(approvals.BlockTenantFrozen)),
			want{"What was asked", "Why it needed approval", "blocked before anything was sent: the tenant acme was frozen", none},
			want{"What was asked", "Why it needed approval", "the tenant acme was frozen", none},
			want{"What was asked", "Why it needed approval", "the tenant acme was frozen", none}},
		{"rejected", with(func(v *ApprovalView) {
			v.Action.Status, v.Action.DecidedAt = approvals.StatusRejected, at(-time.Minute)
			v.Decisions = []approvals.Decided{{PrincipalID: "p_bob", Decision: approvals.Reject, Comment: "no"}}
		}),
			want{"What was asked", "Why it needed approval", "Rejected. It will not run.", none},
			want{"What was asked", "Why it needed approval", "Rejected. It will not run.", none},
			want{"What was asked", "Why it needed approval", "Rejected. It will not run.", none}},
		{"expired", with(func(v *ApprovalView) { v.Action.Status = approvals.StatusExpired }),
			want{"What was asked", "Why it needed approval", "Expired before enough approvers decided.", none},
			want{"What was asked", "Why it needed approval", "Expired", none},
			want{"What was asked", "Why it needed approval", "Expired", none}},
		{"cancelled", with(func(v *ApprovalView) { v.Action.Status = approvals.StatusCancelled }),
			want{"What was asked", "Why it needed approval", "Withdrawn by the agent that asked.", none},
			want{"What was asked", "Why it needed approval", "Withdrawn", none},
			want{"What was asked", "Why it needed approval", "Withdrawn", none}},
	}
	buttons := []string{"approve", "reject", "reverse", "retry"}
	for _, tt := range tests {
		for _, c := range []struct {
			who  identity.Principal
			want want
		}{{approver, tt.approver}, {oncall, tt.oncall}, {auditor, tt.auditor}} {
			doc := renderAction(t, tt.v.For(c.who))
			name := tt.name + " for " + c.who.Name
			if got := doc.Find(`[data-testid="what-heading"]`).Text(); got != c.want.what {
				t.Errorf("%s: heading %q, want %q", name, got, c.want.what)
			}
			if got := doc.Find(`[data-testid="why-heading"]`).Text(); got != c.want.why {
				t.Errorf("%s: heading %q, want %q", name, got, c.want.why)
			}
			if got := strings.TrimSpace(doc.Find(`[data-testid="action-state"]`).Text()); !strings.Contains(got, c.want.state) {
				t.Errorf("%s: state %q, want it to say %q", name, got, c.want.state)
			}
			var offered []string
			for _, b := range buttons {
				if doc.Find(`[data-testid="`+b+`"]`).Length() > 0 {
					offered = append(offered, b)
				}
			}
			if strings.Join(offered, ",") != strings.Join(c.want.buttons, ",") {
				t.Errorf("%s: buttons %v, want %v", name, offered, c.want.buttons)
			}
			if got := doc.Find(`[data-testid="action-status"]`).First().Text(); strings.Contains(got, "_") || got == "" || got[:1] != strings.ToUpper(got[:1]) {
				t.Errorf("%s: status shown as %q, want words", name, got)
			}
			body, _ := doc.Html()
			if strings.Contains(body, "check the provider") != (tt.v.Action.Status == approvals.StatusFailed && approvals.BlockOf(tt.v.Action) == "") {
				t.Errorf("%s: 'check the provider' shown wrongly", name)
			}
			if s := slicedTokenRE.FindString(body); s != "" {
				t.Errorf("%s: sliced redaction token %q", name, s)
			}
		}
	}
}

// TestActionPageBlockStory: a blocked execution is told in the true order
// of events, whether the block came before or after approval.
func TestActionPageBlockStory(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	a := approvals.Action{ID: "act_1", Tool: "issue_refund", Status: approvals.StatusFailed, CreatedAt: now.Add(-3 * time.Hour),
		DecidedAt: at(-time.Hour), ApprovalsGiven: 1, ApprovalsRequired: 1, Failure: approvals.BlockedFailure(approvals.BlockToolOff, "issue_refund")}
	before := ApprovalView{Action: a, TenantSlug: "acme", ToolSwitch: catalog.SwitchState{Reason: "INC-7", At: at(-2 * time.Hour)}}
	after := ApprovalView{Action: a, TenantSlug: "acme", ToolSwitch: catalog.SwitchState{Reason: "INC-7", At: at(-30 * time.Minute)}}
	order := func(v ApprovalView) string {
		var out []string
		for _, e := range v.BlockStory() {
			out = append(out, e.Text[:min(len(e.Text), 10)])
		}
		return strings.Join(out, " | ")
	}
	if got, want := order(before), "Requested. | The tool i | Approved ( | When it ca"; got != want {
		t.Errorf("switched off before approval: %s, want %s", got, want)
	}
	if got, want := order(after), "Requested. | Approved ( | The tool i | When it ca"; got != want {
		t.Errorf("switched off after approval: %s, want %s", got, want)
	}
	if !strings.Contains(before.BlockStory()[1].Text, "INC-7") {
		t.Errorf("the story does not give the switch's reason: %q", before.BlockStory()[1].Text)
	}
}

// TestApproveWarning: an approver is warned before approving an action
// whose tool is off or whose tenant is frozen.
func TestApproveWarning(t *testing.T) {
	approver := identity.Principal{ID: "p_alice", Roles: []string{identity.RoleApprover}, Tenants: []string{"*"}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := approvals.Action{ID: "act_1", Tool: "issue_refund", Status: approvals.StatusPending, ApprovalsRequired: 1, ExpiresAt: now.Add(time.Hour)}
	tests := []struct {
		name string
		v    ApprovalView
		want string
	}{
		{"tool on, tenant open", ApprovalView{Action: a, TenantSlug: "acme", Now: now, ToolSwitch: catalog.SwitchState{Enabled: true}}, ""},
		{"tool off", ApprovalView{Action: a, TenantSlug: "acme", Now: now, ToolSwitch: catalog.SwitchState{Reason: "INC-7"}}, "The tool issue_refund is switched off (reason: INC-7)."},
		{"tenant frozen", ApprovalView{Action: a, TenantSlug: "acme", Now: now, ToolSwitch: catalog.SwitchState{Enabled: true}, Freeze: tenants.Freeze{Frozen: true, Reason: "INC-12"}}, "The tenant acme is frozen (reason: INC-12)."},
	}
	for _, tt := range tests {
		doc := renderAction(t, tt.v.For(approver))
		got := strings.TrimSpace(doc.Find(`[data-testid="approve-warning"]`).Text())
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: warning %q, want %q", tt.name, got, tt.want)
		}
	}
}

func renderAction(t *testing.T, v ApprovalView) *goquery.Document {
	t.Helper()
	var b bytes.Buffer
	if err := ApprovalShow(Page{CSRF: "token"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// slicedTokenRE finds a piece of a redaction token ("[iban:d38b", "••348]").
var slicedTokenRE = regexp.MustCompile(`\[[a-z0-9_]+:[0-9a-f]{0,7}(?:[^0-9a-f]|$)|••[0-9a-f]{0,8}\]`)

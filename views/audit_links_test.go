package views

import (
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
)

func TestSubjectLink(t *testing.T) {
	admin := Page{User: &identity.Principal{Roles: []string{identity.RoleAdmin}}, Nav: []NavItem{
		{Path: "/audit"}, {Path: "/tenants"}, {Path: "/keys"}, {Path: "/tools"}, {Path: "/traces"}, {Path: "/releases"}, {Path: "/runbooks"},
	}}
	auditor := Page{User: &identity.Principal{Roles: []string{identity.RoleAuditor}}, Nav: []NavItem{{Path: "/audit"}, {Path: "/traces"}}}
	ev := func(typ, id, tenant string, details map[string]any) audit.Event {
		return audit.Event{Subject: audit.Subject{Type: typ, ID: id}, Tenant: tenant, Details: details}
	}
	tests := []struct {
		name string
		p    Page
		e    audit.Event
		want string
	}{
		{"action", auditor, ev("action", "act_1", "acme", nil), "/approvals/act_1"},
		{"key for admin", admin, ev("key", "key_1", "acme", nil), "/keys/key_1"},
		{"key hidden from auditor", auditor, ev("key", "key_1", "acme", nil), ""},
		{"tenant by slug", admin, ev("tenant", "ten_1", "acme", nil), "/tenants/acme"},
		{"tool", admin, ev("tool", "issue_refund", "", nil), "/tools/issue_refund/edit"},
		{"principal", auditor, ev("principal", "p 1", "", nil), "/audit?actor=p+1"},
		{"journey", auditor, ev("journey", "jrn_1", "acme", nil), "/traces/jrn_1"},
		{"release", admin, ev("release", "sha256:ab", "", nil), "/releases"},
		{"replay", admin, ev("replay", "rpl_1", "", nil), "/releases/replays/rpl_1"},
		{"runbook run", admin, ev("runbook", "run_1", "acme", map[string]any{"runbook": "refund-storm"}), "/runbooks/refund-storm/runs/run_1"},
		{"escaped id", admin, ev("tool", "a/b", "", nil), "/tools/a%2Fb/edit"},
		{"unknown type", admin, ev("audit_chain", "x", "", nil), ""},
	}
	for _, tt := range tests {
		if got := subjectLink(tt.p, tt.e).URL; got != tt.want {
			t.Errorf("%s: subjectLink = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDetailFields(t *testing.T) {
	got := detailFields(map[string]any{"first_seq": "3", "roles": []any{"admin", "oncall"}, "ok": true, "filters": map[string]any{}})
	want := []Field{{"filters", "none"}, {"first seq", "3"}, {"ok", "yes"}, {"roles", "admin, oncall"}}
	if len(got) != len(want) {
		t.Fatalf("detailFields = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("detailFields[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

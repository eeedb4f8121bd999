package web

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/identity"
)

func TestNeedsRoles(t *testing.T) {
	tests := []struct {
		roles []string
		want  string
	}{
		{[]string{identity.RoleApprover, identity.RoleOncall, identity.RoleAuditor, identity.RoleAdmin}, "This page needs the approver, on-call, auditor or admin role."},
		{[]string{identity.RoleOncall, identity.RoleAdmin}, "This page needs the on-call or admin role."},
		{[]string{identity.RoleAdmin}, "This page needs the admin role."},
		{nil, "You do not have access to this page."},
	}
	for _, tt := range tests {
		if got := needsRoles(tt.roles); got != tt.want {
			t.Errorf("needsRoles(%v) = %q, want %q", tt.roles, got, tt.want)
		}
	}
}

// The 403 page names the roles a page needs in plain words, and the roles
// the viewer holds.
func TestForbiddenPageNamesRoles(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	mallory := newBrowser(t, in.URL)
	mallory.loginDev("mallory")
	p := mallory.get("/traces")
	if p.Status != 403 {
		t.Fatalf("mallory GET /traces = %d, want 403", p.Status)
	}
	if got := text(p, "error-message"); got != "This page needs the on-call, auditor or admin role." {
		t.Errorf("403 message = %q", got)
	}
	if got := text(p, "error-your-roles"); !strings.Contains(got, "no Warden role") {
		t.Errorf("403 says of mallory's roles %q", got)
	}
	carol := newBrowser(t, in.URL)
	carol.loginDev("carol")
	p = carol.get("/keys")
	if got := text(p, "error-message"); got != "This page needs the admin role." {
		t.Errorf("carol's 403 message = %q", got)
	}
	if got := text(p, "error-your-roles"); !strings.Contains(got, "with the on-call role") {
		t.Errorf("carol's 403 says %q, want her on-call role", got)
	}
}

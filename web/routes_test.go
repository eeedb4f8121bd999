package web

import (
	"net/http"
	"testing"

	"github.com/wardenhq/warden/platform/identity"
)

func TestMayOpen(t *testing.T) {
	admin := []string{identity.RoleAdmin}
	readers := []string{identity.RoleOncall, identity.RoleAuditor, identity.RoleAdmin}
	routes := []route{
		{http.MethodGet, "/", nil, nil, "Home"},
		{http.MethodGet, "/audit", nil, []string{identity.RoleAuditor, identity.RoleAdmin}, ""},
		{http.MethodGet, "/audit/actions/:id", nil, readers, ""},
		{http.MethodGet, "/keys/new", nil, admin, ""},
		{http.MethodGet, "/keys/:id", nil, readers, ""}, // looser than /keys/new on purpose
		{http.MethodPost, "/keys", nil, nil, ""},
	}
	carol := &identity.Principal{ID: "carol", Roles: []string{identity.RoleOncall}}
	for _, c := range []struct {
		name   string
		p      *identity.Principal
		target string
		want   bool
	}{
		{"open to everyone", carol, "/", true},
		{"query ignored", carol, "/audit?subject_type=runbook&subject_id=r1", false},
		{"a parameter matches a segment", carol, "/audit/actions/act_1", true},
		{"an empty parameter does not", carol, "/audit/actions/", false},
		{"the static route wins", carol, "/keys/new", false},
		{"the parameter route otherwise", carol, "/keys/k1", true},
		{"only GET routes are pages", carol, "/keys", false},
		{"no such page", carol, "/nowhere", false},
		{"signed out", nil, "/", false},
	} {
		if got := mayOpen(routes, c.p, c.target); got != c.want {
			t.Errorf("%s: mayOpen(%q) = %v, want %v", c.name, c.target, got, c.want)
		}
	}
}

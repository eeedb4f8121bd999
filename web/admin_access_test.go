package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
)

func TestAdminPagesRoleChecks(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	adminSeedTools(t, in.DB)
	paths := []string{"/tenants", "/keys", "/keys/new", "/budgets", "/tools", "/tools/lookup_order/edit", "/traces"}
	tests := []struct {
		user string
		want []int
	}{
		{"alice", []int{403, 403, 403, 403, 403, 403, 403}},   // approver
		{"carol", []int{403, 403, 403, 403, 403, 403, 200}},   // on-call
		{"dave", []int{403, 403, 403, 403, 403, 403, 200}},    // auditor
		{"erin", []int{200, 200, 200, 200, 200, 200, 200}},    // admin
		{"mallory", []int{403, 403, 403, 403, 403, 403, 403}}, // nobody
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			b := newBrowser(t, in.URL)
			b.loginDev(tt.user)
			for i, path := range paths {
				if p := b.get(path); p.Status != tt.want[i] {
					t.Errorf("%s GET %s = %d, want %d", tt.user, path, p.Status, tt.want[i])
				}
			}
			home := b.get("/")
			for _, nav := range []struct {
				path string
				i    int
			}{{"/keys", 1}, {"/budgets", 3}, {"/tools", 4}, {"/traces", 6}} {
				offered := home.Doc.Find(`nav a[href="`+nav.path+`"]`).Length() == 1
				if offered != (tt.want[nav.i] == 200) {
					t.Errorf("%s: nav offers %s = %v, want %v", tt.user, nav.path, offered, tt.want[nav.i] == 200)
				}
			}
			// A POST needs the role too, token or not.
			if tt.user != "erin" {
				if p := b.post("/tools/lookup_order/disable", b.withCSRF(nil), nil); p.Status != http.StatusForbidden {
					t.Errorf("%s POST switch-off = %d, want 403", tt.user, p.Status)
				}
			}
		})
	}
	if tl, _ := catalog.Get(context.Background(), in.DB.Read(), "lookup_order"); !tl.Enabled {
		t.Error("a user without the admin role switched the tool off")
	}
}

func TestAdminFormsRefusePostsWithoutCSRFToken(t *testing.T) {
	in, b := adminSession(t, "erin")
	ctx := context.Background()
	acme := adminTenantBySlug(t, in.DB, "acme")
	// A key to revoke, made through the form.
	b.post("/keys", b.withCSRF(url.Values{"tenant": {"acme"}, "name": {"bot"}, "scopes": {"skill:refunds"}, "rate_per_min": {"600"}, "burst": {"60"}}), nil)
	ks, _ := keys.List(ctx, in.DB.Read(), nil)
	if len(ks) != 1 {
		t.Fatalf("keys = %d, want 1", len(ks))
	}
	before := auditCount(t, in.DB)

	posts := []struct {
		path string
		form url.Values
	}{
		{"/tenants", url.Values{"slug": {"globex"}, "name": {"Globex"}}},
		{"/tenants/acme/rename", url.Values{"name": {"Renamed"}}},
		{"/tenants/acme/retention", url.Values{"retention_days": {"7"}}},
		{"/tenants/acme/freeze", url.Values{}},
		{"/keys", url.Values{"tenant": {"acme"}, "name": {"bot2"}, "scopes": {"skill:refunds"}, "rate_per_min": {"600"}, "burst": {"60"}}},
		{"/keys/" + ks[0].ID + "/revoke", url.Values{}},
		{"/budgets/acme", url.Values{"period": {"month"}, "limit": {"5"}, "alert_percent": {"80"}}},
		{"/tools", func() url.Values { f := toolFormValues(); f.Set("name", "new_tool"); return f }()},
		{"/tools/lookup_order", func() url.Values { f := toolFormValues(); f.Set("description", "changed"); return f }()},
		{"/tools/lookup_order/disable", url.Values{}},
	}
	for _, p := range posts {
		for _, form := range []url.Values{p.form, withField(p.form, "_csrf", "forged")} {
			if got := b.post(p.path, form, nil); got.Status != http.StatusForbidden {
				t.Errorf("POST %s with token %q = %d, want 403", p.path, form.Get("_csrf"), got.Status)
			}
		}
	}
	// The unfreeze and switch-on buttons too, from a changed state.
	if _, err := in.DB.Read().Exec(`UPDATE tenants SET frozen = 1 WHERE slug = 'acme'`); err != nil {
		t.Fatal(err)
	}
	if _, err := in.DB.Read().Exec(`UPDATE tools SET enabled = 0 WHERE name = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/tenants/acme/unfreeze", "/tools/issue_refund/enable"} {
		if got := b.post(path, url.Values{}, nil); got.Status != http.StatusForbidden {
			t.Errorf("POST %s without token = %d, want 403", path, got.Status)
		}
	}

	if got := auditCount(t, in.DB); got != before {
		t.Errorf("refused posts wrote %d audit events", got-before)
	}
	tn := adminTenantBySlug(t, in.DB, "acme")
	if tn.Name != "Acme" || tn.RetentionDays != 30 || !tn.Frozen {
		t.Errorf("acme = %+v, want unchanged (name Acme, 30 days, frozen as set by the test)", tn)
	}
	if _, err := adminLookupTenant(in, "globex"); err == nil {
		t.Error("a tenant was created")
	}
	if ks, _ := keys.List(ctx, in.DB.Read(), nil); len(ks) != 1 || ks[0].RevokedAt != nil {
		t.Errorf("keys = %+v, want the one unrevoked key", ks)
	}
	if _, err := budgets.Get(ctx, in.DB.Read(), acme.ID); err != budgets.ErrNoBudget {
		t.Errorf("budget.Get = %v, want no budget", err)
	}
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "lookup_order"); !tl.Enabled || tl.Description != "Find an order" {
		t.Errorf("lookup_order = %+v, want unchanged", tl)
	}
	if tl, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund"); tl.Enabled {
		t.Error("issue_refund was switched on")
	}
	if _, err := catalog.Get(ctx, in.DB.Read(), "new_tool"); err == nil {
		t.Error("a tool was created")
	}
}

func withField(form url.Values, k, v string) url.Values {
	out := url.Values{}
	for key, vals := range form {
		out[key] = vals
	}
	out.Set(k, v)
	return out
}

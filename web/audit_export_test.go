package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
)

var auditExportPaths = []string{"/audit/export.jsonl", "/audit/export.jsonl.manifest.json", "/audit/export.csv", "/audit/export.csv.manifest.json"}

// auditExportSeed appends events of tenants acme and globex.
func auditExportSeed(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for i, tenant := range []string{"acme", "globex", "acme", "globex", "acme"} {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := audit.Append(ctx, tx, audit.Event{
				Actor: audit.Actor{Type: audit.ActorSystem, ID: "test"}, Tenant: tenant, Verb: "action.approve",
				Subject: audit.Subject{Type: "action", ID: "=act" + string(rune('0'+i))}, Details: map[string]any{"n": i},
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func installationKey(t *testing.T, db *store.DB) *audit.Signer {
	t.Helper()
	s, err := audit.LoadOrCreateSigner(filepath.Dir(db.Path()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAuditExportIsForAuditorsAndAdminsOnly(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	auditExportSeed(t, in.DB)
	query := "?until=" + url.QueryEscape(time.Now().UTC().Format(time.RFC3339Nano))
	for _, user := range []string{"alice", "carol"} { // approver, on-call
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		for _, path := range auditExportPaths {
			if p := b.get(path + query); p.Status != http.StatusForbidden || strings.Contains(p.Body, "action.approve") {
				t.Errorf("%s: GET %s = %d, want 403 and no events", user, path, p.Status)
			}
		}
	}
	for _, user := range []string{"dave", "erin"} { // auditor, admin
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		for _, path := range auditExportPaths {
			if p := b.get(path + query); p.Status != http.StatusOK {
				t.Errorf("%s: GET %s = %d, want 200", user, path, p.Status)
			}
		}
	}
}

// TestAuditExportDownloadsVerify downloads an export and then its manifest
// as an auditor's browser does, and checks the pair offline.
func TestAuditExportDownloadsVerify(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	auditExportSeed(t, in.DB)
	b := newBrowser(t, in.URL)
	b.loginDev("dave")
	key := installationKey(t, in.DB)

	want := int64(5) // the action.approve events so far
	for _, format := range []string{"jsonl", "csv"} {
		// Without until the address is pinned first, so that the manifest
		// can be asked for the same rows.
		file := b.get("/audit/export." + format + "?verb=action.")
		if file.Status != http.StatusOK || file.URL.Query().Get("until") == "" {
			t.Fatalf("GET /audit/export.%s = %d at %s, want 200 at an address with until", format, file.Status, file.URL)
		}
		if cd := file.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="warden-audit-`) || !strings.HasSuffix(cd, "."+format+`"`) {
			t.Errorf("Content-Disposition = %q, want an attachment named warden-audit-….%s", cd, format)
		}
		// Events written after the export link (dave's sign-in, the
		// export itself) are not in the manifest's rows.
		auditExportSeed(t, in.DB)
		mp := b.get("/audit/export." + format + ".manifest.json?" + file.URL.RawQuery)
		if mp.Status != http.StatusOK || !strings.HasPrefix(mp.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("manifest = %d, %q", mp.Status, mp.Header.Get("Content-Disposition"))
		}
		m, err := audit.ReadManifest(strings.NewReader(mp.Body))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := audit.VerifyExport(strings.NewReader(file.Body), m, key.PublicKey())
		if err != nil || !rep.OK() || rep.Rows != want || rep.Continuity {
			t.Errorf("%s: VerifyExport = %+v, %v; want %d rows verified with the installation's key, no continuity claimed", format, rep, err, want)
		}

		ev := lastAudit(t, in.DB)
		for ev.Verb != "audit.export" {
			evs, _ := audit.List(context.Background(), in.DB.Read(), audit.Filter{Before: ev.Seq, Limit: 1})
			if len(evs) == 0 {
				t.Fatal("no audit.export event")
			}
			ev = evs[0]
		}
		raw, _ := json.Marshal(ev)
		// Who exported is named as the event recorded dave (issue 26: an
		// auditor holding only an export can tell who did what); the
		// filters and rows are ids and counts, no other personal data.
		if ev.Actor.Type != audit.ActorPrincipal || ev.Actor.ID == "" || ev.Subject.ID != m.SHA256 ||
			ev.Details["rows"] != json.Number(strconv.FormatInt(want, 10)) || ev.Details["format"] != format ||
			ev.Actor.Name != "Dave Auditor" || ev.Actor.Email != "dave@example.com" {
			t.Errorf("audit.export event = %s, want dave's principal id, name and e-mail, %d rows and the file's hash", raw, want)
		}
		want += 5
	}
	if p := b.get("/audit/export.csv?since=soon"); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "since") {
		t.Errorf("GET /audit/export.csv?since=soon = %d, want 422 naming the since filter", p.Status)
	}
}

// TestAuditExportScopedAuditorSeesOnlyTheirTenant calls the handlers as an
// auditor scoped to acme, the way the router would after its role check.
func TestAuditExportScopedAuditorSeesOnlyTheirTenant(t *testing.T) {
	in := startWarden(t, nil)
	auditExportSeed(t, in.DB)
	globex := &identity.Principal{ID: "p-globex-auditor", Roles: []string{identity.RoleAuditor}, Tenants: []string{"globex"}}
	scoped := &identity.Principal{ID: "p-acme-auditor", Name: "Scoped Auditor", Roles: []string{identity.RoleAuditor}, Tenants: []string{"acme"}}
	h := &handlers.Console{DB: in.DB}
	until := "until=" + url.QueryEscape(time.Now().UTC().Format(time.RFC3339Nano))
	before := auditCount(t, in.DB)

	for _, target := range []string{"/audit/export.jsonl?" + until, "/audit/export.jsonl?tenant=&" + until} {
		rec, err := callAs(t, h.AuditExportJSONL, scoped, http.MethodGet, target, nil)
		if err != nil || rec.Code != http.StatusOK {
			t.Fatalf("GET %s as acme's auditor = %d, %v", target, rec.Code, err)
		}
		var tenants []string
		for _, line := range strings.Split(strings.TrimSpace(rec.Body.String()), "\n") {
			var r struct{ Tenant string }
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			tenants = append(tenants, r.Tenant)
		}
		if strings.Join(tenants, ",") != "acme,acme,acme" {
			t.Errorf("GET %s as acme's auditor exported tenants %v, want acme's 3 events only", target, tenants)
		}
		mrec, err := callAs(t, h.AuditExportJSONLManifest, scoped, http.MethodGet, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := audit.ReadManifest(mrec.Body)
		if err != nil || m.Filters.Tenant != "acme" || m.Rows != 3 || m.Unfiltered {
			t.Errorf("manifest = %+v, %v; want acme's 3 rows, filtered", m, err)
		}
		if rep, err := audit.VerifyExport(rec.Body, m, installationKey(t, in.DB).PublicKey()); err != nil || !rep.OK() {
			t.Errorf("VerifyExport = %+v, %v", rep, err)
		}
	}
	if ev := lastAudit(t, in.DB); ev.Verb != "audit.export" || ev.Tenant != "acme" || ev.Actor.ID != scoped.ID {
		t.Errorf("last event = %+v, want acme's auditor's audit.export in tenant acme", ev)
	}
	after := auditCount(t, in.DB)

	for _, call := range []struct {
		name string
		h    func(*identity.Principal, string) error
	}{
		{"jsonl", func(p *identity.Principal, q string) error {
			_, err := callAs(t, h.AuditExportJSONL, p, http.MethodGet, "/audit/export.jsonl?"+q, nil)
			return err
		}},
		{"csv", func(p *identity.Principal, q string) error {
			_, err := callAs(t, h.AuditExportCSV, p, http.MethodGet, "/audit/export.csv?"+q, nil)
			return err
		}},
		{"jsonl manifest", func(p *identity.Principal, q string) error {
			_, err := callAs(t, h.AuditExportJSONLManifest, p, http.MethodGet, "/audit/export.jsonl.manifest.json?"+q, nil)
			return err
		}},
		{"csv manifest", func(p *identity.Principal, q string) error {
			_, err := callAs(t, h.AuditExportCSVManifest, p, http.MethodGet, "/audit/export.csv.manifest.json?"+q, nil)
			return err
		}},
	} {
		if err := call.h(scoped, "tenant=globex&"+until); httpStatus(err) != http.StatusForbidden {
			t.Errorf("%s of globex as acme's auditor: %v, want 403", call.name, err)
		}
		if err := call.h(globex, "tenant=acme&"+until); httpStatus(err) != http.StatusForbidden {
			t.Errorf("%s of acme as globex's auditor: %v, want 403", call.name, err)
		}
	}
	if n := auditCount(t, in.DB); n != after || after != before+2 {
		t.Errorf("audit events: %d before, %d after two exports, %d after refusals; want two exports recorded and nothing for refusals", before, after, n)
	}
}

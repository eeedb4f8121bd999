package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// TestDeclaredPersonalFields: a tool's schema marks fields personal
// (x-warden-personal). Values detection does not catch — a made-up name
// and an internal customer code — are tokenised in the action, its audit
// events, the approval page, the audit export and the raw database files
// (WAL included); the same fields of a tool without marks are left to
// detection, which lets them through. A journey's step journal tokenises
// a declared argument of a built-in tool the same way. A bad mark is
// refused when the tool is saved.
func TestDeclaredPersonalFields(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	system := audit.Actor{Type: audit.ActorSystem, ID: "test"}
	schema := func(marks bool) json.RawMessage {
		m := func(kind string) string {
			if !marks {
				return ""
			}
			return `, "x-warden-personal": "` + kind + `"`
		}
		return json.RawMessage(`{"type": "object", "properties": {
			"recipient": {"type": "string"` + m("name") + `},
			"kundenref": {"type": "string"` + m("id") + `},
			"sku": {"type": "string"}}}`)
	}
	for name, marks := range map[string]bool{"ship_gift": true, "ship_plain": false} {
		if err := catalog.Create(ctx, in.DB, system, tools.Tool{Name: name, Impact: risk.ImpactHigh, Reversibility: risk.Irreversible,
			Provider: tools.ProviderExternal, Timeout: time.Second, MaxAttempts: 1, ApprovalTTL: time.Hour, ArgsSchema: schema(marks),
			TargetArg: "recipient", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	bad := tools.Tool{Name: "ship_bad", Impact: risk.ImpactHigh, Reversibility: risk.Irreversible, Provider: tools.ProviderExternal,
		Timeout: time.Second, MaxAttempts: 1, ApprovalTTL: time.Hour,
		ArgsSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string","x-warden-personal":"nom"}}}`)}
	var ve *store.ValidationError
	if err := catalog.Create(ctx, in.DB, system, bad); !errors.As(err, &ve) || !strings.Contains(ve.Fields["args_schema"], `who is marked "nom"`) {
		t.Fatalf("a bad mark saved: %v", err)
	}

	const name, code, sku = "Zyx Qwerty", "KQ-4471-ZZ", "SKU-TEAL-77"
	const plainName, plainCode = "Yxq Wertz", "KQ-9902-YY" // the name is caught by detection under "recipient"
	_, secrets := newKeyWithSecrets(t, in, "ship agent", []string{"tool:ship_gift", "tool:ship_plain", "tool:lookup_order", "skill:order_status"}, 600, 60, nil)
	p := propose(t, in, secrets.Key, map[string]any{"tool": "ship_gift",
		"arguments": map[string]any{"recipient": name, "kundenref": code, "sku": sku}, "summary": "gift", "reason": "a gift"}, nil)
	if p.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", p.Status, p.Raw)
	}
	off := propose(t, in, secrets.Key, map[string]any{"tool": "ship_plain",
		"arguments": map[string]any{"recipient": plainName, "kundenref": plainCode, "sku": sku}, "summary": "gift", "reason": "a gift"}, nil)
	if off.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", off.Status, off.Raw)
	}
	a := getAction(t, in, p.str("id"))
	nameTok, codeTok := in.Redactor.Token("name", name), in.Redactor.Token("id", code)
	if args := string(a.ArgumentsRedacted); !strings.Contains(args, nameTok) || !strings.Contains(args, codeTok) || !strings.Contains(args, sku) {
		t.Errorf("declared fields not tokenised (or the SKU lost): %s", args)
	}
	if !strings.Contains(a.Summary, nameTok) {
		t.Errorf("headline %q does not name the target by its token", a.Summary)
	}
	// Off: the same fields without marks are left to detection, which
	// does not know these values (so the scans below are not vacuous).
	if args := string(getAction(t, in, off.str("id")).ArgumentsRedacted); !strings.Contains(args, plainCode) {
		t.Errorf("undeclared fields: %s", args)
	}

	// A journey: lookup_order's order_id marked an id; the step journal
	// keeps the token, the demo order stays found.
	lookup, err := catalog.Get(ctx, in.DB.Read(), "lookup_order")
	if err != nil {
		t.Fatal(err)
	}
	lookup.ArgsSchema = json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string","x-warden-personal":"id"}},"required":["order_id"]}`)
	if _, err := catalog.Update(ctx, in.DB, system, lookup); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"input": "where is my parcel?", "metadata": map[string]string{"order_id": "ORD-1003"}})
	j := callAPI(t, ctx, http.MethodPost, in.URL+"/v1/journeys", secrets.Key, body, nil)
	if j.Status != http.StatusOK {
		t.Fatalf("journey = %d %s", j.Status, j.Raw)
	}
	orderTok := in.Redactor.Token("id", "ORD-1003")
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journey_steps WHERE journey_id = ? AND tool = 'lookup_order' AND arguments LIKE ?`, j.str("id"), "%"+orderTok+"%"); n != 1 {
		t.Errorf("%d lookup steps hold the order id's token, want 1", n)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journey_steps WHERE journey_id = ? AND arguments LIKE '%ORD-1003%'`, j.str("id")); n != 0 {
		t.Errorf("%d steps hold the declared order id in the clear", n)
	}

	// Pages and the export.
	approver := newBrowser(t, in.URL)
	approver.loginDev("alice")
	shown := approver.get("/approvals/" + p.str("id"))
	auditor := newBrowser(t, in.URL)
	auditor.loginDev("dave")
	export := auditor.get("/audit/export.jsonl")
	if shown.Status != http.StatusOK || export.Status != http.StatusOK || !strings.Contains(shown.Body, sku) {
		t.Fatalf("approval page %d, export %d", shown.Status, export.Status)
	}
	if !strings.Contains(export.Body, nameTok) {
		t.Errorf("the export does not show the proposal's headline with the name's token")
	}
	for _, v := range []string{name, code} {
		for what, text := range map[string]string{"approval page": shown.Body, "audit export": export.Body, "log": in.Logs.String()} {
			if strings.Contains(text, v) {
				t.Errorf("%q in the clear in the %s", v, what)
			}
		}
	}
	// The catalog shows the marks next to the tool, the form under its schema.
	admin := newBrowser(t, in.URL)
	admin.loginDev("erin")
	marks := admin.get("/tools").Doc.Find(`[data-testid="tool-personal-ship_gift"]`).Text()
	if !strings.Contains(marks, "recipient") || !strings.Contains(marks, "kundenref") || !strings.Contains(marks, "name") {
		t.Errorf("catalog marks = %q", marks)
	}
	if admin.get("/tools").Doc.Find(`[data-testid="tool-personal-ship_plain"]`).Length() != 0 {
		t.Error("a tool without marks shows some")
	}
	if form := admin.get("/tools/ship_gift/edit").Doc.Find(`[data-testid="tool-form-personal"]`).Text(); !strings.Contains(form, "kundenref") {
		t.Errorf("form marks = %q", form)
	}

	forms := map[string][]string{"declared name": {name}, "declared code": {code}}
	for _, hit := range findPlanted(t, in.DB.Read(), forms) {
		t.Error(hit)
	}
	if in.DB.Dialect() == store.Postgres {
		return
	}
	var seenPlain bool
	filepath.Walk(filepath.Dir(in.DB.Path()), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasPrefix(info.Name(), "warden.db") {
			return nil
		}
		b, _ := os.ReadFile(path)
		seenPlain = seenPlain || bytes.Contains(b, []byte(plainCode))
		for _, v := range []string{name, code} {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%q is stored in the clear in %s", v, info.Name())
			}
		}
		return nil
	})
	if !seenPlain {
		t.Error("the undeclared code is in no database file: the file scan would be vacuous")
	}
}

package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/platform/store"
)

// TestJourneyMetadataMarkedPersonal: a journey request marks metadata
// members personal ("x-warden-personal": {"customer": "name"}), as a
// tool's schema marks an argument. The marked values — a made-up name
// and an internal customer code detection does not know — are tokenised
// wherever the journey writes them: its input, its steps, the action it
// proposes (arguments, headline), the audit trail, the API's answer, the
// trace page, the approval page, the audit export and the raw database
// files. The same values unmarked are left to detection, which lets the
// code through (so the scans are not vacuous). A bad mark is refused
// with 400 and nothing runs.
func TestJourneyMetadataMarkedPersonal(t *testing.T) {
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	const name, code = "Zyx Qwerty", "KQ-4471-ZZ"
	const plainCode = "KQ-9902-YY"
	send := func(input string, meta, marks map[string]string) apiResp {
		body := map[string]any{"input": input, "metadata": meta}
		if marks != nil {
			body["x-warden-personal"] = marks
		}
		raw, _ := json.Marshal(body)
		return callAPI(t, ctx, http.MethodPost, in.URL+"/v1/journeys", in.DemoKey, raw, nil)
	}
	before := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`)
	for _, bad := range []map[string]string{{"customer": "nom"}, {"nobody": "name"}} {
		r := send("where is ORD-1003?", map[string]string{"customer": name}, bad)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Raw), "x-warden-personal") {
			t.Errorf("marks %v = %d %s, want 400 naming x-warden-personal", bad, r.Status, r.Raw)
		}
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`); n != before {
		t.Fatalf("a refused request recorded %d journeys", n-before)
	}

	marked := send("ORD-1005 was charged twice, please refund $45.50. The customer is "+strings.ToLower(name)+", internal ref "+code+".",
		map[string]string{"order_id": "ORD-1005", "customer": name, "kundenref": code}, map[string]string{"customer": "name", "kundenref": "id"})
	if marked.Status != http.StatusOK && marked.Status != http.StatusAccepted {
		t.Fatalf("marked journey = %d %s", marked.Status, marked.Raw)
	}
	plain := send("Where is ORD-1003? internal ref "+plainCode+".", map[string]string{"order_id": "ORD-1003", "kundenref": plainCode}, nil)
	if plain.Status != http.StatusOK {
		t.Fatalf("plain journey = %d %s", plain.Status, plain.Raw)
	}
	nameTok, codeTok := in.Redactor.Token("name", name), in.Redactor.Token("id", code)
	var input string
	if err := in.DB.Read().QueryRow(`SELECT input FROM journeys WHERE id = ?`, marked.str("id")).Scan(&input); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(input, nameTok) || !strings.Contains(input, codeTok) || !strings.Contains(input, "ORD-1005") {
		t.Errorf("stored input = %q, want both tokens and the order", input)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys WHERE id = ? AND input LIKE ?`, plain.str("id"), "%"+plainCode+"%"); n != 1 {
		t.Errorf("the unmarked code is not in the clear in its journey: detection alone would have caught it, and the test is vacuous")
	}

	approver := newBrowser(t, in.URL)
	approver.loginDev("alice")
	pages := map[string]string{"API answer": string(marked.Raw), "log": in.Logs.String()}
	if a, _ := marked.Body["action"].(map[string]any); a != nil {
		id, _ := a["id"].(string)
		p := approver.get("/approvals/" + id)
		if p.Status != http.StatusOK {
			t.Fatalf("approval page = %d", p.Status)
		}
		pages["approval page"] = p.Body
	}
	admin := newBrowser(t, in.URL)
	admin.loginDev("erin")
	tr := admin.get("/traces/" + marked.str("id"))
	if tr.Status != http.StatusOK || !strings.Contains(tr.Body, "ORD-1005") {
		t.Fatalf("trace page = %d", tr.Status)
	}
	pages["trace page"] = tr.Body
	// The admin reads which kind of detector wrote each token, never the
	// value; an auditor's trace page has no such table.
	kinds := map[string]string{}
	tr.Doc.Find(`[data-testid="trace-token"]`).Each(func(_ int, s *goquery.Selection) {
		kinds[strings.TrimSpace(s.Find("td").First().Text())] = s.Find(`[data-testid="trace-token-kind"]`).Text()
	})
	if kinds[nameTok] != "«name»" || kinds[codeTok] != "«id»" {
		t.Errorf("trace tokens = %v, want %s «name» and %s «id»", kinds, nameTok, codeTok)
	}
	auditor := newBrowser(t, in.URL)
	auditor.loginDev("dave")
	export := auditor.get("/audit/export.jsonl")
	if export.Status != http.StatusOK {
		t.Fatalf("export = %d", export.Status)
	}
	pages["audit export"] = export.Body
	if at := auditor.get("/traces/" + marked.str("id")); at.Status != http.StatusOK || at.Doc.Find(`[data-testid="trace-tokens"]`).Length() != 0 {
		t.Error("an auditor's trace page shows the redactions table, which is for admins")
	}
	for what, text := range pages {
		for _, v := range []string{name, strings.ToLower(name), code} {
			if strings.Contains(text, v) {
				t.Errorf("%q in the clear in the %s", v, what)
			}
		}
	}
	for _, hit := range findPlanted(t, in.DB.Read(), map[string][]string{"marked name": {name}, "marked code": {code}}) {
		t.Error(hit)
	}
	if in.DB.Dialect() == store.Postgres {
		return
	}
	in.DB.Read().Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
	filepath.Walk(filepath.Dir(in.DB.Path()), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, v := range []string{name, code} {
			if bytes.Contains(bytes.ToLower(b), []byte(strings.ToLower(v))) {
				t.Errorf("%q is stored in the clear in %s", v, info.Name())
			}
		}
		return nil
	})
}

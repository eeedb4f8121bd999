package web

import (
	"bytes"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/wait"
)

// TestRedactionPIIEndToEnd plants people's names, street addresses,
// postcodes, dates of birth, identity numbers and Unicode-disguised cards
// through POST /v1/journeys (against the demo orders, so they flow
// through tool arguments and results too) and POST /v1/actions, then
// searches the log, the API's answers, every column of every table and
// the raw files of the data directory, WAL included: none may remain.
func TestRedactionPIIEndToEnd(t *testing.T) {
	in := startWardenDemo(t, nil)
	planted := map[string]string{
		"street":          "14 Harbour Road",
		"uk postcode":     "BS3 4QA",
		"name":            "Siobhan O'Sullivan",
		"refund name":     "Dmitri Carvalho",
		"dob":             "04/03/1946",
		"passport":        "568193036",
		"de street":       "Lindenstraße 12",
		"de postcode":     "10115",
		"action name":     "Kwame Mensah",
		"action address":  "221B Baker Street",
		"action dob":      "12 June 1980",
		"licence":         "MORGA753116SM9IJ",
		"nbsp card":       "4111\u00a01111\u00a01111\u00a01111",
		"full-width card": "４１１１ １１１１ １１１１ １１１１",
	}
	answers := ""

	// An address change to a real demo order, and a refund naming the
	// customer.
	change := journey(t, in, in.DemoKey, "Please change the delivery address for ORD-1001 to "+planted["street"]+", "+planted["uk postcode"]+
		". The customer is "+planted["name"]+".", nil)
	if change.Status != http.StatusOK {
		t.Fatalf("address change journey = %d %s", change.Status, change.Raw)
	}
	refund := journey(t, in, in.DemoKey, "ORD-1005 was charged twice, please refund $45.50. Customer "+planted["refund name"]+" (date of birth "+planted["dob"]+"), passport "+
		planted["passport"]+" on file. Card "+planted["nbsp card"]+".", nil)
	if refund.Status != http.StatusOK && refund.Status != http.StatusAccepted {
		t.Fatalf("refund journey = %d %s", refund.Status, refund.Raw)
	}
	de := journey(t, in, in.DemoKey, "Bitte die Lieferadresse für ORD-1002 ändern: "+planted["de street"]+", "+planted["de postcode"]+
		" Berlin. Karte "+planted["full-width card"]+".", nil)
	answers += string(change.Raw) + string(refund.Raw) + string(de.Raw)

	// An action proposed by an external agent, decided by an approver.
	_, secrets := newKeyWithSecrets(t, in, "refund agent", []string{"tool:issue_refund"}, 600, 60, nil)
	p := propose(t, in, secrets.Key, map[string]any{
		"tool":      "issue_refund",
		"arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": 4550, "currency": "USD", "account": "FR7630004008230001234567819"},
		"summary":   "Refund $45.50 for ORD-1005 to " + planted["action name"] + ", " + planted["action address"] + " (born " + planted["action dob"] + ")",
		"reason":    "Dear support, my name is " + planted["action name"] + ", driving licence " + planted["licence"] + ".",
		"amount":    4550, "currency": "usd",
	}, nil)
	if p.Status != http.StatusAccepted {
		t.Fatalf("propose = %d %s", p.Status, p.Raw)
	}
	answers += string(p.Raw)
	decide(t, in, p.str("id"), approvals.Approve, "Approved for "+planted["action name"]+", DOB "+planted["action dob"])
	wait.For(15*time.Second, func() bool { return getAction(t, in, p.str("id")).Status != approvals.StatusApproved })

	// The scans below are not vacuous: the journeys were stored, redacted.
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys WHERE input LIKE '%[name:%' OR input LIKE '%[address:%'`); n < 2 {
		t.Errorf("%d journeys hold a name or address token, want at least 2", n)
	}

	forms := map[string][]string{}
	for kind, v := range planted {
		forms[kind] = []string{v}
	}
	for kind, fs := range forms {
		for _, f := range fs {
			if strings.Contains(in.Logs.String(), f) {
				t.Errorf("%s %q reached the log", kind, f)
			}
			if strings.Contains(answers, f) {
				t.Errorf("%s %q is in an API answer", kind, f)
			}
		}
	}
	simDB, err := sql.Open("sqlite", "file:"+in.Agent.Sim.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer simDB.Close()
	for name, db := range map[string]*sql.DB{"warden.db": in.DB.Read(), "simprovider.db": simDB} {
		for _, hit := range findPlanted(t, db, forms) {
			t.Errorf("%s: %s", name, hit)
		}
	}
	in.DB.Read().Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
	filepath.Walk(filepath.Dir(in.DB.Path()), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for kind, fs := range forms {
			for _, f := range fs {
				if bytes.Contains(bytes.ToLower(b), []byte(strings.ToLower(f))) {
					t.Errorf("%s %q is stored in the clear in %s", kind, f, filepath.Base(path))
				}
			}
		}
		return nil
	})
}

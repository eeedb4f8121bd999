package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The door corpus: a seeded generator of its own (not the redaction
// package's fixtures) writes support and operations texts with planted
// personal values and clean values people must read, and
// TestRedactionThroughTheDoors sends them through the five doors over
// real HTTP. A planted value counts as found only when it is in the clear
// nowhere: no cell of any table, no file of the data directory (SQLite,
// WAL included), no trace page, not the audit export, not the log.

type doorValue struct{ kind, value string }

type doorText struct {
	text  string
	pii   []doorValue
	clean []doorValue
}

type doorGen struct{ r *rand.Rand }

var (
	dcGiven   = []string{"Margaret", "Oliver", "Amelia", "Lucas", "Sofia", "Mateo", "Hannah", "Jonas", "Chloé", "Antoine", "Giulia", "Marco", "Aisha", "Omar", "Priya", "Arjun", "Mei", "Hiroshi", "Fatima", "Kwame"}
	dcFamily  = []string{"Whitfield", "Okafor", "García", "Schneider", "Dubois", "Rossi", "Haddad", "Sharma", "Tanaka", "Mensah", "Kowalski", "Lindqvist", "Fernandes", "O'Brien", "Nakamura", "Petrov", "Bianchi", "Moreau", "Hoffmann", "Castillo"}
	dcStreets = []string{"Harbour Road", "Mill Lane", "Station Street", "Kingsway Avenue", "Orchard Close", "Elm Drive", "Church Street", "Victoria Road"}
	dcBrands  = []string{"Hugo Boss", "Ralph Lauren", "Calvin Klein", "Dr. Martens", "Earl Grey", "Granny Smith", "Goldman Sachs", "Charles Schwab", "Marks & Spencer", "Royal Mail", "Osaka Kansai", "Jack Daniel's", "Tommy Hilfiger", "Ted Baker"}
	dcItems   = []string{"shirts", "boots", "tea tins", "apples", "jackets", "gift boxes", "pallets", "scarves"}
)

func (g *doorGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *doorGen) digits(n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('0' + g.r.IntN(10)))
	}
	return b.String()
}

func (g *doorGen) card() string {
	d := "4" + g.digits(14)
	sum := 0
	for i := len(d) - 1; i >= 0; i-- { // positions from the right, check digit to come
		v := int(d[i] - '0')
		if (len(d)-1-i)%2 == 0 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	d += string(byte('0' + (10-sum%10)%10))
	return d[:4] + " " + d[4:8] + " " + d[8:12] + " " + d[12:]
}

func (g *doorGen) iban() string {
	bban := g.digits(18)
	n, _ := new(big.Int).SetString(bban+"131400", 10) // D=13 E=14, then 00
	check := 98 - int(new(big.Int).Mod(n, big.NewInt(97)).Int64())
	s := fmt.Sprintf("DE%02d%s", check, bban)
	var parts []string
	for i := 0; i < len(s); i += 4 {
		parts = append(parts, s[i:min(i+4, len(s))])
	}
	return strings.Join(parts, " ")
}

func (g *doorGen) ssn() string {
	return fmt.Sprintf("%03d-%02d-%04d", 1+g.r.IntN(665), 1+g.r.IntN(99), 1+g.r.IntN(9999))
}

func (g *doorGen) cpf() string {
	var d []int
	for range 9 {
		d = append(d, g.r.IntN(10))
	}
	for round := range 2 {
		sum := 0
		for i, v := range d {
			sum += v * (10 + round - i)
		}
		c := sum * 10 % 11
		if c == 10 {
			c = 0
		}
		d = append(d, c)
	}
	s := ""
	for _, v := range d {
		s += string(byte('0' + v))
	}
	return s[:3] + "." + s[3:6] + "." + s[6:9] + "-" + s[9:]
}

var (
	vD   = [10][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6}, {3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1}, {6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}
	vP   = [8][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2}, {8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1}, {2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8}}
	vInv = [10]int{0, 4, 3, 2, 1, 5, 6, 7, 8, 9}
)

func (g *doorGen) aadhaar() string {
	s := string(byte('2'+g.r.IntN(8))) + g.digits(10)
	c := 0
	for i := 0; i < len(s); i++ {
		c = vD[c][vP[(i+1)%8][int(s[len(s)-1-i]-'0')]]
	}
	s += string(byte('0' + vInv[c]))
	return s[:4] + " " + s[4:8] + " " + s[8:]
}

func (g *doorGen) name() string { return g.pick(dcGiven) + " " + g.pick(dcFamily) }

// planted returns one planted value of a random kind and the sentence
// that carries it.
func (g *doorGen) planted(i int) (doorValue, string) {
	switch i % 11 {
	case 0:
		n := g.name()
		return doorValue{"name", n}, g.pick([]string{"The customer is " + n + ".", "Dear " + n + ", thanks for waiting.", "Regards, " + n})
	case 1:
		v := fmt.Sprintf("%d %s", 2+g.r.IntN(300), g.pick(dcStreets))
		return doorValue{"address", v}, "Please ship to " + v + ", Bristol."
	case 2:
		v := fmt.Sprintf("%s.%s%d@mail-example.com", strings.ToLower(g.pick([]string{"jane", "omar", "li", "sven"})), strings.ToLower(g.pick([]string{"doe", "haddad", "wei", "berg"})), g.r.IntN(1000))
		return doorValue{"email", v}, "Reply to " + v + " please."
	case 3:
		v := g.card()
		return doorValue{"card", v}, "Card used: " + v + "."
	case 4:
		v := g.iban()
		return doorValue{"iban", v}, "Refund to IBAN " + v + "."
	case 5:
		v := fmt.Sprintf("+44 20 7946 %04d", g.r.IntN(10000))
		return doorValue{"phone", v}, "Call back on " + v + "."
	case 6:
		v := g.ssn()
		return doorValue{"ssn", v}, "SSN on file " + v + "."
	case 7:
		v := g.cpf()
		return doorValue{"cpf", v}, "CPF do cliente " + v + "."
	case 8:
		v := g.aadhaar()
		return doorValue{"aadhaar", v}, "Aadhaar " + v + " verified."
	case 9:
		v := fmt.Sprintf("%02d/%02d/19%02d", 1+g.r.IntN(28), 1+g.r.IntN(12), 40+g.r.IntN(60))
		return doorValue{"dob", v}, "Date of birth " + v + "."
	default:
		u, d := strings.ToLower(g.pick([]string{"jane", "omar", "li", "sven"})), strings.ToLower(g.pick([]string{"doe", "haddad", "wei", "berg"}))
		v := u + " dot " + d + fmt.Sprint(g.r.IntN(100)) + " at mail-example dot com"
		return doorValue{"email written out", v}, "My address is " + v + "."
	}
}

// clean returns a sentence of operational text and the values in it
// people must read.
func (g *doorGen) clean() (string, []doorValue) {
	brand, item := g.pick(dcBrands), g.pick(dcItems)
	sku := fmt.Sprintf("SKU-%04d-%s", g.r.IntN(10000), g.pick([]string{"BLK", "RED", "XL", "TEAL"}))
	order := fmt.Sprintf("ORD-%06d", g.r.IntN(1000000))
	amount := fmt.Sprintf("$%d.%02d", 1+g.r.IntN(2000), g.r.IntN(100))
	return fmt.Sprintf("Order %s: %d %s %s (%s), %s.", order, 1+g.r.IntN(9), brand, item, sku, amount),
		[]doorValue{{"brand", brand}, {"sku", sku}, {"order", order}, {"amount", amount}}
}

// doorRecords writes tool-call arguments that are records: an SSN as
// nine bare digits under a neutral member, told apart only by the object
// it is in (a sibling naming it: "id_type": "SSN", "ssn_verified":
// true), next to numbers of the same shape people must read (an order
// number, a tracking number, an amount in cents, a reference beside
// "channel": "social").
func doorRecords(seed uint64, n int) []doorText {
	g := &doorGen{r: rand.New(rand.NewPCG(seed, 28))}
	bare := func() string { return strings.ReplaceAll(g.ssn(), "-", "") }
	out := make([]doorText, n)
	for i := range out {
		ssn, order, tracking, ref := bare(), bare(), bare(), bare()
		amount := 100000000 + g.r.IntN(500000000)
		person := map[string]any{"value": ssn, "order_number": order, "tracking_number": tracking, "amount_minor": amount}
		switch i % 3 {
		case 0:
			person["id_type"] = g.pick([]string{"SSN", "US-SSN", "Social Security number"})
		case 1:
			person["ssn_verified"] = true
		default:
			person["document"] = "social security number"
		}
		args, _ := json.Marshal(map[string]any{"note": "update the record", "customer": person,
			"source": map[string]any{"channel": "social", "ref": ref}})
		out[i] = doorText{text: string(args), pii: []doorValue{{"ssn in a record", ssn}},
			clean: []doorValue{{"order", order}, {"tracking", tracking}, {"amount", fmt.Sprint(amount)}, {"ref", ref}}}
	}
	return out
}

func doorCorpus(seed uint64, n int) []doorText {
	g := &doorGen{r: rand.New(rand.NewPCG(seed, 28))}
	out := make([]doorText, n)
	for i := range out {
		var t doorText
		var parts []string
		for k := range 2 {
			v, s := g.planted(i*2 + k)
			t.pii = append(t.pii, v)
			parts = append(parts, s)
		}
		c, cs := g.clean()
		t.clean = cs
		parts = append(parts, c)
		g.r.Shuffle(len(parts), func(a, b int) { parts[a], parts[b] = parts[b], parts[a] })
		t.text = strings.Join(parts, " ")
		out[i] = t
	}
	return out
}

// dumpTables is every cell of every table of db as one lower-case text.
func dumpTables(t *testing.T, db *sql.DB) string {
	t.Helper()
	tables, err := store.TableNames(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + strings.ReplaceAll(table, `"`, `""`) + `"`)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		cells := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range cells {
			ptrs[i] = &cells[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			for _, c := range cells {
				b.WriteString(strings.ToLower(cellText(c)))
				b.WriteByte('\n')
			}
		}
		rows.Close()
	}
	return b.String()
}

// TestRedactionThroughTheDoors sends the door corpus through POST
// /v1/journeys, POST /v1/actions, POST /v1/chat/completions, POST
// /v1/responses and a tool call through /mcp (each text once per door,
// with values of its own) and measures, per door, the
// share of planted values in the clear nowhere (recall) and the share of
// clean values (brands, SKUs, order numbers, amounts) that are no longer
// readable where the door stored them (false positives).
func TestRedactionThroughTheDoors(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a corpus through five doors")
	}
	r := newModelRig(t, 1_000_000_000, deployment("fake-a", "fake", 0))
	in := r.in
	ctx := context.Background()
	if err := catalog.Create(ctx, in.DB, audit.Actor{Type: audit.ActorSystem, ID: "test"}, tools.Tool{Name: "note_case", Impact: risk.ImpactHigh,
		Reversibility: risk.Irreversible, Provider: tools.ProviderExternal, Timeout: time.Second, MaxAttempts: 1, ApprovalTTL: time.Hour,
		ArgsSchema: []byte(`{"type":"object"}`), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	_, actKey := newKeyIn(t, in, "modelco", "case-bot", []string{"tool:note_case"}, "test")
	_, jKey := newKeyIn(t, in, "modelco", "journey-bot", []string{"skill:*", "tool:*"}, "test")

	// The MCP door: a real MCP server upstream with a tool that takes a
	// free-text note and echoes it back, as real tools do.
	mcpUp := mcp.NewServer(&mcp.Implementation{Name: "cases", Version: "1"}, nil)
	mcp.AddTool(mcpUp, &mcp.Tool{Name: "note_case", Description: "Add a note to a case."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Note string `json:"note"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted: " + in.Note}}}, nil, nil
		})
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpUp }, nil))
	t.Cleanup(mcpSrv.Close)
	mcpAdmin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}
	sealer := in.Agent.Journeys.Sealer()
	if _, err := mcpservers.Create(ctx, in.DB, sealer, mcpAdmin, mcpservers.Server{Name: "cases", URL: mcpSrv.URL, Timeout: 5 * time.Second, Enabled: true}, "tok"); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpservers.NewGateway(in.DB, sealer, nil, nil).Discover(ctx, mcpAdmin, "cases"); err != nil {
		t.Fatal(err)
	}
	if err := mcpservers.Classify(ctx, in.DB, mcpAdmin, "cases", "note_case", mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
		t.Fatal(err)
	}
	_, mcpKey := newKeyIn(t, in, "modelco", "mcp-bot", []string{"mcp:cases/note_case"}, "test")

	const perDoor = 120
	doors := map[string][]doorText{
		"journeys":         doorCorpus(1, perDoor),
		"actions":          doorCorpus(2, perDoor),
		"chat.completions": doorCorpus(3, perDoor),
		"responses":        doorCorpus(4, perDoor),
		"mcp":              doorCorpus(5, perDoor),
		"records":          doorRecords(6, 60),
	}
	var journeyIDs []string
	for _, d := range doors["journeys"] {
		body, _ := json.Marshal(map[string]any{"input": d.text})
		res := callAPI(t, ctx, http.MethodPost, in.URL+"/v1/journeys", jKey, body, nil)
		if res.str("id") == "" {
			t.Fatalf("journey = %d %s", res.Status, res.Raw)
		}
		journeyIDs = append(journeyIDs, res.str("id"))
	}
	for _, d := range doors["actions"] {
		res := propose(t, in, actKey, map[string]any{"tool": "note_case", "arguments": map[string]any{"note": d.text},
			"summary": d.text, "reason": "case note"}, nil)
		if res.Status != http.StatusAccepted {
			t.Fatalf("propose = %d %s", res.Status, res.Raw)
		}
	}
	for i, d := range doors["chat.completions"] {
		// Half as the user's text, half inside a tool call's arguments
		// and the tool's result.
		msgs := []any{map[string]any{"role": "user", "content": d.text}}
		if i%2 == 1 {
			args, _ := json.Marshal(map[string]string{"note": d.text})
			msgs = []any{map[string]any{"role": "user", "content": "note the case"},
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c", "type": "function",
					"function": map[string]any{"name": "note_case", "arguments": string(args)}}}},
				map[string]any{"role": "tool", "tool_call_id": "c", "content": `{"saved":true}`}}
		}
		body, _ := json.Marshal(map[string]any{"model": "chat", "messages": msgs})
		if res := rawChat(t, r, r.key, string(body)); res.Status != http.StatusOK {
			t.Fatalf("chat = %d %s", res.Status, res.Raw)
		}
	}

	for i, d := range doors["responses"] {
		// Half as the input text, half as a function call's output sent
		// back.
		input := any(d.text)
		if i%2 == 1 {
			input = []any{map[string]any{"type": "function_call", "call_id": "c", "name": "note_case", "arguments": `{"note":"see below"}`},
				map[string]any{"type": "function_call_output", "call_id": "c", "output": d.text}}
		}
		body, _ := json.Marshal(map[string]any{"model": "chat", "input": input})
		if res := callAPI(t, ctx, http.MethodPost, in.URL+"/v1/responses", r.key, body, nil); res.Status != http.StatusOK {
			t.Fatalf("responses = %d %s", res.Status, res.Raw)
		}
	}
	for _, d := range doors["records"] {
		// A record as a chat tool call's arguments.
		msgs := []any{map[string]any{"role": "user", "content": "update the customer's record"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c", "type": "function",
				"function": map[string]any{"name": "update_record", "arguments": d.text}}}},
			map[string]any{"role": "tool", "tool_call_id": "c", "content": `{"saved":true}`}}
		body, _ := json.Marshal(map[string]any{"model": "chat", "messages": msgs})
		if res := rawChat(t, r, r.key, string(body)); res.Status != http.StatusOK {
			t.Fatalf("chat = %d %s", res.Status, res.Raw)
		}
	}
	cs := mcpSession(t, in, mcpKey)
	for _, d := range doors["mcp"] {
		if text, isErr := callText(t, cs, "cases__note_case", map[string]any{"note": d.text}); isErr {
			t.Fatalf("mcp call = %q", text)
		}
	}

	// Everything people and auditors read: every table, each journey's
	// trace page, the audit export.
	seen := dumpTables(t, in.DB.Read())
	admin := newBrowser(t, in.URL)
	admin.loginDev("erin")
	var pages strings.Builder
	for _, id := range journeyIDs {
		p := admin.get("/traces/" + id)
		if p.Status != http.StatusOK {
			t.Fatalf("trace %s = %d", id, p.Status)
		}
		pages.WriteString(strings.ToLower(p.Body))
	}
	auditor := newBrowser(t, in.URL)
	auditor.loginDev("dave")
	export := auditor.get("/audit/export.jsonl")
	if export.Status != http.StatusOK {
		t.Fatalf("export = %d", export.Status)
	}
	seen += pages.String() + strings.ToLower(export.Body) + strings.ToLower(in.Logs.String())
	if in.DB.Dialect() == store.SQLite { // the files themselves, the WAL included
		in.DB.Read().Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		files, _ := filepath.Glob(filepath.Join(filepath.Dir(in.DB.Path()), "*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				seen += strings.ToLower(string(b))
			}
		}
	}
	// Where each door stores the text people read, for the clean values.
	stored := map[string]string{
		"journeys":         strings.ToLower(strings.Join(must(storeStrings(in, `SELECT input FROM journeys`)), "\n")),
		"actions":          strings.ToLower(strings.Join(must(storeStrings(in, `SELECT agent_summary FROM actions`)), "\n")),
		"chat.completions": strings.ToLower(strings.Join(must(storeStrings(in, `SELECT prompt FROM model_calls WHERE operation = 'chat'`)), "\n")),
		"responses":        strings.ToLower(strings.Join(must(storeStrings(in, `SELECT prompt FROM model_calls WHERE operation = 'responses'`)), "\n")),
		"mcp":              strings.ToLower(strings.Join(must(storeStrings(in, `SELECT details FROM audit_events WHERE verb = 'mcp.call'`)), "\n")),
	}
	stored["records"] = stored["chat.completions"]

	names := []string{"journeys", "actions", "chat.completions", "responses", "mcp", "records"}
	sort.Strings(names)
	for _, door := range names {
		found, planted, lost, clean := 0, 0, 0, 0
		missed := map[string]int{}
		for _, d := range doors[door] {
			for _, v := range d.pii {
				planted++
				if strings.Contains(seen, strings.ToLower(v.value)) {
					missed[v.kind]++
					if missed[v.kind] <= 2 {
						i := strings.Index(seen, strings.ToLower(v.value))
						t.Logf("%s: %s %q in the clear: …%s…", door, v.kind, v.value, seen[max(0, i-80):min(len(seen), i+len(v.value)+40)])
					}
					continue
				}
				found++
			}
			for _, v := range d.clean {
				clean++
				if !strings.Contains(stored[door], strings.ToLower(v.value)) {
					lost++
					if lost <= 3 {
						t.Logf("%s: clean %s %q redacted", door, v.kind, v.value)
					}
				}
			}
		}
		recall, fp := float64(found)/float64(planted), float64(lost)/float64(clean)
		t.Logf("%-17s recall %5.1f%% (%d of %d planted values in the clear nowhere), false positives %4.1f%% (%d of %d clean values); missed by kind %v",
			door, 100*recall, found, planted, 100*fp, lost, clean, missed)
		if recall < doorMinRecall || fp > doorMaxFP {
			t.Errorf("%s: recall %.3f (want ≥ %.3f), false positives %.3f (want ≤ %.3f)", door, recall, doorMinRecall, fp, doorMaxFP)
		}
	}
}

// The figures the door corpus holds (a regression fails).
const (
	doorMinRecall = 0.99
	doorMaxFP     = 0.01
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

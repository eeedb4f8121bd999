package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tools"
)

// The failure matrix: for each dependency and fault, what each user action
// gets. The test breaks each dependency on purpose, performs every action
// as its user would, asserts the answer, and checks that
// docs/failure-matrix.md says the same (WARDEN_UPDATE_MATRIX=1 rewrites
// it).
var matrixColumns = []string{
	"read-only journey (agent)",
	"refund proposal (agent, /v1/actions)",
	"approval (console)",
	"execution after approval",
	"console page",
	"sign-in",
}

type matrixRow struct {
	dependency, fault string
	// idp runs the row against an outside identity provider (the test
	// provider) instead of the development one, so it can go down.
	idp bool
	// apply breaks the dependency; it returns how to mend it.
	apply func(t *testing.T, in *instance, cb *matrixCallbacks) (mend func())
	want  []string // one per column
}

// matrixCallbacks is the agent's callback endpoint, which can be down.
type matrixCallbacks struct {
	srv       *httptest.Server
	down      atomic.Bool
	delivered atomic.Int64
}

func newMatrixCallbacks(t *testing.T) *matrixCallbacks {
	cb := &matrixCallbacks{}
	cb.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cb.down.Load() {
			// Down: the connection is dropped without an answer.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		cb.delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(cb.srv.Close)
	return cb
}

func toolFault(f tools.Fault) func(t *testing.T, in *instance, _ *matrixCallbacks) func() {
	return func(t *testing.T, in *instance, _ *matrixCallbacks) func() {
		in.Faults.Set("", f)
		return in.Faults.Clear
	}
}

var matrixRows = []matrixRow{
	{"none", "—", false, func(*testing.T, *instance, *matrixCallbacks) func() { return func() {} },
		[]string{"200 completed", "202 pending", "303 approved", "executed", "200", "signed in"}},
	{"tool provider", "down", false, toolFault(tools.Fault{Mode: tools.FaultDown}),
		[]string{"503 tool_unavailable", "202 pending", "303 approved", "approved, not executed (retried later)", "200", "signed in"}},
	{"tool provider", "hang", false, func(t *testing.T, in *instance, cb *matrixCallbacks) func() {
		// Every attempt waits out the tool's timeout: a shorter one in the
		// catalog (the setting an operator would change) keeps the row quick.
		shortenToolTimeouts(t, in, 250*time.Millisecond)
		return toolFault(tools.Fault{Mode: tools.FaultHang})(t, in, cb)
	},
		[]string{"503 tool_unavailable", "202 pending", "303 approved", "approved, not executed (retried later)", "200", "signed in"}},
	{"tool provider", "flaky (30 %)", false, toolFault(tools.Fault{Mode: tools.FaultFlaky, Rate: 0.3}),
		[]string{"200 completed", "202 pending", "303 approved", "executed", "200", "signed in"}},
	{"tool provider", "slow (300 ms)", false, toolFault(tools.Fault{Mode: tools.FaultSlow, Latency: 300 * time.Millisecond}),
		[]string{"200 completed", "202 pending", "303 approved", "executed", "200", "signed in"}},
	{"storage", "writes fail", false, func(t *testing.T, in *instance, _ *matrixCallbacks) func() {
		if err := in.DB.FailWrites(context.Background(), true); err != nil {
			t.Fatal(err)
		}
		return func() { in.DB.FailWrites(context.Background(), false) }
	}, []string{"503 storage_unavailable", "503 storage_unavailable", "503 storage_unavailable", "pending (nothing decided)", "200", "503 storage_unavailable"}},
	{"callback target", "down", false, func(t *testing.T, in *instance, cb *matrixCallbacks) func() {
		cb.down.Store(true)
		return func() { cb.down.Store(false) }
	}, []string{"200 completed", "202 pending", "303 approved", "executed; callback not delivered (retried from the outbox)", "200", "signed in"}},
	// The identity provider's own row: the approver signed in before it
	// went down; only a new sign-in needs it.
	{"identity provider", "down", true, nil,
		[]string{"200 completed", "202 pending", "303 approved", "executed", "200", "503 provider unreachable page"}},
}

func TestFailureMatrix(t *testing.T) {
	t.Parallel()
	got := make([][]string, len(matrixRows))
	// Every row runs its own server, so the rows run in parallel; the
	// document is compared once they all ended (the parent's cleanup runs
	// after its parallel subtests).
	t.Cleanup(func() { compareMatrixDoc(t, got) })
	for i, row := range matrixRows {
		t.Run(row.dependency+" "+row.fault, func(t *testing.T) {
			t.Parallel()
			got[i] = runMatrixRow(t, row)
			for c, want := range row.want {
				if got[i][c] != want {
					t.Errorf("%s %s × %s = %q, want %q", row.dependency, row.fault, matrixColumns[c], got[i][c], want)
				}
			}
		})
	}
}

// compareMatrixDoc checks docs/failure-matrix.md against what the rows
// measured (or writes it, with WARDEN_UPDATE_MATRIX=1).
func compareMatrixDoc(t *testing.T, got [][]string) {
	doc := renderMatrix(got)
	const path = "../docs/failure-matrix.md"
	if os.Getenv("WARDEN_UPDATE_MATRIX") == "1" {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil || string(have) != doc {
		t.Errorf("docs/failure-matrix.md is not what the matrix measured; run WARDEN_UPDATE_MATRIX=1 go test ./web -run TestFailureMatrix and commit it")
	}
}

func runMatrixRow(t *testing.T, row matrixRow) []string {
	var idp *testProvider
	var env map[string]string
	if row.idp {
		idp = newTestProvider(t, "RS256")
		idp.set(func(p *testProvider) { p.groups = []string{"warden-approver", "warden-tenant-*"} })
		env = idp.env()
	}
	in := startWardenDemo(t, env)
	in.waitReady(t)
	cb := newMatrixCallbacks(t)
	alice := newBrowser(t, in.URL)
	if row.idp {
		alice.signIn()
	} else {
		alice.loginDev("alice")
	}
	tok := alice.csrf()
	_, secrets := newKeyWithSecrets(t, in, "refund agent", []string{"tool:issue_refund"}, 6000, 100, nil)

	if row.idp {
		idp.srv.Close() // the provider goes down
	} else {
		mend := row.apply(t, in, cb)
		defer mend()
	}
	out := make([]string, len(matrixColumns))

	// Read-only journey. With writes failing it answers only once it gave
	// up writing its end (journeys' ending timeout), so there it runs
	// alongside the other actions, which do not depend on it; elsewhere it
	// runs first, which keeps the order in which the flaky row's faults
	// draw from the injector's seeded random source.
	journeyDone := make(chan error, 1)
	go func() {
		j, err := matrixJourney(in)
		out[0] = fmt.Sprintf("%d %s", j.Status, orStr(j.code(), j.str("status")))
		journeyDone <- err
	}()
	waitJourney := func() {
		if err := <-journeyDone; err != nil {
			t.Fatal(err)
		}
	}
	if row.dependency != "storage" {
		waitJourney()
	} else {
		defer waitJourney() // before mend, deferred earlier
	}

	// Refund proposal with a callback.
	body := map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": 4550, "currency": "USD", "account": "FR7630004008230001234567819"},
		"summary": "Refund $45.50 for ORD-1005", "reason": "double charge", "callback_url": cb.srv.URL,
	}
	if row.idp {
		// Outside development mode callbacks may not reach loopback.
		delete(body, "callback_url")
	}
	a := propose(t, in, secrets.Key, body, nil)
	out[1] = fmt.Sprintf("%d %s", a.Status, orStr(a.code(), a.str("status")))

	// Approval, by Alice in the console, of that proposal (or of a demo
	// refund when the proposal could not be recorded).
	id := a.str("id")
	if id == "" {
		id = pendingAction(t, in, "ORD-1004").ID
	}
	p := alice.noRedirect().get("/approvals/" + id)
	digest, _ := p.Doc.Find(`[data-testid="approve-form"] input[name="digest"]`).Attr("value")
	form := decideForm(approvals.Approve, "matrix", digest)
	form.Set("_csrf", tok)
	d := alice.noRedirect().post("/approvals/"+id+"/decide", form, nil)
	out[2] = fmt.Sprintf("%d", d.Status)
	switch {
	case d.Status == http.StatusSeeOther:
		out[2] += " approved"
	case d.Status >= 500:
		out[2] += " " + pageCode(d)
	}

	// Execution after approval: what the action is after a few seconds.
	out[3] = executionOutcome(t, in, id, cb)

	// A console page and a fresh sign-in.
	out[4] = fmt.Sprintf("%d", alice.get("/approvals").Status)
	bob := newBrowser(t, in.URL)
	if row.idp {
		lp := bob.get("/auth/login")
		out[5] = fmt.Sprintf("%d", lp.Status)
		if lp.Doc.Find(`[data-testid="idp-unreachable"]`).Length() > 0 {
			out[5] += " provider unreachable page"
		}
		return out
	}
	if lp := bob.loginDev("bob"); lp.Status == http.StatusOK {
		out[5] = "signed in"
	} else {
		out[5] = fmt.Sprintf("%d %s", lp.Status, pageCode(lp))
	}
	return out
}

// matrixJourney is journey without t, for a goroutine: the read-only
// journey the first column asks for.
func matrixJourney(in *instance) (apiResp, error) {
	body, _ := json.Marshal(map[string]string{"input": "Where is my order ORD-1003?"})
	req, err := http.NewRequest(http.MethodPost, in.URL+"/v1/journeys", bytes.NewReader(body))
	if err != nil {
		return apiResp{}, err
	}
	req.Header.Set("Authorization", "Bearer "+in.DemoKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return apiResp{}, fmt.Errorf("POST /v1/journeys: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := apiResp{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.Body)
	return out, nil
}

// shortenToolTimeouts sets every catalog tool's timeout to d.
func shortenToolTimeouts(t *testing.T, in *instance, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		all, err := catalog.List(ctx, tx)
		if err != nil {
			return err
		}
		for _, tool := range all {
			tool.Timeout = d
			if err := catalog.Upsert(ctx, tx, tool); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func executionOutcome(t *testing.T, in *instance, id string, cb *matrixCallbacks) string {
	var status string
	wait.For(4*time.Second, func() bool {
		status = getAction(t, in, id).Status
		return status == approvals.StatusExecuted || status == approvals.StatusFailed
	})
	switch status {
	case approvals.StatusExecuted:
		if cb.down.Load() {
			if cb.delivered.Load() == 0 {
				return "executed; callback not delivered (retried from the outbox)"
			}
			return "executed; callback delivered"
		}
		return "executed"
	case approvals.StatusApproved, approvals.StatusExecuting:
		return "approved, not executed (retried later)"
	case approvals.StatusPending:
		return "pending (nothing decided)"
	}
	return status
}

// pageCode is the error code a console error page stands for: the
// storage's title, or its status text.
func pageCode(p page) string {
	if strings.Contains(p.Body, "Storage unavailable") {
		return "storage_unavailable"
	}
	return strings.ToLower(strings.ReplaceAll(http.StatusText(p.Status), " ", "_"))
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func renderMatrix(got [][]string) string {
	var b strings.Builder
	b.WriteString("# Failure matrix\n\n")
	b.WriteString("What each user gets when one dependency fails. Generated by `TestFailureMatrix`\n")
	b.WriteString("(web/failure_matrix_test.go), which breaks each dependency on purpose with the\n")
	b.WriteString("fault injector, performs every action as its user would and asserts the answer;\n")
	b.WriteString("CI fails when this file and the measurement differ. Regenerate with\n")
	b.WriteString("`WARDEN_UPDATE_MATRIX=1 go test ./web -run TestFailureMatrix`. Why each answer is\n")
	b.WriteString("the right one is in [failure-modes.md](failure-modes.md).\n\n")
	b.WriteString("| dependency | fault | " + strings.Join(matrixColumns, " | ") + " |\n")
	b.WriteString("|---|---|" + strings.Repeat("---|", len(matrixColumns)) + "\n")
	for i, row := range matrixRows {
		b.WriteString("| " + row.dependency + " | " + row.fault + " | " + strings.Join(got[i], " | ") + " |\n")
	}
	return b.String()
}

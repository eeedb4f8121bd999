package web

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
	"github.com/wardenhq/warden/tools/sim"
)

// exampleDir is the TypeScript example agent on the OpenAI Agents SDK.
var exampleDir = filepath.Join("..", "examples", "openai-agents-refund")

// requireExample skips the test when the example's dependencies are not
// installed (npm ci --prefix examples/openai-agents-refund), except in CI,
// where .ci/run installs them and a missing install is a failure.
func requireExample(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(exampleDir, "node_modules", "@openai", "agents"))
	if err == nil && statErr == nil {
		return node
	}
	msg := "the example agent needs node and its dependencies: run npm ci --prefix examples/openai-agents-refund"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (node: %v, dependencies: %v)", msg, err, statErr)
	}
	t.Skip(msg)
	return ""
}

// TestOpenAIAgentsExampleRefundsAfterTwoApprovals runs the example agent
// (examples/openai-agents-refund, @openai/agents under Node) against a
// real Warden whose model deployment is the fake upstream's scripted refund
// agent: the model looks the order up, asks for a $1,249.00 refund, the
// refund tool asks Warden for approval and waits, alice and bob approve in
// the console, Warden's payment provider refunds once, and the agent
// reports the executed refund.
func TestOpenAIAgentsExampleRefundsAfterTwoApprovals(t *testing.T) {
	node := requireExample(t)
	in := startWardenDemo(t, nil)
	in.waitReady(t)
	ctx := context.Background()
	fake := fakeupstream.New()
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	// The dev demo serves refund-agent from its own fake upstream; point
	// it at this test's, whose requests the test can see.
	d, err := models.Get(ctx, in.DB.Read(), "refund-agent")
	if err != nil {
		t.Fatal(err)
	}
	d.BaseURL = up.URL + "/v1"
	if _, err := models.Update(ctx, in.DB, in.Agent.Journeys.Sealer(), audit.Actor{Type: audit.ActorSystem, ID: "test"}, d, ""); err != nil {
		t.Fatal(err)
	}
	k, key := newKeyIn(t, in, "acme", "openai agents example", []string{"model:refund-agent", "tool:issue_refund"}, "test")
	refundsBefore, err := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund)
	if err != nil {
		t.Fatal(err)
	}

	run, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "--import", "tsx", "agent.ts", "Refund order ORD-1008: the laptop arrived with a cracked screen.")
	cmd.Dir = exampleDir
	cmd.Env = append(os.Environ(), "WARDEN_URL="+in.URL, "WARDEN_KEY="+key, "WARDEN_MODEL=refund-agent", "WARDEN_APPROVAL_TIMEOUT=150")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		out strings.Builder
	)
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			out.WriteString(sc.Text() + "\n")
			mu.Unlock()
			lines <- sc.Text()
		}
	}()
	printed := func() string { mu.Lock(); defer mu.Unlock(); return out.String() }

	// The refund tool proposes the refund and says which action waits.
	pendingLine := regexp.MustCompile(`Warden action (act_\S+) is pending: 2 approval`)
	var id string
	for id == "" {
		line, ok := <-lines
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("the example ended before asking for approval; stdout:\n%s\nstderr:\n%s", printed(), stderr.String())
		}
		if m := pendingLine.FindStringSubmatch(line); m != nil {
			id = m[1]
		}
	}
	a := getAction(t, in, id)
	if a.Status != approvals.StatusPending || a.Tool != sim.ToolIssueRefund || a.AmountMinor == nil || *a.AmountMinor != 124900 {
		t.Fatalf("proposed action = %s %s %v, want a pending issue_refund of 124900", a.Status, a.Tool, a.AmountMinor)
	}

	// Two approvers decide in the console; one alone refunds nothing.
	approve := func(user string) {
		b := newBrowser(t, in.URL)
		b.loginDev(user)
		p := b.get("/approvals/" + id)
		p = b.post("/approvals/"+id+"/decide", b.withCSRF(decideForm(approvals.Approve, "checked with the customer", digestOnPage(t, p, "approve-form"))), nil)
		if p.Status != http.StatusOK {
			t.Fatalf("%s's approval = %d at %s", user, p.Status, p.URL)
		}
	}
	approve("alice")
	if n, _ := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund); n != refundsBefore {
		t.Fatalf("refunded after one of two approvals")
	}
	approve("bob")

	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("example: %v; stdout:\n%s\nstderr:\n%s", err, printed(), stderr.String())
	}
	got := printed()
	t.Logf("the example printed:\n%s", got)
	if !strings.Contains(got, "Warden action "+id+" ended executed") {
		t.Errorf("the refund tool did not see the action executed; stdout:\n%s", got)
	}
	final := strings.TrimSpace(got[strings.LastIndex(strings.TrimSpace(got), "\n")+1:])
	if !strings.HasPrefix(final, "Refund outcome: ") || !strings.Contains(final, `"status":"executed"`) || !strings.Contains(final, `"refund_id":"rf_`) {
		t.Errorf("the agent's answer = %q, want the executed refund with its receipt", final)
	}
	if n, _ := in.Agent.Sim.EffectCount(ctx, sim.ToolIssueRefund); n != refundsBefore+1 {
		t.Errorf("refunds at the payment provider = %d, want exactly one more than %d", n, refundsBefore)
	}
	if a := getAction(t, in, id); a.Status != approvals.StatusExecuted {
		t.Errorf("action = %s, want executed", a.Status)
	}

	// The three model turns (lookup, refund, report) went through the
	// gateway under the example's key.
	calls, err := models.Calls(ctx, in.DB.Read(), nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	var mine []models.Call
	for _, c := range calls {
		if c.KeyID == k.ID {
			mine = append(mine, c)
		}
	}
	if len(mine) != 3 || fake.Requests() != 3 {
		t.Fatalf("model calls under the key = %d (upstream served %d), want 3", len(mine), fake.Requests())
	}
	for _, c := range mine {
		if c.Status != models.StatusOK || c.Alias != "refund-agent" || c.Deployment != "refund-agent" || c.CostMicros <= 0 {
			t.Errorf("model call %+v, want ok on refund-agent with a cost", c)
		}
	}
}

package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// sdkClientsDir holds the official OpenAI-compatible clients, pinned in
// its package-lock.json, and clients.mjs, which drives each of them.
var sdkClientsDir = filepath.Join("testdata", "sdk-clients")

// requireSDKClients skips the test when the clients are not installed
// (npm ci --prefix web/testdata/sdk-clients), except in CI, where .ci/run
// installs them and a missing install is a failure.
func requireSDKClients(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(sdkClientsDir, "node_modules", "@langchain", "openai"))
	if err == nil && statErr == nil {
		return node
	}
	msg := "the SDK client tests need node and the clients: run npm ci --prefix web/testdata/sdk-clients"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (node: %v, clients: %v)", msg, err, statErr)
	}
	t.Skip(msg)
	return ""
}

// sdkResult is what clients.mjs printed for one scenario.
type sdkResult struct {
	Scenario     string `json:"scenario"`
	OK           bool   `json:"ok"`
	Text         string `json:"text"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	ToolCalls    int    `json:"tool_calls"`
	Status       int    `json:"status"`
	Error        string `json:"error"`
}

// The official clients, each at its default settings and pointed at
// Warden by base URL and key alone, against a real Warden over loopback:
// an answer with its usage, a streamed answer, a tool round trip, a 402
// that the client raises, and an upstream that cuts the stream, which the
// client must raise too (a cut answer never looks finished).
// openai-go, the Go client, is driven by the rest of the model tests.
func TestOfficialClientsAtTheirDefaults(t *testing.T) {
	node := requireSDKClients(t)
	cut := deployment("cutter", "cut", 0)
	cut.Alias = "broken"
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0), cut)
	_, key := newKeyIn(t, r.in, "modelco", "sdk clients", []string{"model:chat", "model:broken"}, "test")
	ctx := context.Background()
	if err := r.in.DB.Transact(ctx, func(tx *store.Tx) error {
		poor, err := tenants.Insert(ctx, tx, "poorco", "Poor Co")
		if err != nil {
			return err
		}
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: poor.ID, Period: budgets.Month, LimitMicros: 1, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	_, poorKey := newKeyIn(t, r.in, "poorco", "sdk clients", []string{"model:chat"}, "test")

	clients := []string{"openai-chat", "openai-responses", "agents", "aisdk-responses", "aisdk-chat", "aisdk-compatible", "langchain-chat", "langchain-responses"}
	for _, client := range clients {
		t.Run(client, func(t *testing.T) {
			run, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(run, node, "clients.mjs", client)
			cmd.Dir = sdkClientsDir
			cmd.Env = append(os.Environ(), "WARDEN_BASE_URL="+r.in.URL+"/v1", "WARDEN_KEY="+key, "WARDEN_MODEL=chat",
				"WARDEN_POOR_KEY="+poorKey, "WARDEN_CUT_MODEL=broken", "OPENAI_AGENTS_DISABLE_TRACING=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.Output()
			if err != nil {
				t.Fatalf("node clients.mjs %s: %v\n%s\n%s", client, err, stdout, stderr.String())
			}
			got := map[string]sdkResult{}
			sc := bufio.NewScanner(bytes.NewReader(stdout))
			for sc.Scan() {
				var res sdkResult
				if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
					t.Fatalf("clients.mjs printed %q: %v", sc.Text(), err)
				}
				got[res.Scenario] = res
			}
			const echo = "echo: where is order ORD-1001"
			for _, s := range []string{"answer", "stream"} {
				if res := got[s]; !res.OK || !strings.Contains(res.Text, echo) || res.InputTokens <= 0 || res.OutputTokens <= 0 {
					t.Errorf("%s: %+v, want the answer %q with its usage", s, res, echo)
				}
			}
			if res := got["tool"]; !res.OK || res.ToolCalls < 1 || !strings.Contains(res.Text, "tool said: ORD-1001 shipped") {
				t.Errorf("tool: %+v, want the tool called and its result answered", res)
			}
			if res := got["error"]; res.OK || res.Status != 402 && !strings.Contains(res.Error, "402") {
				t.Errorf("error: %+v, want the client to raise the 402", res)
			}
			if res := got["cut"]; res.OK || !strings.Contains(res.Error, "ended before it finished") && !strings.Contains(res.Error, "response.failed") {
				t.Errorf("cut: %+v, want the client to raise when the upstream cuts the stream", res)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr.String())
			}
		})
	}
}

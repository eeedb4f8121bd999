package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/platform/wait"
)

// mcpClientsDir holds the official MCP peers, pinned in its
// package-lock.json: the TypeScript SDK (driven by client.mjs),
// server-everything and the conformance suite 0.1.9.
var mcpClientsDir = filepath.Join("testdata", "mcp-clients")

// requireMCPPeers skips the test when node or the peers are not installed
// (npm ci --prefix web/testdata/mcp-clients), except in CI, where .ci/run
// installs them and a missing install is a failure.
func requireMCPPeers(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, statErr := os.Stat(filepath.Join(mcpClientsDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	if err == nil && statErr == nil {
		return node
	}
	msg := "the MCP interop tests need node and the MCP peers: run npm ci --prefix web/testdata/mcp-clients"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (node: %v, peers: %v)", msg, err, statErr)
	}
	t.Skip(msg)
	return ""
}

// freeLoopbackPort returns a port nothing listens on right now.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPeer starts a peer server process, stops it when the test ends,
// and waits until its port accepts connections.
func startPeer(t *testing.T, name string, port int, cmd *exec.Cmd) {
	t.Helper()
	logs := &syncBuffer{} // read while the process may still write
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s's output:\n%s", name, logs.String())
		}
	})
	var err error
	gone := false
	answered := wait.ForEvery(30*time.Second, 50*time.Millisecond, func() bool {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			gone = true
			return true
		default:
			return false
		}
	})
	switch {
	case gone:
		t.Fatalf("%s exited before it answered: %s", name, logs.String())
	case !answered:
		t.Fatalf("%s does not answer on port %d: %v\n%s", name, port, err, logs.String())
	}
}

// tsResult is what client.mjs printed.
type tsResult struct {
	Server struct{ Name string } `json:"server"`
	Tools  []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	Calls []struct {
		Name    string          `json:"name"`
		IsError bool            `json:"isError"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
		Error   string          `json:"error"`
	} `json:"calls"`
}

func (r tsResult) toolNames() []string {
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

type tsCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// runTSClient connects the TypeScript SDK's client to mcpURL with key,
// lists the tools and makes calls.
func runTSClient(t *testing.T, node, mcpURL, key string, calls ...tsCall) tsResult {
	t.Helper()
	if calls == nil {
		calls = []tsCall{}
	}
	in, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = mcpClientsDir
	cmd.Env = append(os.Environ(), "WARDEN_MCP_URL="+mcpURL, "WARDEN_KEY="+key)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s\n%s", err, out, stderr.String())
	}
	var res tsResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("client.mjs printed %q: %v\n%s", out, err, stderr.String())
	}
	if len(res.Calls) != len(calls) {
		t.Fatalf("client.mjs made %d calls of %d: %s", len(res.Calls), len(calls), out)
	}
	return res
}

// The official TypeScript SDK client, through Warden's /mcp, in front of
// the official server-everything (both pinned in
// testdata/mcp-clients/package-lock.json), and the MCP conformance suite
// 0.1.9 against the Go SDK's conformance server, directly and through
// Warden. No side of the protocol is written here.
func TestMCPInterop(t *testing.T) {
	node := requireMCPPeers(t)
	in := startWardenDemo(t, nil) // the demo allows 127.0.0.1 (models.AllowedHosts)
	ctx := context.Background()
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "admin"}
	sealer := in.Agent.Journeys.Sealer()
	g := mcpservers.NewGateway(in.DB, sealer, nil, nil)

	t.Run("TypeScript SDK client and server-everything", func(t *testing.T) {
		port := freeLoopbackPort(t)
		cmd := exec.Command(node, filepath.Join("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "streamableHttp")
		cmd.Dir = mcpClientsDir
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		startPeer(t, "server-everything", port, cmd)

		if _, err := mcpservers.Create(ctx, in.DB, sealer, admin, mcpservers.Server{Name: "every", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Timeout: 10 * time.Second, Enabled: true}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Discover(ctx, admin, "every"); err != nil {
			t.Fatal(err)
		}
		discovered, err := mcpservers.Tools(ctx, in.DB.Read(), "every")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range discovered {
			names = append(names, tl.Name)
		}
		for _, want := range []string{"echo", "get-sum", "get-env"} {
			if !slices.Contains(names, want) {
				t.Fatalf("server-everything lists %q, want %s among them", names, want)
			}
		}
		// echo and get-sum are low-impact; get-env (it prints the server's
		// environment) stays unclassified.
		for _, tool := range []string{"echo", "get-sum"} {
			if err := mcpservers.Classify(ctx, in.DB, admin, "every", tool, mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
				t.Fatal(err)
			}
		}
		_, someKey := newKeyIn(t, in, "acme", "ts-echo-bot", []string{"mcp:every/echo", "mcp:every/get-env"}, "test")
		_, allKey := newKeyIn(t, in, "acme", "ts-every-bot", []string{"mcp:every/*"}, "test")
		door := in.URL + "/mcp"

		t.Run("tools/list is the key's scoped tools", func(t *testing.T) {
			res := runTSClient(t, node, door, someKey)
			if got := res.toolNames(); !slices.Equal(got, []string{"every__echo", "every__get-env"}) {
				t.Errorf("mcp:every/echo and mcp:every/get-env see %q", got)
			}
			if res.Server.Name != "warden" {
				t.Errorf("the client met server %q, want warden", res.Server.Name)
			}
			all := runTSClient(t, node, door, allKey)
			var want []string
			for _, tl := range discovered {
				if !tl.Gone {
					want = append(want, "every__"+tl.Name)
				}
			}
			slices.Sort(want)
			if got := all.toolNames(); !slices.Equal(got, want) {
				t.Errorf("mcp:every/* sees %q, want %q", got, want)
			}
			for _, tl := range all.Tools {
				if tl.Name == "every__echo" && (tl.Description == "" || !strings.Contains(string(tl.InputSchema), `"message"`)) {
					t.Errorf("every__echo listed as %q with schema %s: want the upstream's", tl.Description, tl.InputSchema)
				}
			}
		})

		t.Run("calls: refused, forwarded, out of scope", func(t *testing.T) {
			res := runTSClient(t, node, door, someKey,
				tsCall{Name: "every__get-env"},
				tsCall{Name: "every__echo", Arguments: map[string]any{"message": "write to jane.doe@example.com"}},
				tsCall{Name: "every__get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
			if c := res.Calls[0]; !c.IsError || !strings.HasPrefix(c.Text, "Warden refused this call") || !strings.Contains(c.Text, "not yet classified") {
				t.Errorf("unclassified get-env: %+v, want a tool error from Warden", c)
			}
			if c := res.Calls[1]; c.IsError || c.Error != "" || c.Text != "Echo: write to jane.doe@example.com" {
				t.Errorf("echo: %+v, want server-everything's echo", c)
			}
			// Not offered to this key: the JSON-RPC error "unknown tool",
			// which the TypeScript client raises.
			if c := res.Calls[2]; !strings.Contains(c.Error+c.Text, `unknown tool "every__get-sum"`) || strings.Contains(c.Text, "The sum") {
				t.Errorf("get-sum outside the key's scopes: %+v, want unknown tool", c)
			}
			sum := runTSClient(t, node, door, allKey, tsCall{Name: "every__get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
			if c := sum.Calls[0]; c.IsError || !strings.Contains(c.Text, "5") {
				t.Errorf("get-sum with mcp:every/*: %+v, want server-everything's sum", c)
			}

			var details string
			if err := in.DB.Read().QueryRow(`SELECT details FROM audit_events WHERE verb = 'mcp.call' AND subject_id = 'every/echo' ORDER BY seq DESC LIMIT 1`).Scan(&details); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(details, "jane.doe") || !strings.Contains(details, "[email:") || !strings.Contains(details, `"outcome":"forwarded"`) || !strings.Contains(details, "Echo: write to") {
				t.Errorf("audit of the echo call = %s; want it forwarded, arguments and result with the e-mail redacted", details)
			}
		})

		t.Run("a server switched off refuses", func(t *testing.T) {
			if err := mcpservers.SetEnabled(ctx, in.DB, admin, "every", false); err != nil {
				t.Fatal(err)
			}
			res := runTSClient(t, node, door, someKey, tsCall{Name: "every__echo", Arguments: map[string]any{"message": "hello"}})
			if c := res.Calls[0]; !c.IsError || !strings.HasPrefix(c.Text, "Warden refused this call") || !strings.Contains(c.Text, "switched off") {
				t.Errorf("echo on a server switched off: %+v, want Warden's refusal", c)
			}
			if err := mcpservers.SetEnabled(ctx, in.DB, admin, "every", true); err != nil {
				t.Fatal(err)
			}
		})
	})

	t.Run("conformance suite", func(t *testing.T) {
		// The reference upstream: the Go SDK's own conformance server, at
		// the SDK version go.mod pins, with sessions (sampling and
		// elicitation need them); it passes every server scenario.
		goTool, err := exec.LookPath("go")
		if err != nil {
			t.Skip("the conformance leg builds the Go SDK's conformance server and needs the go command")
		}
		bin := filepath.Join(t.TempDir(), "everything-server")
		build := exec.Command(goTool, "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build the Go SDK's conformance server: %v\n%s", err, out)
		}
		port := freeLoopbackPort(t)
		upstream := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		startPeer(t, "the conformance server", port, exec.Command(bin, "-http", fmt.Sprintf("127.0.0.1:%d", port), "-stateless=false"))

		if _, err := mcpservers.Create(ctx, in.DB, sealer, admin, mcpservers.Server{Name: "conf", URL: upstream, Timeout: 10 * time.Second, Enabled: true}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Discover(ctx, admin, "conf"); err != nil {
			t.Fatal(err)
		}
		tools, err := mcpservers.Tools(ctx, in.DB.Read(), "conf")
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			if err := mcpservers.Classify(ctx, in.DB, admin, "conf", tl.Name, mcpservers.Class{Impact: mcpservers.ImpactLow, Reversible: true}); err != nil {
				t.Fatal(err)
			}
		}
		_, key := newKeyIn(t, in, "acme", "conformance", []string{"mcp:*"}, "test")
		proxy := conformanceProxy(t, in.URL+"/mcp", key, "conf__")

		direct := runConformance(t, node, upstream)
		through := runConformance(t, node, proxy+"/mcp")
		// The scenarios' calls went through Warden's decisions and audit.
		forwarded, err := storeStrings(in, `SELECT subject_id FROM audit_events WHERE verb = 'mcp.call' AND subject_id LIKE 'conf/%' AND details LIKE '%"outcome":"forwarded"%'`)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"conf/test_simple_text", "conf/test_image_content", "conf/test_error_handling"} {
			if !slices.Contains(forwarded, want) {
				t.Errorf("forwarded conformance calls in the audit chain: %q, want %s among them", forwarded, want)
			}
		}
		t.Logf("conformance directly: %v", direct)
		t.Logf("conformance through Warden: %v", through)
		var scenarios []string
		for s := range direct {
			if conformanceCompared(s) {
				scenarios = append(scenarios, s)
			}
		}
		slices.Sort(scenarios)
		if len(scenarios) < 10 {
			t.Fatalf("the conformance suite ran %d tool scenarios directly (%v), want them all", len(scenarios), direct)
		}
		for _, s := range scenarios {
			if !direct[s] {
				t.Errorf("scenario %s fails against the reference server itself", s)
				continue
			}
			reason, listed := conformanceListed[s]
			switch {
			case !through[s] && !listed:
				t.Errorf("scenario %s passes directly and fails through Warden (not listed in docs/mcp.md)", s)
			case through[s] && listed:
				t.Errorf("scenario %s now passes through Warden: take it off the list (%s) in the test and docs/mcp.md", s, reason)
			}
		}
	})
}

// conformanceCompared reports whether a server scenario of the
// conformance suite is compared directly and through Warden: the
// handshake, ping and every tool scenario. Resources, prompts,
// completion and logging levels are not offered by Warden's door.
func conformanceCompared(s string) bool {
	return s == "server-initialize" || s == "ping" || strings.HasPrefix(s, "tools-") ||
		s == "json-schema-2020-12" || strings.HasPrefix(s, "elicitation-")
}

// conformanceListed are the compared scenarios that pass directly and
// not through Warden, with the reason; docs/mcp.md (Conformance) has the
// same table.
var conformanceListed = map[string]string{
	"tools-call-with-logging":      "log notifications of the upstream are not relayed",
	"tools-call-sampling":          "the upstream's sampling requests are not relayed to the agent",
	"tools-call-elicitation":       "the upstream's elicitation requests are not relayed to the agent",
	"elicitation-sep1034-defaults": "the upstream's elicitation requests are not relayed to the agent",
	"elicitation-sep1330-enums":    "the upstream's elicitation requests are not relayed to the agent",
}

var conformanceResultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$`)

// runConformance runs every server scenario of the conformance suite
// against url and returns, per scenario, whether all its checks passed
// (none FAILURE) — read from the results it writes, as its own summary
// does.
func runConformance(t *testing.T, node, url string) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli, err := filepath.Abs(filepath.Join(mcpClientsDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, cli, "server", "--suite", "all", "--url", url)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	// The suite exits non-zero when a scenario fails; the results say which.
	if ctx.Err() != nil {
		t.Fatalf("conformance suite against %s: %v\n%s", url, ctx.Err(), out)
	}
	entries, rerr := os.ReadDir(filepath.Join(dir, "results"))
	if rerr != nil {
		t.Fatalf("conformance suite against %s wrote no results (%v, %v):\n%s", url, err, rerr, out)
	}
	res := map[string]bool{}
	for _, e := range entries {
		m := conformanceResultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "results", e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s/checks.json: %v", e.Name(), err)
		}
		pass := true
		for _, c := range checks {
			if c.Status == "FAILURE" {
				pass = false
				if testing.Verbose() {
					t.Logf("%s against %s: %s %s", m[1], url, c.ID, c.ErrorMessage)
				}
			}
		}
		res[m[1]] = pass
	}
	if len(res) == 0 {
		t.Fatalf("conformance suite against %s: no scenario results (%v):\n%s", url, err, out)
	}
	return res
}

// conformanceProxy is the conformance suite's way into Warden: its client
// sends no Authorization header, so the proxy adds the key's; and its
// scenarios call the reference server's tools by their own names, which
// Warden offers as SERVER__TOOL, so the proxy adds prefix to the name of
// a tools/call and takes it off the names of a tools/list result.
// Nothing else of a request or answer is touched.
func conformanceProxy(t *testing.T, door, key, prefix string) string {
	t.Helper()
	target, err := url.Parse(door)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		// A scenario that hangs up early is not the proxy's error.
		ErrorLog: log.New(io.Discard, "", 0),
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = target.Host
			pr.Out.Header.Set("Authorization", "Bearer "+key)
			if pr.In.Method != http.MethodPost {
				return
			}
			body, err := io.ReadAll(pr.In.Body)
			if err != nil {
				return
			}
			body = renameToolCall(body, prefix)
			pr.Out.Body = io.NopCloser(bytes.NewReader(body))
			pr.Out.ContentLength = int64(len(body))
			pr.Out.Header.Set("Content-Length", strconv.Itoa(len(body)))
		},
		ModifyResponse: func(resp *http.Response) error {
			ct := resp.Header.Get("Content-Type")
			if !strings.HasPrefix(ct, "text/event-stream") && !strings.HasPrefix(ct, "application/json") {
				return nil
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			var out []byte
			if strings.HasPrefix(ct, "application/json") {
				out = unprefixToolList(b, prefix)
			} else {
				for _, line := range bytes.SplitAfter(b, []byte("\n")) {
					if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
						nl := bytes.HasSuffix(data, []byte("\n"))
						data = unprefixToolList(bytes.TrimSuffix(data, []byte("\n")), prefix)
						line = append([]byte("data: "), data...)
						if nl {
							line = append(line, '\n')
						}
					}
					out = append(out, line...)
				}
			}
			resp.Body = io.NopCloser(bytes.NewReader(out))
			resp.ContentLength = int64(len(out))
			resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
			return nil
		},
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// renameToolCall prefixes the tool name of a JSON-RPC tools/call; any
// other message is returned as it is.
func renameToolCall(body []byte, prefix string) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"tools/call"` {
		return body
	}
	var params map[string]json.RawMessage
	var name string
	if json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["name"], &name) != nil {
		return body
	}
	var err error
	if params["name"], err = json.Marshal(prefix + name); err != nil {
		return body
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return body
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	return out
}

// unprefixToolList takes prefix off the tool names of a JSON-RPC
// tools/list result; any other message is returned as it is.
func unprefixToolList(body []byte, prefix string) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || msg["result"] == nil {
		return body
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(msg["result"], &result) != nil || result["tools"] == nil {
		return body
	}
	var tools []map[string]json.RawMessage
	if json.Unmarshal(result["tools"], &tools) != nil {
		return body
	}
	for _, tl := range tools {
		var name string
		if json.Unmarshal(tl["name"], &name) == nil {
			tl["name"], _ = json.Marshal(strings.TrimPrefix(name, prefix))
		}
	}
	var err error
	if result["tools"], err = json.Marshal(tools); err != nil {
		return body
	}
	if msg["result"], err = json.Marshal(result); err != nil {
		return body
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	return out
}

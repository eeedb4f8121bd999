package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/allowlist"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

// TestModelCallRecordsReadStructure: what /v1/chat/completions records of
// a call (its prompt and its completion, streamed or not) is redacted as
// structure, not as flat text. An SSN as nine bare digits under a neutral
// member of a tool call's arguments is tokenised because the request's
// tool schema marks the member (x-warden-personal); a member marked by
// the catalog's tool of the same name too; a card and an IBAN split
// across two members of a tool call's arguments or of a tool's result are
// joined and found; a streamed tool call's arguments, which arrive in
// pieces, are put together before they are read. The tenant's allow-list
// keeps its term readable in the records (and only after it is added).
func TestModelCallRecordsReadStructure(t *testing.T) {
	r := newModelRig(t, 1_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	if err := catalog.Create(ctx, r.in.DB, testActor, tools.Tool{Name: "kyc_lookup", Impact: risk.ImpactLow, Reversibility: risk.Reversible,
		Provider: tools.ProviderExternal, Timeout: time.Second, MaxAttempts: 1, ApprovalTTL: time.Hour, Enabled: true,
		ArgsSchema: json.RawMessage(`{"type":"object","properties":{"holder":{"type":"string","x-warden-personal":"name"}}}`)}); err != nil {
		t.Fatal(err)
	}
	const (
		ssn       = "446756639"
		ssn2      = "512448735"
		holder    = "Zyx Qwerty"
		catHolder = "yxq wertz" // lower case, no cue: detection lets it through
		term      = "Zorbel Quandt"
	)
	marked := `{"type":"object","properties":{"value":{"type":"string","x-warden-personal":"ssn"},"holder":{"type":"string","x-warden-personal":"name"},"query":{"type":"string","x-warden-personal":"id"}}}`
	plain := `{"type":"object","properties":{"value":{"type":"string"}}}`
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	body := func(schema string, stream bool) string {
		b, _ := json.Marshal(map[string]any{"model": "chat", "stream": stream,
			"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "verify_identity", "parameters": json.RawMessage(schema)}},
				map[string]any{"type": "function", "function": map[string]any{"name": "kyc_lookup", "parameters": json.RawMessage(`{"type":"object"}`)}}},
			"messages": []any{
				map[string]any{"role": "user", "content": "Ship 3 " + term + " jackets once the buyer is verified."},
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
					map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "verify_identity",
						"arguments": args(map[string]string{"value": ssn, "holder": holder, "card_a": "4111 1111", "card_b": "1111 1111"})}},
					map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "kyc_lookup",
						"arguments": args(map[string]string{"holder": catHolder, "tax_id": "124259812", "note": "customer social 058829545"})}}}},
				map[string]any{"role": "tool", "tool_call_id": "c1", "content": `{"status":"verified","iban_start":"DE89 3704 0044","iban_rest":"0532 0130 00"}`},
				map[string]any{"role": "user", "content": "Check again for " + ssn2},
			}})
		return string(b)
	}
	send := func(schema string, stream bool) {
		t.Helper()
		if got := rawChat(t, r, r.key, body(schema, stream)); got.Status != http.StatusOK {
			t.Fatalf("chat = %d %s", got.Status, got.Raw)
		}
	}
	clear := []string{ssn, holder, catHolder, "124259812", "058829545", "4111 1111", "DE89 3704 0044", "3704 0044", "0532 0130"}

	// Without marks, the bare SSN and the name stay readable: the checks
	// below are not vacuous. The term is redacted: not on the list yet.
	send(plain, false)
	cs := r.calls(t)
	if len(cs) != 1 || !strings.Contains(cs[0].Prompt, ssn) || strings.Contains(cs[0].Prompt, term) {
		t.Fatalf("unmarked prompt = %s", cs[0].Prompt)
	}

	if err := allowlist.Add(ctx, r.in.DB, testActor, r.tenant, "modelco", term); err != nil {
		t.Fatal(err)
	}
	send(marked, false)
	send(marked, true)
	cs = r.calls(t)
	if len(cs) != 3 {
		t.Fatalf("%d calls recorded, want 3", len(cs))
	}
	tok := r.in.Redactor.Token
	for _, c := range cs[:2] { // newest first
		what := "call"
		if c.Stream {
			what = "streamed call"
		}
		for _, v := range clear {
			if strings.Contains(c.Prompt, v) || strings.Contains(c.Completion, v) {
				t.Errorf("%s: %q in the clear in its record:\nprompt %s\ncompletion %s", what, v, c.Prompt, c.Completion)
			}
		}
		for _, want := range []string{tok("ssn", ssn), tok("name", holder), tok("name", catHolder), "[card:", "[iban:", term} {
			if !strings.Contains(c.Prompt, want) {
				t.Errorf("%s: prompt lacks %q: %s", what, want, c.Prompt)
			}
		}
		// The model answered with a call of verify_identity whose query
		// (marked an id) is the last user message. (In the user's own
		// message, nine bare digits with no cue are left to detection,
		// which leaves them: a bare number is not known to be an SSN.)
		if strings.Contains(c.Completion, ssn2) || !strings.Contains(c.Completion, tok("id", "Check again for "+ssn2)) || !strings.Contains(c.Completion, "verify_identity") {
			t.Errorf("%s: completion = %s", what, c.Completion)
		}
	}
}

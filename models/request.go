package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/wardenhq/warden/platform/problem"
)

// The reservation of a call is an upper bound of what the upstream can
// bill for the request as Warden forwards it (docs/models.md): every
// forwarded field is counted, and a field Warden cannot bound is refused
// before anything is reserved or sent.

// forwarded are the members of a chat request Warden passes on. Each is
// either tokenised by the upstream and so counted in the prompt bound
// (the whole forwarded body is), or changes nothing the call is billed
// beyond its prompt and its output cap. Anything else is refused (400
// unsupported_field): an unknown member may make the upstream bill in ways
// no bound covers (audio, predicted outputs, web search).
var forwarded = map[string]bool{
	"messages": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"functions": true, "function_call": true, "response_format": true,
	"temperature": true, "top_p": true, "stop": true, "seed": true,
	"presence_penalty": true, "frequency_penalty": true, "logit_bias": true,
	"logprobs": true, "top_logprobs": true, "user": true, "metadata": true, "store": true,
	"reasoning_effort": true, "verbosity": true, "prompt_cache_key": true, "prompt_cache_retention": true, "safety_identifier": true,
	"service_tier": true, "modalities": true,
}

// replaced are the members Warden reads and then sets itself for each
// deployment: the model id, the output cap, the stream flags and n.
var replaced = map[string]bool{
	"model": true, "max_tokens": true, "max_completion_tokens": true, "stream": true, "stream_options": true, "n": true,
}

// MaxChoices is the most choices (n) a call may ask for: OpenAI's own
// maximum. Each choice may use the whole output cap, and the reservation
// counts them all.
const MaxChoices = 128

// roles are the message roles of OpenAI's chat protocol.
var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// messageFields are the members a message may have; "audio" (a reference
// to an earlier spoken answer, billed as audio) is not among them.
var messageFields = map[string]bool{"role": true, "content": true, "name": true, "tool_calls": true, "tool_call_id": true,
	"refusal": true, "function_call": true}

// partTypes are the content parts forwarded: text. Images, audio and
// files are billed by what they depict, not by their bytes, and no bound
// of their tokens holds for every model.
var partTypes = map[string]bool{"text": true, "refusal": true}

// toolTypes are the tool kinds forwarded: described by their JSON, which
// is counted.
var toolTypes = map[string]bool{"function": true, "custom": true}

// chatRequest is a chat request as checked: what the gateway reads, and
// the members it forwards.
type chatRequest struct {
	request
	n      int64                      // choices asked for, 1 when none
	fields map[string]json.RawMessage // the forwarded members (without the replaced ones)
}

func unsupported(msg string) error { return problem.Invalid("unsupported_field", msg) }

// parseChat reads and checks a chat request body. A member or content
// Warden cannot bound is refused with a clear 400 before anything is
// reserved or sent.
func parseChat(body []byte) (chatRequest, error) {
	var c chatRequest
	if err := json.Unmarshal(body, &c.request); err != nil {
		return c, invalid("The body is not a JSON chat completion request: " + problem.JSONReason(err) + ".")
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		return c, invalid("The body is not a JSON object.")
	}
	if c.Model == "" {
		return c, invalid("Name the model: \"model\": ALIAS.")
	}
	var unknown []string
	c.fields = make(map[string]json.RawMessage, len(all))
	for k, v := range all {
		switch {
		case replaced[k]:
		case forwarded[k]:
			c.fields[k] = v
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return c, unsupported(fmt.Sprintf("Warden does not forward %s: only members whose cost it can bound before the call are sent (docs/models.md).",
			quoteList(unknown)))
	}
	if err := checkMessages(c.Messages); err != nil {
		return c, err
	}
	if err := checkTools(all["tools"]); err != nil {
		return c, err
	}
	if err := checkValues(all); err != nil {
		return c, err
	}
	c.n = 1
	if raw, ok := all["n"]; ok && !isNull(raw) {
		var n int64
		if json.Unmarshal(raw, &n) != nil || n < 1 || n > MaxChoices {
			return c, invalid(fmt.Sprintf("\"n\" must be a whole number from 1 to %d.", MaxChoices))
		}
		c.n = n
	}
	return c, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", clipName(n))
	}
	return strings.Join(q, ", ")
}

// clipName keeps an agent's member name short in a message.
func clipName(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func checkMessages(raw json.RawMessage) error {
	if len(raw) == 0 || raw[0] != '[' {
		return invalid("Send the conversation as \"messages\": [...].")
	}
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(raw, &msgs) != nil {
		return invalid("Each message is an object with a \"role\" and its \"content\".")
	}
	if len(msgs) == 0 {
		return invalid("\"messages\" is empty: send at least one message.")
	}
	for i, m := range msgs {
		var role string
		if json.Unmarshal(m["role"], &role) != nil || !roles[role] {
			return invalid(fmt.Sprintf("Message %d has no known \"role\" (system, developer, user, assistant, tool).", i+1))
		}
		for k := range m {
			if !messageFields[k] {
				return unsupported(fmt.Sprintf("Message %d has %q, which Warden does not forward: only text, tool calls and tool results are sent.", i+1, clipName(k)))
			}
		}
		content := m["content"]
		if len(content) == 0 || isNull(content) || content[0] == '"' {
			continue
		}
		var parts []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(content, &parts) != nil {
			return invalid(fmt.Sprintf("Message %d's \"content\" must be text or a list of parts.", i+1))
		}
		for _, p := range parts {
			if !partTypes[p.Type] {
				return problem.Invalid("unsupported_content", fmt.Sprintf("Message %d has a content part of type %q, which Warden does not forward: "+
					"its tokens cannot be bounded before the call. Send text parts only.", i+1, clipName(p.Type)))
			}
		}
	}
	return nil
}

func checkTools(raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var tools []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return invalid("\"tools\" must be a list of tools.")
	}
	for i, t := range tools {
		if !toolTypes[t.Type] {
			return unsupported(fmt.Sprintf("Tool %d is of type %q; Warden forwards function and custom tools only.", i+1, clipName(t.Type)))
		}
	}
	return nil
}

// checkValues refuses the values of forwarded members that change the
// price of a token: a service tier other than the default, and output
// other than text.
func checkValues(all map[string]json.RawMessage) error {
	if raw, ok := all["service_tier"]; ok && !isNull(raw) {
		var tier string
		if json.Unmarshal(raw, &tier) != nil || (tier != "auto" && tier != "default") {
			return unsupported("\"service_tier\" may be \"auto\" or \"default\": the deployment's prices are those of the default tier.")
		}
	}
	if raw, ok := all["modalities"]; ok && !isNull(raw) {
		var m []string
		if json.Unmarshal(raw, &m) != nil || slices.ContainsFunc(m, func(s string) bool { return s != "text" }) {
			return unsupported("\"modalities\" may only be [\"text\"]: Warden forwards text answers only.")
		}
	}
	return nil
}

// promptBound is an upper bound of the prompt tokens of a request whose
// forwarded body is n bytes: a tokenizer's every token covers at least one
// byte of the text it reads, and the JSON that carries the text (with its
// messages', tools' and schemas' structure) is never shorter than the
// text; 16 tokens more cover what the upstream adds around the
// conversation. Tokenizers count about four bytes of English a token, so
// the bound is high for plain prose; it is what a prompt written to cost
// a token a byte ("1,1,1,…") bills.
func promptBound(n int) int64 { return int64(n) + 16 }

// estimateText is a high estimate of the tokens of n bytes of text, for
// a call whose upstream reports no usage (a cut stream): a token per three
// bytes.
func estimateText(n int64) int64 { return n/3 + 1 }

// maxUsage is the most tokens an upstream may report for one call and
// still be believed: far above any context window (10 M at most) times
// MaxChoices. A count above it, or below zero, is invalid usage.
const maxUsage = 1 << 40

// valid reports whether an upstream's usage is believable: counts from
// zero to maxUsage.
func (u usage) valid() bool {
	return u.PromptTokens >= 0 && u.CompletionTokens >= 0 && u.PromptTokens <= maxUsage && u.CompletionTokens <= maxUsage
}

// maxCost bounds one call's cost in micro-units (about 9 billion units of
// the currency), so that absurd prices or counts cannot overflow the
// budget's arithmetic.
const maxCost = 1 << 53

// bound is the most a call may use at one deployment: prompt tokens (the
// forwarded body's bound, at most the deployment's context window, since
// a longer prompt is refused and not billed) and output tokens (n choices
// of the output cap).
func bound(d Deployment, bodyBytes int, asked, n int64) (in, out int64) {
	return min(promptBound(bodyBytes), int64(d.ContextWindow)), n * outputLimit(d, asked)
}

// tokensCost is tokens at a price per million, rounded up, saturating at
// maxCost.
func tokensCost(tokens, microsPerM int64) int64 {
	if tokens <= 0 || microsPerM <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(tokens), uint64(microsPerM))
	if hi != 0 || lo > math.MaxInt64-999_999 {
		return maxCost
	}
	return min(maxCost, int64((lo+999_999)/1_000_000))
}

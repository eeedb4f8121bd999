package fakeupstream

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// answer is a scripted model's turn: a text, or one tool call.
type answer struct {
	text     string
	toolName string
	toolArgs any
}

var orderID = regexp.MustCompile(`ORD-[0-9]{4,}`)

// scripted is the turn of a scripted model (see the package comment), and
// whether req asked for one.
func scripted(req request) (answer, bool) {
	user := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = text(m.Content)
		}
	}
	order := orderID.FindString(user)
	lastTool, lastResult := lastToolResult(req.Messages)
	switch req.Model {
	case "script-refund":
		switch lastTool {
		case "":
			return answer{toolName: "lookup_order", toolArgs: map[string]string{"order_id": order}}, true
		case "lookup_order":
			var o struct {
				OrderID     string `json:"order_id"`
				AmountMinor int64  `json:"amount_minor"`
				Currency    string `json:"currency"`
				Account     string `json:"account"`
			}
			if err := json.Unmarshal([]byte(lastResult), &o); err != nil || o.OrderID == "" {
				return answer{text: "I could not read the order, so I did not refund it."}, true
			}
			return answer{toolName: "issue_refund", toolArgs: map[string]any{"order_id": o.OrderID, "amount_minor": o.AmountMinor,
				"currency": o.Currency, "account": o.Account}}, true
		default:
			return answer{text: "The refund for " + order + " is done (" + lastTool + " answered)."}, true
		}
	case "script-outside":
		if lastTool == "" {
			return answer{toolName: "send_customer_email", toolArgs: map[string]string{"order_id": order,
				"to": "someone@example.com", "subject": "Hello", "body": "Hello from the model."}}, true
		}
		return answer{text: "I could not send the email: " + lastResult}, true
	case "script-loop":
		name := "lookup_order"
		if len(req.Tools) > 0 {
			name = req.Tools[0].Function.Name
		}
		return answer{toolName: name, toolArgs: map[string]string{"order_id": order}}, true
	case "router":
		return answer{text: route(req, user)}, true
	case "router-unknown":
		return answer{text: "no_such_skill"}, true
	}
	return answer{}, false
}

// lastToolResult is the tool the last message answers (found by its
// call id among the assistant's calls) and the result, when the last
// message is a tool result.
func lastToolResult(msgs []message) (tool, result string) {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "tool" {
		return "", ""
	}
	last := msgs[len(msgs)-1]
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID == last.ToolCallID {
				tool = c.Function.Name
			}
		}
	}
	if tool == "" {
		tool = "unknown"
	}
	return tool, text(last.Content)
}

// route picks, from the system message's "- name: description" lines, the
// skill sharing most words with the user's message; the first on a tie.
func route(req request, user string) string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(user), notWord) {
		words[w] = true
	}
	best, bestScore := "", -1
	for _, m := range req.Messages {
		if m.Role != "system" {
			continue
		}
		for _, line := range strings.Split(text(m.Content), "\n") {
			entry, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
			if !ok {
				continue
			}
			name, desc, ok := strings.Cut(entry, ":")
			if !ok {
				continue
			}
			score := 0
			for _, w := range strings.FieldsFunc(strings.ToLower(strings.ReplaceAll(name, "_", " ")+" "+desc), notWord) {
				if len(w) > 3 && words[w] {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = strings.TrimSpace(name), score
			}
		}
	}
	return best
}

func notWord(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
}

// writeScripted writes a scripted turn, as a completion or a stream
// (answerScripted).
func writeScripted(w http.ResponseWriter, req request, a answer) {
	answerScripted(w, req, a.text, a.toolName, "call_"+strconv.Itoa(len(req.Messages)), a.toolArgs)
}

package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Tools of the built-in simulated orders-and-payments provider that the
// demo skills call.
const (
	ToolLookupOrder         = "lookup_order"          // low: {order_id}
	ToolCheckChangeWindow   = "check_change_window"   // low: {order_id}
	ToolSubmitChangeRequest = "submit_change_request" // medium: {order_id, change}
	ToolIssueRefund         = "issue_refund"          // high: {order_id, amount_minor, currency, account}
	ToolSendCustomerEmail   = "send_customer_email"   // high: {order_id, to, subject, body}
)

// Demo returns the built-in skills: order_status, order_support, refunds
// and customer_email, read from their embedded SKILL.md files (builtin/)
// with their Go plans bound by name. Each call returns fresh values.
//
// Money and recipients always come from the order as lookup_order reports
// it, never from the request text: a request can ask for a smaller refund,
// but it cannot send money to another account or mail to another address.
func Demo() []Skill {
	out, problems := Load("")
	if len(problems) > 0 {
		// The embedded files are checked by the tests; a broken one is a
		// build that must not ship.
		panic(fmt.Sprintf("built-in skills: %v", errors.Join(problems...)))
	}
	return out
}

// order is what the demo skills read from lookup_order's output.
type order struct {
	OrderID       string `json:"order_id"`
	Status        string `json:"status"`
	AmountMinor   *int64 `json:"amount_minor"`
	Currency      string `json:"currency"`
	CustomerName  string `json:"customer_name"`
	CustomerEmail string `json:"customer_email"`
	Account       string `json:"account"`
}

// orderArgs are the arguments of lookup_order and check_change_window.
type orderArgs struct {
	OrderID string `json:"order_id"`
}

// orderFor finds the one order a request is about, in its text or in the
// "order_id" metadata.
func orderFor(in Input, ex Extracted) (string, error) {
	ids := ex.OrderIDs
	if meta := strings.TrimSpace(in.Metadata["order_id"]); meta != "" {
		id := NormalizeOrderID(meta)
		switch {
		case id == "":
			return "", fmt.Errorf("%w: metadata order_id %q is not an order id such as ORD-1004", ErrIncomplete, meta)
		case len(ids) == 0 || (len(ids) == 1 && ids[0] == id):
			return id, nil
		default:
			return "", fmt.Errorf("%w: the text names %s but metadata order_id is %s", ErrIncomplete, strings.Join(ids, ", "), id)
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%w: no order id; name the order, e.g. ORD-1004", ErrIncomplete)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%w: the request names several orders (%s); ask about one order at a time", ErrIncomplete, strings.Join(ids, ", "))
}

func lookupStep(id, why string) Step {
	return Step{
		Tool:   ToolLookupOrder,
		Args:   func([]StepResult) (json.RawMessage, error) { return marshal(orderArgs{id}) },
		Reason: why,
	}
}

// lookedUp reads the lookup_order result among prev and checks it is the
// order the plan asked for.
func lookedUp(prev []StepResult, id string) (order, error) {
	r, ok := resultOf(prev, ToolLookupOrder)
	if !ok {
		return order{}, fmt.Errorf("%s has not run", ToolLookupOrder)
	}
	var o order
	if err := json.Unmarshal(r.Output, &o); err != nil {
		return order{}, fmt.Errorf("read %s result: %w", ToolLookupOrder, err)
	}
	if got := NormalizeOrderID(o.OrderID); got != id {
		return order{}, fmt.Errorf("%s answered for order %q, want %s", ToolLookupOrder, o.OrderID, id)
	}
	return o, nil
}

// resultOf returns the last executed result of tool.
func resultOf(results []StepResult, tool string) (StepResult, bool) {
	for i := len(results) - 1; i >= 0; i-- {
		if results[i].Tool == tool && !results[i].Pending {
			return results[i], true
		}
	}
	return StepResult{}, false
}

func marshal(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	return json.RawMessage(b), err
}

func planOrderStatus(in Input) ([]Step, error) {
	id, err := orderFor(in, Extract(in.Text))
	if err != nil {
		return nil, err
	}
	return []Step{lookupStep(id, fmt.Sprintf("Customer asked for the status of %s.", id))}, nil
}

func summarizeOrderStatus(results []StepResult) string {
	r, ok := resultOf(results, ToolLookupOrder)
	if !ok {
		return genericSummary(results)
	}
	var o order
	if json.Unmarshal(r.Output, &o) != nil || o.OrderID == "" {
		return "The order could not be read."
	}
	if o.Status == "" {
		return fmt.Sprintf("Order %s has no recorded status.", o.OrderID)
	}
	return fmt.Sprintf("Order %s is %s.", o.OrderID, humanize(o.Status))
}

func humanize(s string) string {
	return strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(strings.TrimSpace(s)))
}

func planOrderSupport(in Input) ([]Step, error) {
	ex := Extract(in.Text)
	id, err := orderFor(in, ex)
	if err != nil {
		return nil, err
	}
	change := ex.Change
	if change == "" {
		change = cleanPhrase(in.Text)
	}
	if change == "" {
		return nil, fmt.Errorf("%w: say what should change, e.g. \"change the delivery address to 12 Elm St\"", ErrIncomplete)
	}
	return []Step{
		lookupStep(id, fmt.Sprintf("Look up %s before changing it.", id)),
		{
			Tool: ToolCheckChangeWindow,
			Args: func(prev []StepResult) (json.RawMessage, error) {
				if _, err := lookedUp(prev, id); err != nil {
					return nil, err
				}
				return marshal(orderArgs{id})
			},
			Reason: fmt.Sprintf("Check that %s can still be changed.", id),
		},
		{
			Tool: ToolSubmitChangeRequest,
			Args: func(prev []StepResult) (json.RawMessage, error) {
				r, ok := resultOf(prev, ToolCheckChangeWindow)
				if !ok {
					return nil, fmt.Errorf("%s has not run", ToolCheckChangeWindow)
				}
				open, why, err := windowOpen(r.Output)
				if err != nil {
					return nil, err
				}
				if !open {
					msg := fmt.Sprintf("%s can no longer be changed", id)
					if why != "" {
						msg += ": " + why
					}
					return nil, &Stop{Output: msg + ". No change was requested."}
				}
				return marshal(struct {
					OrderID string `json:"order_id"`
					Change  string `json:"change"`
				}{id, change})
			},
			Reason: fmt.Sprintf("Customer requested a change to %s: %s.", id, change),
		},
	}, nil
}

// windowOpen reads check_change_window's answer. Providers word it
// differently ({"open": true}, {"status": "closed", "closes_at": ...}); an
// answer that says neither open nor closed is an error, so a change is
// never submitted on a guess.
func windowOpen(out json.RawMessage) (open bool, why string, err error) {
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return false, "", fmt.Errorf("read %s result: %w", ToolCheckChangeWindow, err)
	}
	decided := false
	for _, k := range []string{"open", "window_open", "is_open", "changeable", "can_change", "allowed"} {
		if v, ok := m[k].(bool); ok {
			open, decided = v, true
			break
		}
	}
	if !decided {
		for _, k := range []string{"status", "window", "state"} {
			switch v, _ := m[k].(string); strings.ToLower(v) {
			case "open":
				open, decided = true, true
			case "closed":
				open, decided = false, true
			}
			if decided {
				break
			}
		}
	}
	if !decided {
		return false, "", fmt.Errorf("%s did not say whether the change window is open", ToolCheckChangeWindow)
	}
	for _, k := range []string{"reason", "message"} {
		if v, ok := m[k].(string); ok && strings.TrimSpace(v) != "" {
			return open, strings.TrimRight(strings.TrimSpace(v), "."), nil
		}
	}
	for _, k := range []string{"closed_at", "closes_at", "window_closes_at", "deadline"} {
		if v, ok := m[k].(string); ok && v != "" {
			return open, "the change window closed at " + v, nil
		}
	}
	return open, "its change window is closed", nil
}

func summarizeOrderSupport(results []StepResult) string {
	r, ok := resultOf(results, ToolSubmitChangeRequest)
	if len(results) > 0 && results[len(results)-1].Pending && results[len(results)-1].Tool == ToolSubmitChangeRequest {
		return fmt.Sprintf("Change request for %s is awaiting approval.", argOrderID(results[len(results)-1].Args))
	}
	if !ok {
		return genericSummary(results)
	}
	id := argOrderID(r.Args)
	if ref := firstString(r.Output, "change_request_id", "change_id", "request_id", "id"); ref != "" {
		return fmt.Sprintf("Change request %s submitted for %s.", ref, id)
	}
	return fmt.Sprintf("Change request submitted for %s.", id)
}

func planRefund(in Input) ([]Step, error) {
	ex := Extract(in.Text)
	id, err := orderFor(in, ex)
	if err != nil {
		return nil, err
	}
	return []Step{
		lookupStep(id, fmt.Sprintf("Look up %s for the amount, currency and account to refund.", id)),
		{
			Tool:   ToolIssueRefund,
			Args:   func(prev []StepResult) (json.RawMessage, error) { return refundArgs(prev, id, ex) },
			Reason: refundReason(id, ex.Reason),
		},
	}, nil
}

// refundArgs refunds the requested amount, or the order's full amount when
// the request names none, in the order's currency to the order's account.
func refundArgs(prev []StepResult, id string, ex Extracted) (json.RawMessage, error) {
	o, err := lookedUp(prev, id)
	if err != nil {
		return nil, err
	}
	if o.AmountMinor == nil || o.Currency == "" || o.Account == "" {
		return nil, fmt.Errorf("%s result for %s lacks the amount, currency or account", ToolLookupOrder, id)
	}
	if strings.EqualFold(o.Status, "refunded") {
		return nil, &Stop{Output: fmt.Sprintf("%s has already been refunded. No refund was requested.", id)}
	}
	total := *o.AmountMinor
	amount := total
	if ex.AmountMinor != nil {
		cur := strings.ToUpper(ex.Currency)
		switch {
		case cur == "" && currencyExponent(o.Currency) != 2:
			return nil, &Stop{Output: fmt.Sprintf("The request does not say which currency the refund is in, and %s is paid in %s. No refund was requested.", id, o.Currency)}
		case cur != "" && cur != strings.ToUpper(o.Currency):
			return nil, &Stop{Output: fmt.Sprintf("The request asks for %s, but %s was paid in %s. No refund was requested.", FormatMoney(*ex.AmountMinor, cur), id, o.Currency)}
		case *ex.AmountMinor <= 0:
			return nil, &Stop{Output: "The requested refund amount is zero. No refund was requested."}
		case *ex.AmountMinor > total:
			return nil, &Stop{Output: fmt.Sprintf("The requested refund of %s is more than the %s paid for %s. No refund was requested.", FormatMoney(*ex.AmountMinor, o.Currency), FormatMoney(total, o.Currency), id)}
		}
		amount = *ex.AmountMinor
	}
	if amount <= 0 {
		return nil, &Stop{Output: fmt.Sprintf("Nothing was paid for %s, so there is nothing to refund.", id)}
	}
	return marshal(struct {
		OrderID     string `json:"order_id"`
		AmountMinor int64  `json:"amount_minor"`
		Currency    string `json:"currency"`
		Account     string `json:"account"`
	}{id, amount, strings.ToUpper(o.Currency), o.Account})
}

func currencyExponent(code string) int {
	if e, ok := exponent(strings.ToUpper(code)); ok {
		return e
	}
	return 2
}

// cueReasons are the reasons Extract names itself; they read after
// "Customer reports".
var cueReasons = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range reasonCues {
		m[c.reason] = true
	}
	return m
}()

func refundReason(id, why string) string {
	switch {
	case cueReasons[why]:
		return fmt.Sprintf("Customer reports %s on %s.", why, id)
	case why != "":
		return fmt.Sprintf("Customer asked for a refund on %s because %s.", id, why)
	}
	return fmt.Sprintf("Customer asked for a refund on %s.", id)
}

func summarizeRefund(results []StepResult) string {
	if len(results) == 0 || results[len(results)-1].Tool != ToolIssueRefund {
		return genericSummary(results)
	}
	last := results[len(results)-1]
	var a struct {
		AmountMinor int64  `json:"amount_minor"`
		Currency    string `json:"currency"`
	}
	if json.Unmarshal(last.Args, &a) != nil {
		return genericSummary(results)
	}
	what := "of " + FormatMoney(a.AmountMinor, a.Currency) + " to the order's account"
	if shown := accountShown(results); shown != "" {
		what = "of " + FormatMoney(a.AmountMinor, a.Currency) + " to account " + shown
	}
	if last.Pending {
		return fmt.Sprintf("Refund %s is awaiting approval.", what)
	}
	if ref := firstString(last.Output, "refund_id", "id"); ref != "" {
		return fmt.Sprintf("Refund %s %s issued.", ref, what)
	}
	return fmt.Sprintf("Refund %s issued.", what)
}

// accountShown is "••9182": the last four digits of the real account as
// the provider reported them (account_last4 in the refund's receipt or the
// order looked up), or "" when none did. It never slices the account
// argument itself: in a journal that is a redaction token
// ("[iban:d38bf348]"), and its last characters are not digits of anything.
func accountShown(results []StepResult) string {
	for i := len(results) - 1; i >= 0; i-- {
		if results[i].Pending {
			continue
		}
		if l4 := firstString(results[i].Output, "account_last4"); isLast4(l4) {
			return "••" + l4
		}
	}
	return ""
}

// isLast4 reports whether s is exactly four ASCII digits.
func isLast4(s string) bool {
	if len(s) != 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func planCustomerEmail(in Input) ([]Step, error) {
	ex := Extract(in.Text)
	id, err := orderFor(in, ex)
	if err != nil {
		return nil, err
	}
	if ex.Message == "" {
		return nil, fmt.Errorf("%w: say what to tell the customer, e.g. \"email the customer that the parcel is delayed\"", ErrIncomplete)
	}
	return []Step{
		lookupStep(id, fmt.Sprintf("Look up %s for the customer's e-mail address.", id)),
		{
			Tool: ToolSendCustomerEmail,
			Args: func(prev []StepResult) (json.RawMessage, error) {
				o, err := lookedUp(prev, id)
				if err != nil {
					return nil, err
				}
				if o.CustomerEmail == "" {
					return nil, &Stop{Output: fmt.Sprintf("There is no e-mail address on file for %s. No e-mail was sent.", id)}
				}
				greeting := "Hello,"
				if first, _, _ := strings.Cut(strings.TrimSpace(o.CustomerName), " "); first != "" {
					greeting = "Hello " + first + ","
				}
				return marshal(struct {
					OrderID string `json:"order_id"`
					To      string `json:"to"`
					Subject string `json:"subject"`
					Body    string `json:"body"`
				}{id, o.CustomerEmail, "About your order " + id, greeting + "\n\n" + ex.Message + "\n\nKind regards,\nCustomer support"})
			},
			Reason: fmt.Sprintf("Agent asked to e-mail the customer of %s.", id),
		},
	}, nil
}

func summarizeCustomerEmail(results []StepResult) string {
	if len(results) == 0 || results[len(results)-1].Tool != ToolSendCustomerEmail {
		return genericSummary(results)
	}
	last := results[len(results)-1]
	id := argOrderID(last.Args)
	if last.Pending {
		return fmt.Sprintf("E-mail to the customer about %s is awaiting approval.", id)
	}
	return fmt.Sprintf("E-mail sent to the customer about %s.", id)
}

func argOrderID(args json.RawMessage) string {
	if id := firstString(args, "order_id"); id != "" {
		return id
	}
	return "the order"
}

// firstString returns the first of keys that holds a non-empty string in
// the JSON object doc.
func firstString(doc json.RawMessage, keys ...string) string {
	var m map[string]any
	if json.Unmarshal(doc, &m) != nil {
		return ""
	}
	for _, k := range keys {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

package skills

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func demoSkill(t testing.TB, name string) Skill {
	t.Helper()
	for _, s := range Demo() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no demo skill %s", name)
	return Skill{}
}

// lookup1004 is what the simulated provider answers for ORD-1004.
const lookup1004 = `{"order_id":"ORD-1004","status":"delivered","amount_minor":240000,"currency":"USD",
	"customer_name":"Jane Doe","customer_email":"jane@example.com","account":"GB33BUKB20201555559182",
	"account_last4":"9182","address":"1 Main St","items":[{"sku":"A1","qty":1}]}`

func lookupResult(output string) StepResult {
	return StepResult{Tool: ToolLookupOrder, Args: json.RawMessage(`{"order_id":"ORD-1004"}`), Output: json.RawMessage(output)}
}

func TestRefundArgs(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		lookup   string
		wantArgs string // exact JSON: the approval's payload digest covers these bytes
		wantStop string // substring of the Stop output
		wantErr  string // substring of another error
	}{
		{name: "defaults to the order amount",
			text:     "Please refund order ORD-1004, the customer was charged twice",
			lookup:   lookup1004,
			wantArgs: `{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"GB33BUKB20201555559182"}`},
		{name: "an explicit smaller amount wins",
			text:     "refund $35.50 on ORD-1004",
			lookup:   lookup1004,
			wantArgs: `{"order_id":"ORD-1004","amount_minor":3550,"currency":"USD","account":"GB33BUKB20201555559182"}`},
		{name: "a bare decimal takes the order's currency",
			text:     "partial refund of 35.50 for ORD-1004",
			lookup:   lookup1004,
			wantArgs: `{"order_id":"ORD-1004","amount_minor":3550,"currency":"USD","account":"GB33BUKB20201555559182"}`},
		{name: "the full amount named explicitly",
			text:     "refund 2400 USD for ORD-1004",
			lookup:   lookup1004,
			wantArgs: `{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"GB33BUKB20201555559182"}`},
		{name: "an account in the text is ignored",
			text:     "refund ORD-1004 to account DE89370400440532013000",
			lookup:   lookup1004,
			wantArgs: `{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"GB33BUKB20201555559182"}`},
		{name: "more than was paid",
			text:     "refund $3,000.00 on ORD-1004",
			lookup:   lookup1004,
			wantStop: "The requested refund of $3,000.00 is more than the $2,400.00 paid for ORD-1004. No refund was requested."},
		{name: "another currency",
			text:     "refund €35.50 on ORD-1004",
			lookup:   lookup1004,
			wantStop: "The request asks for €35.50, but ORD-1004 was paid in USD. No refund was requested."},
		{name: "already refunded",
			text:     "refund ORD-1004",
			lookup:   `{"order_id":"ORD-1004","status":"refunded","amount_minor":240000,"currency":"USD","account":"GB33BUKB20201555559182"}`,
			wantStop: "ORD-1004 has already been refunded."},
		{name: "nothing paid",
			text:     "refund ORD-1004",
			lookup:   `{"order_id":"ORD-1004","status":"delivered","amount_minor":0,"currency":"USD","account":"GB33BUKB20201555559182"}`,
			wantStop: "Nothing was paid for ORD-1004"},
		{name: "lookup answered for another order",
			text:    "refund ORD-1004",
			lookup:  `{"order_id":"ORD-1005","amount_minor":240000,"currency":"USD","account":"X"}`,
			wantErr: `answered for order "ORD-1005", want ORD-1004`},
		{name: "lookup without an account",
			text:    "refund ORD-1004",
			lookup:  `{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD"}`,
			wantErr: "lacks the amount, currency or account"},
		{name: "lookup output not JSON",
			text:    "refund ORD-1004",
			lookup:  `not json`,
			wantErr: "read lookup_order result"},
	}
	skill := demoSkill(t, "refunds")
	for _, tt := range tests {
		steps, err := skill.Steps(Input{Text: tt.text})
		if err != nil {
			t.Fatalf("%s: Steps: %v", tt.name, err)
		}
		if len(steps) != 2 || steps[0].Tool != ToolLookupOrder || steps[1].Tool != ToolIssueRefund {
			t.Fatalf("%s: steps %v, want lookup_order then issue_refund", tt.name, toolsOf(steps))
		}
		args, err := steps[1].Args([]StepResult{lookupResult(tt.lookup)})
		var stop *Stop
		switch {
		case tt.wantArgs != "":
			if err != nil || string(args) != tt.wantArgs {
				t.Errorf("%s: args = %s, %v, want %s", tt.name, args, err, tt.wantArgs)
			}
		case tt.wantStop != "":
			if !errors.As(err, &stop) || !errors.Is(err, ErrStop) || !strings.Contains(stop.Output, tt.wantStop) || args != nil {
				t.Errorf("%s: args = %s, %v, want Stop %q", tt.name, args, err, tt.wantStop)
			}
		default:
			if err == nil || errors.As(err, &stop) || !strings.Contains(err.Error(), tt.wantErr) || args != nil {
				t.Errorf("%s: args = %s, %v, want a non-stop error containing %q", tt.name, args, err, tt.wantErr)
			}
		}
	}
}

func TestRefundPlan(t *testing.T) {
	tests := []struct {
		text       string
		wantReason string
	}{
		{"Please refund order ORD-1004, the customer was charged twice", "Customer reports a duplicate charge on ORD-1004."},
		{"ORD-1004 arrived broken, refund it", "Customer reports a damaged item on ORD-1004."},
		{"refund ORD-1004 because the size runs small", "Customer asked for a refund on ORD-1004 because the size runs small."},
		{"refund ORD-1004", "Customer asked for a refund on ORD-1004."},
	}
	skill := demoSkill(t, "refunds")
	for _, tt := range tests {
		steps, err := skill.Steps(Input{Text: tt.text})
		if err != nil {
			t.Fatalf("Steps(%q): %v", tt.text, err)
		}
		lookupArgs, err := steps[0].Args(nil)
		if err != nil || string(lookupArgs) != `{"order_id":"ORD-1004"}` {
			t.Errorf("Steps(%q) lookup args = %s, %v", tt.text, lookupArgs, err)
		}
		if steps[0].Reason != "Look up ORD-1004 for the amount, currency and account to refund." {
			t.Errorf("Steps(%q) lookup reason = %q", tt.text, steps[0].Reason)
		}
		if steps[1].Reason != tt.wantReason {
			t.Errorf("Steps(%q) refund reason = %q, want %q", tt.text, steps[1].Reason, tt.wantReason)
		}
	}
}

func TestOrderSupportWindow(t *testing.T) {
	const text = "can you change the shipping address for ORD-1001 to 12 Elm St"
	lookup := StepResult{Tool: ToolLookupOrder, Output: json.RawMessage(`{"order_id":"ORD-1001","status":"processing"}`)}
	tests := []struct {
		name     string
		window   string
		wantArgs string
		wantStop string
		wantErr  string
	}{
		{name: "open", window: `{"order_id":"ORD-1001","open":true,"closes_at":"2030-01-01T00:00:00Z"}`,
			wantArgs: `{"order_id":"ORD-1001","change":"change the shipping address to 12 Elm St"}`},
		{name: "open by status", window: `{"status":"open"}`,
			wantArgs: `{"order_id":"ORD-1001","change":"change the shipping address to 12 Elm St"}`},
		{name: "closed with a time", window: `{"order_id":"ORD-1001","open":false,"closed_at":"2024-05-01T12:00:00Z"}`,
			wantStop: "ORD-1001 can no longer be changed: the change window closed at 2024-05-01T12:00:00Z. No change was requested."},
		{name: "closed with a reason", window: `{"status":"closed","reason":"The order has already shipped."}`,
			wantStop: "ORD-1001 can no longer be changed: The order has already shipped. No change was requested."},
		{name: "closed, nothing more", window: `{"window_open":false}`,
			wantStop: "ORD-1001 can no longer be changed: its change window is closed. No change was requested."},
		{name: "undecided answer fails closed", window: `{"order_id":"ORD-1001"}`,
			wantErr: "did not say whether the change window is open"},
		{name: "not JSON", window: `<html>`, wantErr: "read check_change_window result"},
	}
	skill := demoSkill(t, "order_support")
	steps, err := skill.Steps(Input{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toolsOf(steps), ","); got != "lookup_order,check_change_window,submit_change_request" {
		t.Fatalf("steps = %s", got)
	}
	if want := "Customer requested a change to ORD-1001: change the shipping address to 12 Elm St."; steps[2].Reason != want {
		t.Errorf("change reason = %q, want %q", steps[2].Reason, want)
	}
	checkArgs, err := steps[1].Args([]StepResult{lookup})
	if err != nil || string(checkArgs) != `{"order_id":"ORD-1001"}` {
		t.Errorf("check_change_window args = %s, %v", checkArgs, err)
	}
	for _, tt := range tests {
		prev := []StepResult{lookup, {Tool: ToolCheckChangeWindow, Output: json.RawMessage(tt.window)}}
		args, err := steps[2].Args(prev)
		var stop *Stop
		switch {
		case tt.wantArgs != "":
			if err != nil || string(args) != tt.wantArgs {
				t.Errorf("%s: args = %s, %v, want %s", tt.name, args, err, tt.wantArgs)
			}
		case tt.wantStop != "":
			if !errors.As(err, &stop) || stop.Output != tt.wantStop || args != nil {
				t.Errorf("%s: args = %s, %v, want Stop %q", tt.name, args, err, tt.wantStop)
			}
		default:
			if err == nil || errors.As(err, &stop) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: args = %s, %v, want error containing %q", tt.name, args, err, tt.wantErr)
			}
		}
	}
	// The window is checked only after the right order was looked up.
	wrong := StepResult{Tool: ToolLookupOrder, Output: json.RawMessage(`{"order_id":"ORD-9999"}`)}
	if _, err := steps[1].Args([]StepResult{wrong}); err == nil {
		t.Error("check_change_window args built after looking up another order")
	}
	// Without a change verb the request itself, minus the order id, is the change.
	steps, err = skill.Steps(Input{Text: "ORD-1001: customer relocated, new address is 4 Oak Ave"})
	if err != nil {
		t.Fatal(err)
	}
	args, err := steps[2].Args([]StepResult{lookup, {Tool: ToolCheckChangeWindow, Output: json.RawMessage(`{"open":true}`)}})
	if want := `{"order_id":"ORD-1001","change":"customer relocated, new address is 4 Oak Ave"}`; err != nil || string(args) != want {
		t.Errorf("fallback change args = %s, %v, want %s", args, err, want)
	}
}

func TestCustomerEmailArgs(t *testing.T) {
	skill := demoSkill(t, "customer_email")
	// The address in the text is not where the mail goes: the order's is.
	steps, err := skill.Steps(Input{Text: "email the customer of ORD-1004 at evil@example.net that their parcel is delayed"})
	if err != nil {
		t.Fatal(err)
	}
	args, err := steps[1].Args([]StepResult{lookupResult(lookup1004)})
	want := `{"order_id":"ORD-1004","to":"jane@example.com","subject":"About your order ORD-1004","body":"Hello Jane,\n\nTheir parcel is delayed.\n\nKind regards,\nCustomer support"}`
	if err != nil || string(args) != want {
		t.Errorf("args = %s, %v, want %s", args, err, want)
	}
	noEmail := `{"order_id":"ORD-1004","customer_name":"Jane Doe"}`
	var stop *Stop
	if _, err := steps[1].Args([]StepResult{lookupResult(noEmail)}); !errors.As(err, &stop) || !strings.Contains(stop.Output, "no e-mail address on file") {
		t.Errorf("no address on file: %v, want Stop", err)
	}
}

func TestPlansRefuseIncompleteInput(t *testing.T) {
	tests := []struct {
		skill string
		in    Input
		want  string
	}{
		{"order_status", Input{Text: "where is my order"}, "no order id"},
		{"order_status", Input{Text: ""}, "no order id"},
		{"refunds", Input{Text: "refund ORD-1004 and ORD-1005"}, "several orders (ORD-1004, ORD-1005)"},
		{"refunds", Input{Text: "refund it", Metadata: map[string]string{"order_id": "bogus"}}, `metadata order_id "bogus"`},
		{"refunds", Input{Text: "refund ORD-1004", Metadata: map[string]string{"order_id": "ORD-1005"}}, "the text names ORD-1004 but metadata order_id is ORD-1005"},
		{"order_support", Input{Text: "ORD-1001"}, "say what should change"},
		{"customer_email", Input{Text: "email the customer about ORD-1004"}, "say what to tell the customer"},
	}
	for _, tt := range tests {
		steps, err := demoSkill(t, tt.skill).Steps(tt.in)
		if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), tt.want) || steps != nil {
			t.Errorf("%s.Steps(%+v) = %d steps, %v, want ErrIncomplete containing %q", tt.skill, tt.in, len(steps), err, tt.want)
		}
	}
	// Metadata supplies the order when the text names none, or the same one.
	for _, in := range []Input{
		{Text: "refund the duplicate charge", Metadata: map[string]string{"order_id": "1004"}},
		{Text: "refund ORD-1004", Metadata: map[string]string{"order_id": "ord-1004"}},
	} {
		steps, err := demoSkill(t, "refunds").Steps(in)
		if err != nil {
			t.Fatalf("Steps(%+v): %v", in, err)
		}
		if args, _ := steps[0].Args(nil); string(args) != `{"order_id":"ORD-1004"}` {
			t.Errorf("Steps(%+v) lookup args = %s", in, args)
		}
	}
}

func TestSummaries(t *testing.T) {
	refundArgs := json.RawMessage(`{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"GB33BUKB20201555559182"}`)
	tests := []struct {
		skill   string
		results []StepResult
		want    string
	}{
		{"order_status", []StepResult{{Tool: ToolLookupOrder, Output: json.RawMessage(`{"order_id":"ORD-1003","status":"shipped"}`)}},
			"Order ORD-1003 is shipped."},
		{"order_status", []StepResult{{Tool: ToolLookupOrder, Output: json.RawMessage(`{"order_id":"ORD-1003","status":"IN_TRANSIT"}`)}},
			"Order ORD-1003 is in transit."},
		{"order_status", []StepResult{{Tool: ToolLookupOrder, Output: json.RawMessage(`{"order_id":"ORD-1003"}`)}},
			"Order ORD-1003 has no recorded status."},
		{"order_support", []StepResult{
			{Tool: ToolLookupOrder}, {Tool: ToolCheckChangeWindow},
			{Tool: ToolSubmitChangeRequest, Args: json.RawMessage(`{"order_id":"ORD-1001","change":"x"}`), Output: json.RawMessage(`{"change_request_id":"CHG-77","status":"submitted"}`)}},
			"Change request CHG-77 submitted for ORD-1001."},
		{"order_support", []StepResult{
			{Tool: ToolLookupOrder}, {Tool: ToolCheckChangeWindow},
			{Tool: ToolSubmitChangeRequest, Args: json.RawMessage(`{"order_id":"ORD-1001","change":"x"}`), Pending: true}},
			"Change request for ORD-1001 is awaiting approval."},
		{"refunds", []StepResult{lookupResult(lookup1004), {Tool: ToolIssueRefund, Args: refundArgs, Pending: true}},
			"Refund of $2,400.00 to account ••9182 is awaiting approval."},
		{"refunds", []StepResult{lookupResult(lookup1004), {Tool: ToolIssueRefund, Args: refundArgs, Output: json.RawMessage(`{"refund_id":"RF-1"}`)}},
			"Refund RF-1 of $2,400.00 to account ••9182 issued."},
		{"refunds", []StepResult{lookupResult(lookup1004), {Tool: ToolIssueRefund, Args: refundArgs, Output: json.RawMessage(`{}`)}},
			"Refund of $2,400.00 to account ••9182 issued."},
		{"customer_email", []StepResult{lookupResult(lookup1004), {Tool: ToolSendCustomerEmail, Args: json.RawMessage(`{"order_id":"ORD-1004"}`), Pending: true}},
			"E-mail to the customer about ORD-1004 is awaiting approval."},
		{"customer_email", []StepResult{lookupResult(lookup1004), {Tool: ToolSendCustomerEmail, Args: json.RawMessage(`{"order_id":"ORD-1004"}`), Output: json.RawMessage(`{}`)}},
			"E-mail sent to the customer about ORD-1004."},
	}
	for _, tt := range tests {
		if got := Summarize(demoSkill(t, tt.skill), tt.results); got != tt.want {
			t.Errorf("Summarize(%s, %d results) = %q, want %q", tt.skill, len(tt.results), got, tt.want)
		}
	}
}

// fakeProvider answers the demo tools as the simulated provider would.
func fakeProvider(t *testing.T, tool string, args json.RawMessage) json.RawMessage {
	t.Helper()
	var a struct {
		OrderID string `json:"order_id"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.OrderID == "" {
		t.Fatalf("%s called with %s", tool, args)
	}
	switch tool {
	case ToolLookupOrder:
		return json.RawMessage(strings.ReplaceAll(lookup1004, "ORD-1004", a.OrderID))
	case ToolCheckChangeWindow:
		return json.RawMessage(`{"order_id":"` + a.OrderID + `","open":` + map[bool]string{true: "false", false: "true"}[a.OrderID == "ORD-1002"] + `}`)
	case ToolSubmitChangeRequest:
		return json.RawMessage(`{"change_request_id":"CHG-1"}`)
	case ToolIssueRefund:
		return json.RawMessage(`{"refund_id":"RF-1"}`)
	case ToolSendCustomerEmail:
		return json.RawMessage(`{"message_id":"M-1"}`)
	}
	t.Fatalf("unknown tool %s", tool)
	return nil
}

// TestDriveJourneys runs the loop the package documentation gives the
// runtime: route, plan, build each step's arguments from the results so
// far, call, record, summarise. High-impact calls stop at approval.
func TestDriveJourneys(t *testing.T) {
	high := map[string]bool{ToolIssueRefund: true, ToolSendCustomerEmail: true}
	tests := []struct {
		text      string
		wantSkill string
		wantCalls string
		wantOut   string
	}{
		{"tracking status for order ORD-1007?", "order_status", "lookup_order", "Order ORD-1007 is delivered."},
		{"can you change the shipping address for ORD-1001 to 12 Elm St", "order_support",
			"lookup_order,check_change_window,submit_change_request", "Change request CHG-1 submitted for ORD-1001."},
		{"switch ORD-1002 to express shipping", "order_support",
			"lookup_order,check_change_window", "ORD-1002 can no longer be changed: its change window is closed. No change was requested."},
		{"customer was double charged on order 1004, give the money back", "refunds",
			"lookup_order", "Refund of $2,400.00 to account ••9182 is awaiting approval."},
		{"email the customer of ORD-1004 that their parcel is delayed", "customer_email",
			"lookup_order", "E-mail to the customer about ORD-1004 is awaiting approval."},
	}
	r := demoRouter(t)
	for _, tt := range tests {
		skill, _, err := r.Route(tt.text, "")
		if err != nil || skill.Name != tt.wantSkill {
			t.Fatalf("Route(%q) = %q, %v, want %s", tt.text, skill.Name, err, tt.wantSkill)
		}
		steps, err := skill.Steps(Input{Text: tt.text})
		if err != nil {
			t.Fatalf("Steps(%q): %v", tt.text, err)
		}
		var results []StepResult
		var calls []string
		output := ""
		for i, st := range steps {
			if i >= skill.MaxSteps {
				t.Fatalf("%s: more than %d steps", skill.Name, skill.MaxSteps)
			}
			args, err := st.Args(results)
			var stop *Stop
			if errors.As(err, &stop) {
				output = stop.Output
				break
			}
			if err != nil {
				t.Fatalf("%s step %d args: %v", skill.Name, i+1, err)
			}
			if high[st.Tool] {
				results = append(results, StepResult{Tool: st.Tool, Args: args, Pending: true})
				break
			}
			calls = append(calls, st.Tool)
			results = append(results, StepResult{Tool: st.Tool, Args: args, Output: fakeProvider(t, st.Tool, args)})
		}
		if output == "" {
			output = Summarize(skill, results)
		}
		if got := strings.Join(calls, ","); got != tt.wantCalls || output != tt.wantOut {
			t.Errorf("%q: calls %s, output %q; want calls %s, output %q", tt.text, got, output, tt.wantCalls, tt.wantOut)
		}
	}
}

// TestAccountShown: the "••NNNN" of a summary comes from the provider's
// account_last4, never from the account argument, which a journal holds
// as a redaction token whose last characters are not digits.
func TestAccountShown(t *testing.T) {
	tok := json.RawMessage(`{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"[iban:d38bf348]"}`)
	tests := []struct {
		name    string
		results []StepResult
		want    string
	}{
		{"lookup reports last4", []StepResult{{Tool: ToolLookupOrder, Output: json.RawMessage(`{"account":"[iban:d38bf348]","account_last4":"9182"}`)}, {Tool: ToolIssueRefund, Args: tok, Pending: true}},
			"Refund of $2,400.00 to account ••9182 is awaiting approval."},
		{"receipt reports last4", []StepResult{{Tool: ToolLookupOrder, Output: json.RawMessage(`{}`)}, {Tool: ToolIssueRefund, Args: tok, Output: json.RawMessage(`{"refund_id":"rf_1","account_last4":"1234"}`)}},
			"Refund rf_1 of $2,400.00 to account ••1234 issued."},
		{"no last4: no digits", []StepResult{{Tool: ToolLookupOrder, Output: json.RawMessage(`{"account":"[iban:d38bf348]"}`)}, {Tool: ToolIssueRefund, Args: tok, Output: json.RawMessage(`{"refund_id":"rf_1"}`)}},
			"Refund rf_1 of $2,400.00 to the order's account issued."},
		{"last4 that is a token", []StepResult{{Tool: ToolLookupOrder, Output: json.RawMessage(`{"account_last4":"[iban:1]"}`)}, {Tool: ToolIssueRefund, Args: tok, Pending: true}},
			"Refund of $2,400.00 to the order's account is awaiting approval."},
	}
	for _, tt := range tests {
		if got := summarizeRefund(tt.results); got != tt.want {
			t.Errorf("%s: summarizeRefund = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func toolsOf(steps []Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Tool)
	}
	return out
}

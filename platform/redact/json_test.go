package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	r := New(testKey)
	for _, c := range []struct{ in, want string }{
		{`{"password":"hunter2","user":"bob"}`, `{"password":"[secret]","user":"bob"}`},
		// Names match whatever their case and separators.
		{`{"cardNumber":"x","Card-Number":"y","CARD_NUMBER":"z","card number":"w"}`, `{"cardNumber":"[card]","Card-Number":"[card]","CARD_NUMBER":"[card]","card number":"[card]"}`},
		{`{"userEmail":"a","Phone_Number":"b","date_of_birth":"c","X-Api-Key":"d","IBAN":"e","ssn":"f"}`, `{"userEmail":"[email]","Phone_Number":"[phone]","date_of_birth":"[dob]","X-Api-Key":"[secret]","IBAN":"[iban]","ssn":"[ssn]"}`},
		// Numbers under a sensitive name are replaced too; others kept.
		{`{"card_number":4111111111111111,"cvv":123,"amount":2400.5,"qty":3}`, `{"card_number":"[card]","cvv":"[secret]","amount":2400.5,"qty":3}`},
		// A long number under a plain name is still checked.
		{`{"value":4111111111111111,"big":12345678901234567890}`, `{"value":"[card]","big":12345678901234567890}`},
		// Under a sensitive name, everything inside is replaced and the shape kept.
		{`{"address":{"street":"1 Main St","zip":"94107","geo":[37.7,-122.4],"verified":true,"note":null}}`, `{"address":{"street":"[address]","zip":"[address]","geo":["[address]","[address]"],"verified":true,"note":null}}`},
		{`{"emails":["a@b.example","c@d.example"]}`, `{"emails":["[email]","[email]"]}`},
		// Empty strings, booleans and nulls hide nothing.
		{`{"password":"","token":null,"secret":false}`, `{"password":"","token":null,"secret":false}`},
		// Every other string is free text; keys too.
		{`{"note":"call +44 20 7946 0958","jane@example.com":1,"list":["4111 1111 1111 1111",true]}`, `{"note":"call [phone]","[email]":1,"list":["[card]",true]}`},
		// A string holding JSON (tool-call arguments) is redacted as JSON.
		{`{"arguments":"{\"card\": \"4111111111111112\", \"order\": \"ORD-1\"}"}`, `{"arguments":"{\"card\":\"[card]\",\"order\":\"ORD-1\"}"}`},
		{`{"arguments":"{\"order\": \"ORD-1\"}"}`, `{"arguments":"{\"order\": \"ORD-1\"}"}`},
		// Order of keys, escapes and scalars at the top level.
		{`{"z":1,"a":"<b>&</b>\u2028","m":[]}`, `{"z":1,"a":"<b>&</b>\u2028","m":[]}`},
		{`"mail jane@example.com"`, `"mail [email]"`},
		{` [ 1 , 2 ] `, `[1,2]`},
	} {
		got, err := r.JSON([]byte(c.in))
		if err != nil {
			t.Errorf("JSON(%s): %v", c.in, err)
			continue
		}
		if !json.Valid(got) {
			t.Errorf("JSON(%s) = %s, not valid JSON", c.in, got)
		}
		if kinds(string(got)) != c.want {
			t.Errorf("JSON(%s) = %s, want %s", c.in, kinds(string(got)), c.want)
		}
		again, err := r.JSON(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("JSON(%s) = %s, %v, want %s unchanged (idempotent)", got, again, err, got)
		}
	}
}

func TestJSONInvalid(t *testing.T) {
	r := New(testKey)
	for _, in := range []string{``, `{`, `{"a":}`, `{"a":1}x`, `{"a":1} {"b":2}`, `[1,]`, `nul`} {
		if got, err := r.JSON([]byte(in)); err == nil {
			t.Errorf("JSON(%q) = %q, nil, want an error", in, got)
		}
	}
}

func TestJSONCorrelatesWithText(t *testing.T) {
	// A value under a sensitive name gets the token free text gives it.
	r := New(testKey)
	got, err := r.JSON([]byte(`{"email":"Jane@Example.com","card":"4111-1111-1111-1111","phone":"+1 415 555 0132"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"email":"` + r.String("jane@example.com") + `","card":"` + r.String("4111111111111111") + `","phone":"` + r.String("(415) 555-0132") + `"}`
	if string(got) != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

// Nine bare digits under a neutral member become an SSN when the object
// says what they are (a sibling's name or value), and only then: with no
// such sibling, under an order/tracking/amount name, or when the digits
// cannot be an SSN, they stay readable.
func TestSSNInObjectContext(t *testing.T) {
	r := New(testKey)
	// The same token as the SSN written in free text.
	tok := strings.TrimPrefix(r.String("SSN 446-75-6639"), "SSN ")
	if !strings.HasPrefix(tok, "[ssn:") {
		t.Fatalf("free text SSN = %s", tok)
	}
	for _, c := range []struct{ in, want string }{
		{`{"type":"SSN","value":"446756639"}`, `{"type":"SSN","value":"[ssn]"}`},
		{`{"document":"Social Security number","number":446756639,"verified":true}`, `{"document":"Social Security number","number":"[ssn]","verified":true}`},
		{`{"ssn_verified":true,"value":"446756639"}`, `{"ssn_verified":true,"value":"[ssn]"}`},
		{`{"taxpayer_kind":"individual","id":"446756639"}`, `{"taxpayer_kind":"individual","id":"[ssn]"}`},
		// No context: a number like any other.
		{`{"value":"446756639","note":"refund"}`, `{"value":"446756639","note":"refund"}`},
		{`{"order_id":"446756639","tracking":"123456789","amount_minor":446756639}`, `{"order_id":"446756639","tracking":"123456789","amount_minor":446756639}`},
		// Context, but numbers named for something else or not an SSN.
		{`{"type":"SSN","order_number":"446756639","tracking_number":446756639}`, `{"type":"SSN","order_number":"446756639","tracking_number":446756639}`},
		{`{"type":"SSN","value":"966756639","other":"000123456","x":"123006789","y":"123450000"}`, `{"type":"SSN","value":"966756639","other":"000123456","x":"123006789","y":"123450000"}`},
		// "social" alone as a value (a channel) is no cue.
		{`{"channel":"social","ref":"446756639"}`, `{"channel":"social","ref":"446756639"}`},
		// Nested: the context is the object the digits are in.
		{`{"customer":{"id_type":"ssn","id":"446756639"},"order":{"id":"446756640"}}`, `{"customer":{"id_type":"ssn","id":"[ssn]"},"order":{"id":"446756640"}}`},
	} {
		got, err := r.JSON([]byte(c.in))
		if want := strings.ReplaceAll(c.want, "[ssn]", tok); err != nil || string(got) != want {
			t.Errorf("JSON(%s) = %s, %v; want %s", c.in, got, err, want)
		}
	}
}

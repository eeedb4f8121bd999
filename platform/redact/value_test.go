package redact

import (
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

type testAddress struct {
	Street string `json:"street"`
	City   string `json:"city"`
}

type testBase struct {
	TenantID string `json:"tenant_id"`
}

type testCustomer struct {
	testBase
	ID        string            `json:"id"`
	Email     string            `json:"email"`
	Phone     string            // untagged: the Go name is the JSON name
	CardNo    string            `json:"pan"`
	Password  string            `json:"pw,omitempty"`
	Address   *testAddress      `json:"address"`
	Notes     []string          `json:"notes"`
	Meta      map[string]string `json:"meta"`
	Balance   int64             `json:"balance_minor"`
	Born      time.Time         `json:"date_of_birth"`
	Seen      time.Time         `json:"seen"`
	IP        netip.Addr        `json:"last_ip"`
	Raw       json.RawMessage   `json:"raw"`
	Skip      string            `json:"-"`
	Empty     string            `json:"empty,omitempty"`
	unexposed string
}

func TestValue(t *testing.T) {
	r := New(testKey)
	c := testCustomer{
		testBase:  testBase{TenantID: "acme"},
		ID:        "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
		Email:     "jane@example.com",
		Phone:     "+44 20 7946 0958",
		CardNo:    "4111 1111 1111 1111",
		Password:  "hunter2",
		Address:   &testAddress{Street: "1 Main St", City: "Springfield"},
		Notes:     []string{"refund to 4111-1111-1111-1111 approved", "order ORD-2024-00917"},
		Meta:      map[string]string{"api_key": "abc", "channel": "chat from 10.0.0.1"},
		Balance:   240000,
		Born:      time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC),
		Seen:      time.Date(2026, 11, 30, 14, 32, 5, 0, time.UTC),
		IP:        netip.MustParseAddr("203.0.113.42"),
		Raw:       json.RawMessage(`{"token":"x","n":1}`),
		Skip:      "jane@example.com",
		unexposed: "jane@example.com",
	}
	got := r.Value(&c)
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("json.Marshal(Value(customer)): %v", err)
	}
	want := `{"Phone":"[phone]","address":{"city":"[address]","street":"[address]"},"balance_minor":240000,"date_of_birth":"[dob]","email":"[email]","id":"3f2504e0-4f89-11d3-9a0c-0305e82c3301","last_ip":"[ip]","meta":{"api_key":"[secret]","channel":"chat from [ip]"},"notes":["refund to [card] approved","order ORD-2024-00917"],"pan":"[card]","pw":"[secret]","raw":{"n":1,"token":"[secret]"},"seen":"2026-11-30T14:32:05Z","tenant_id":"acme"}`
	if kinds(string(b)) != want {
		t.Errorf("Value(customer) encodes as\n %s\nwant\n %s", kinds(string(b)), want)
	}
	if strings.Contains(string(b), "jane") {
		t.Errorf("Value(customer) = %s, which holds the e-mail address", b)
	}
	if c.Email != "jane@example.com" || c.Address.Street != "1 Main St" {
		t.Errorf("Value changed its argument: %+v", c)
	}
}

func TestValueKinds(t *testing.T) {
	r := New(testKey)
	type cyclic struct {
		Next *cyclic
	}
	loop := &cyclic{}
	loop.Next = loop
	for _, c := range []struct {
		name string
		in   any
		want string // JSON of the result, tokens as [kind]
	}{
		{"nil", nil, `null`},
		{"string", "mail jane@example.com", `"mail [email]"`},
		{"error", errors.New("charge 4111111111111111 failed"), `"charge [card] failed"`},
		{"bytes", []byte("ip 10.0.0.1"), `"ip [ip]"`},
		{"long int", int64(4111111111111111), `"[card]"`},
		{"plain numbers", []any{3, 2.5, uint8(7), true}, `[3,2.5,7,true]`},
		{"map keys", map[string]int{"jane@example.com": 1}, `{"[email]":1}`},
		{"int keys", map[int]string{7: "x"}, `{"7":"x"}`},
		{"number", map[string]any{"pin": json.Number("1234"), "n": json.Number("12")}, `{"n":12,"pin":"[secret]"}`},
		{"func", map[string]any{"f": func() {}}, `{"f":"[func]"}`},
		// Each pointer and struct is a level.
		{"cycle", loop, strings.Repeat(`{"Next":`, maxDepth/2) + `"[too deep]"` + strings.Repeat(`}`, maxDepth/2)},
	} {
		b, err := json.Marshal(r.Value(c.in))
		if err != nil {
			t.Errorf("%s: json.Marshal(Value(%v)): %v", c.name, c.in, err)
			continue
		}
		if got := kinds(string(b)); got != c.want {
			t.Errorf("%s: Value(%#v) encodes as %s, want %s", c.name, c.in, got, c.want)
		}
	}
}

func TestValueMapType(t *testing.T) {
	// The audit trail relies on a map[string]any coming back as one.
	r := New(testKey)
	in := map[string]any{"email": "jane@example.com", "n": 3}
	got, ok := r.Value(in).(map[string]any)
	if !ok {
		t.Fatalf("Value(map[string]any) = %T, want map[string]any", r.Value(in))
	}
	if got["n"] != 3 || !reflect.DeepEqual(in["email"], "jane@example.com") || !isToken(got["email"].(string)) {
		t.Errorf("Value(%v) = %v, want n kept, email a token, argument unchanged", in, got)
	}
}

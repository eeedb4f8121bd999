package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/tools"
)

// Facts are the parts of a call that people decide on, read from the
// arguments the catalog declares (tools.Tool AmountArg, CurrencyArg,
// TargetArg). They are read once, here: the amount an approver is shown,
// the amount dual control weighs and the amount the provider receives are
// the same parse of the same bytes.
type Facts struct {
	Amount *money.Amount // nil when the tool declares no amount
	Target string        // the declared target's value, such as "ORD-1004"; "" when none
	// Total is the target's total the call declares (tools.Tool
	// TotalArg), in the amount's currency: what can be refunded of it at
	// most (approvals.Refundable). nil when the tool declares none.
	Total *money.Amount
}

// ReadFacts reads a call's declared amount, currency and target. A tool
// that declares an amount refuses a call without one, or with one that is
// not a whole number of minor units (500000.0, 1e5 and "500000" are
// refused), or with an unknown currency.
func ReadFacts(t tools.Tool, args json.RawMessage) (Facts, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return Facts{}, fmt.Errorf("arguments must be a JSON object")
	}
	var f Facts
	if t.AmountArg != "" {
		raw, ok := m[t.AmountArg]
		if !ok {
			return Facts{}, fmt.Errorf("%q is required: it is the amount of this call", t.AmountArg)
		}
		minor, err := money.ParseMinor(raw)
		// The message states the rule as the tool's schema writes it: a
		// schema with "minimum": 1 is told "from 1", not "from 0".
		if low := amountMinimum(t.ArgsSchema, t.AmountArg); err != nil || minor < low {
			return Facts{}, fmt.Errorf("%q must be a whole number of minor units written as a JSON integer (no fraction, exponent or quotes), from %d to %d", t.AmountArg, low, money.MaxMinor)
		}
		code, err := stringArg(m, t.CurrencyArg)
		if err != nil {
			return Facts{}, err
		}
		c, err := money.ParseCurrency(code)
		if err != nil {
			return Facts{}, fmt.Errorf("%q must be an ISO 4217 currency code such as USD", t.CurrencyArg)
		}
		f.Amount = &money.Amount{Minor: minor, Currency: c}
		if t.TotalArg != "" {
			raw, ok := m[t.TotalArg]
			if !ok {
				return Facts{}, fmt.Errorf("%q is required: it is the total of what this call acts on", t.TotalArg)
			}
			total, err := money.ParseMinor(raw)
			if err != nil {
				return Facts{}, fmt.Errorf("%q must be a whole number of minor units written as a JSON integer (no fraction, exponent or quotes), from 0 to %d", t.TotalArg, money.MaxMinor)
			}
			f.Total = &money.Amount{Minor: total, Currency: c}
		}
	}
	if t.TargetArg != "" {
		v, err := targetArg(m, t.TargetArg)
		if err != nil {
			return Facts{}, err
		}
		f.Target = v
	}
	return f, nil
}

// UniqueMembers refuses JSON in which an object names a member twice, or
// names two members that differ only in case. JSON readers disagree on
// such input (the first or the last "amount_minor" wins; Go matches
// "AMOUNT_MINOR" to a field amount_minor), so Warden could weigh one
// amount while a provider pays another.
func UniqueMembers(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return uniqueValue(dec, 0)
}

func uniqueValue(dec *json.Decoder, depth int) error {
	if depth > 64 {
		return fmt.Errorf("arguments are nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("arguments are not JSON")
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]string{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return fmt.Errorf("arguments are not JSON")
			}
			name, _ := k.(string)
			folded := strings.ToLower(name)
			if prev, ok := seen[folded]; ok {
				if prev == name {
					return fmt.Errorf("%q appears twice", name)
				}
				return fmt.Errorf("%q and %q differ only in case", prev, name)
			}
			seen[folded] = name
			if err := uniqueValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
	case json.Delim('['):
		for dec.More() {
			if err := uniqueValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
	}
	if err != nil {
		return fmt.Errorf("arguments are not JSON")
	}
	return nil
}

// targetArg reads a required target: a non-empty string, or a number
// (an id such as 1004) kept as written.
func targetArg(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok {
		return "", fmt.Errorf("%q is required", name)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		return n.String(), nil
	}
	return stringArg(m, name)
}

// stringArg reads a required, non-empty string argument.
func stringArg(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok {
		return "", fmt.Errorf("%q is required", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%q must be a non-empty string", name)
	}
	return s, nil
}

// amountMinimum is the least amount a tool's schema allows for its amount
// argument: its "minimum" when that is a whole number above 0, else 0.
func amountMinimum(schema json.RawMessage, arg string) int64 {
	var s struct {
		Properties map[string]struct {
			Minimum *json.Number `json:"minimum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return 0
	}
	p, ok := s.Properties[arg]
	if !ok || p.Minimum == nil {
		return 0
	}
	n, err := p.Minimum.Int64()
	if err != nil || n < 0 || n > money.MaxMinor {
		return 0
	}
	return n
}

package views

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/money"
)

// Field is one labelled value of order data, a receipt or a tool result,
// written for people.
type Field struct {
	Label string
	Value string
}

// LabelledFields turns a JSON object (arguments, a receipt, a tool's
// result) into labelled fields people read: amounts in minor units as
// money in the object's currency (or currency, when it names none), times
// as dates, statuses as words, everything else as written. Keys keep
// their order by name; nested values are shown as compact JSON. Anything
// that is not an object gives no fields (the raw JSON still shows).
func LabelledFields(raw json.RawMessage, currency string) []Field {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if len(raw) == 0 || dec.Decode(&m) != nil {
		return nil
	}
	if c, ok := m["currency"].(string); ok && c != "" {
		currency = c
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Field, 0, len(keys))
	for _, k := range keys {
		if k == "currency" && hasAmount(m) {
			continue // shown with the amount
		}
		out = append(out, Field{Label: fieldLabel(k), Value: fieldValue(k, m[k], currency)})
	}
	return out
}

func hasAmount(m map[string]any) bool {
	for k := range m {
		if isAmountKey(k) {
			return true
		}
	}
	return false
}

func isAmountKey(k string) bool { return k == "amount_minor" || strings.HasSuffix(k, "_amount_minor") }

// fieldLabel writes a key as a label: "amount_minor" → "Amount",
// "account_last4" → "Account (last 4)", "created_at" → "Created".
func fieldLabel(k string) string {
	switch {
	case isAmountKey(k):
		k = strings.TrimSuffix(k, "_minor")
	case k == "account_last4":
		return "Account (last 4)"
	case strings.HasSuffix(k, "_at"):
		k = strings.TrimSuffix(k, "_at")
	case strings.HasSuffix(k, "_id"):
		k = strings.TrimSuffix(k, "_id") + " id"
	}
	s := strings.ReplaceAll(k, "_", " ")
	if s == "" {
		return k
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func fieldValue(k string, v any, currency string) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case json.Number:
		if isAmountKey(k) {
			if n, err := x.Int64(); err == nil {
				return formatMinor(n, currency)
			}
		}
		return x.String()
	case string:
		if k == "status" || strings.HasSuffix(k, "_status") {
			return approvals.StatusWord(x)
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return When(t)
		}
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// formatMinor writes minor units in a currency with package money, the
// one place amounts are formatted.
func formatMinor(n int64, code string) string {
	c, err := money.ParseCurrency(strings.ToUpper(code))
	if err != nil {
		if code == "" {
			return strconv.FormatInt(n, 10) + " (minor units)"
		}
		c = money.Currency{Code: strings.ToUpper(code), Exponent: 2}
	}
	return money.Format(money.Amount{Minor: n, Currency: c})
}

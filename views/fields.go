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

// LabelledValue is a Field that may be a table: a list of objects (an
// order's items) laid out one row an object; Value is empty then.
type LabelledValue struct {
	Label string
	Value string
	Table *Table
}

// Table is a list of objects as columns and rows of values for people.
type Table struct {
	Columns []string
	Rows    [][]string
}

// LabelledFields turns a JSON object (arguments, a receipt, a tool's
// result) into labelled fields people read: amounts in minor units as
// money in the object's currency (or currency, when it names none), times
// as dates, statuses as words, everything else as written. Keys keep
// their order by name; a list of plain values is written out separated
// by commas, an object inside as "label: value" pairs, and a list of
// objects row by row (LabelledValues lays it out as a table). Anything
// that is not an object gives no fields (the raw JSON still shows).
func LabelledFields(raw json.RawMessage, currency string) []Field {
	vs := LabelledValues(raw, currency)
	if vs == nil {
		return nil
	}
	out := make([]Field, len(vs))
	for i, v := range vs {
		out[i] = Field{Label: v.Label, Value: v.Value}
		if v.Table != nil {
			rows := make([]string, len(v.Table.Rows))
			for r, row := range v.Table.Rows {
				cells := make([]string, len(row))
				for c, cell := range row {
					cells[c] = v.Table.Columns[c] + ": " + cell
				}
				rows[r] = strings.Join(cells, ", ")
			}
			out[i].Value = strings.Join(rows, "; ")
		}
	}
	return out
}

// LabelledValues is LabelledFields with lists of objects as tables, for
// the pages that show them.
func LabelledValues(raw json.RawMessage, currency string) []LabelledValue {
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
	out := make([]LabelledValue, 0, len(keys))
	for _, k := range keys {
		if k == "currency" && hasAmount(m) {
			continue // shown with the amount
		}
		if tb := table(m[k], currency); tb != nil {
			out = append(out, LabelledValue{Label: fieldLabel(k), Table: tb})
			continue
		}
		out = append(out, LabelledValue{Label: fieldLabel(k), Value: fieldValue(k, m[k], currency)})
	}
	return out
}

// table lays out a non-empty list of objects as a table: the columns are
// every key any of them has, names and quantities first, each formatted
// as a field is. nil for anything else.
func table(v any, currency string) *Table {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var keys []string
	for _, item := range list {
		o, ok := item.(map[string]any)
		if !ok {
			return nil
		}
		for k := range o {
			if !seen[k] && !(k == "currency" && hasAmount(o)) {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	rank := func(k string) int {
		switch {
		case k == "name" || k == "description" || k == "title":
			return 0
		case k == "sku" || strings.HasSuffix(k, "_id") || k == "id":
			return 1
		case k == "quantity":
			return 2
		case isAmountKey(k):
			return 3
		}
		return 4
	}
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	tb := &Table{}
	for _, k := range keys {
		tb.Columns = append(tb.Columns, fieldLabel(k))
	}
	for _, item := range list {
		o := item.(map[string]any)
		cur := currency
		if c, ok := o["currency"].(string); ok && c != "" {
			cur = c
		}
		row := make([]string, len(keys))
		for i, k := range keys {
			if v, ok := o[k]; ok {
				row[i] = fieldValue(k, v, cur)
			} else {
				row[i] = "—"
			}
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

func hasAmount(m map[string]any) bool {
	for k := range m {
		if isAmountKey(k) {
			return true
		}
	}
	return false
}

// isAmountKey reports whether a key holds an amount in minor units:
// "amount_minor", "refunded_minor", "unit_minor".
func isAmountKey(k string) bool { return strings.HasSuffix(k, "_minor") && k != "_minor" }

// fieldLabel writes a key as a label: "amount_minor" → "Amount",
// "refunded_minor" → "Refunded", "unit_minor" → "Unit price",
// "account_last4" → "Account (last 4)", "created_at" → "Created".
func fieldLabel(k string) string {
	switch {
	case k == "unit_minor":
		return "Unit price"
	case k == "sku":
		return "SKU"
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
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fieldValue(k, e, currency)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		b, _ := json.Marshal(x)
		parts := []string{}
		for _, f := range LabelledFields(b, currency) {
			parts = append(parts, f.Label+": "+f.Value)
		}
		return strings.Join(parts, "; ")
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

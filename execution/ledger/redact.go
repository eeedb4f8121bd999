package ledger

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
)

// What the ledger stores of a provider's answer — its receipt and its
// reasons — is redacted first (docs/redaction.md): a receipt may name
// an account or a customer in full.
//
// Reference ids survive: the compensating call of a reversal takes its
// arguments from the ledger's receipt (runtime.Reverse), so refund_id,
// order_id, change_id and their like must come back as the provider wrote
// them, also when the redactor would take a random-looking one (Stripe's
// re_3NqXz8L2eZvjdA1B0xYz1234) for a secret. Personal data found in such a
// value (an IBAN, a card number, an e-mail address) is still redacted.

// redactors holds the redactor bound to each database (by path, as the
// in-flight locks are).
var redactors sync.Map

// fallback redacts for a database without a bound redactor: nothing is
// stored in the clear, but its tokens match nothing else in Warden.
var fallback = func() *redact.Redactor {
	key := make([]byte, 32)
	rand.Read(key)
	return redact.New(key)
}()

// SetRedactor makes the ledger on db redact what it stores with r, the
// installation's redactor, so that its tokens match those in traces and
// the audit trail. Call it once, when the runtime is built; until then,
// or after a nil r, a redactor with a key of the process's own is used.
func SetRedactor(db *store.DB, r *redact.Redactor) {
	if r == nil {
		redactors.Delete(db.Path())
		return
	}
	redactors.Store(db.Path(), r)
}

func redactorFor(db *store.DB) *redact.Redactor {
	if r, ok := redactors.Load(db.Path()); ok {
		return r.(*redact.Redactor)
	}
	return fallback
}

// redactReason is what is stored of a reason: redacted, then cut to
// maxReason (cutting first could leave half a value the redactor no
// longer recognises).
func redactReason(r *redact.Redactor, why string) string {
	return short(r.String(why))
}

// redactReceipt is what is stored of a receipt: the receipt redacted as
// JSON, with the reference ids at its top level — where a reversal reads
// them — kept as they were (see isReference). An answer that is not JSON
// is kept as a JSON string of its redacted text.
func redactReceipt(r *redact.Redactor, receipt json.RawMessage) json.RawMessage {
	if len(receipt) == 0 {
		return receipt
	}
	out, err := r.JSON(receipt)
	if err != nil {
		b, _ := json.Marshal(r.String(string(receipt)))
		return b
	}
	var orig map[string]json.RawMessage
	red, ok := members(out)
	if json.Unmarshal(receipt, &orig) != nil || !ok {
		return out
	}
	kept := false
	for i, m := range red {
		if v, ok := orig[m.name]; ok && isReference(r, m.name, v, m.value) {
			red[i].value, kept = v, true
		}
	}
	if !kept {
		return out
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range red {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(m.name)
		b.Write(name)
		b.WriteByte(':')
		if err := json.Compact(&b, m.value); err != nil {
			return out
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

type member struct {
	name  string
	value json.RawMessage
}

// members splits a JSON object into its members, in order; ok is false
// when doc is not an object.
func members(doc []byte) (ms []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		name, isName := t.(string)
		if err != nil || !isName {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{name, v})
	}
	return ms, true
}

var (
	// referenceRe is the shape of a reference id: one word of letters,
	// digits and the punctuation ids use, nothing that could hold a
	// sentence.
	referenceRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$`)
	// secretToken is the redactor's token for a value it took for a
	// secret, and nothing else.
	secretToken = regexp.MustCompile(`^\[secret:[0-9a-f]{8}\]$`)
)

// isReference reports whether the value v of a receipt's top-level field
// name, which the redactor made into redacted, is a provider's reference
// id to keep: the field is named as an id (id, refund_id, orderId), the
// name is not one the redactor holds sensitive (session_id), v is a
// string of reference-id shape, and all the redactor found in it is that
// it looks random.
func isReference(r *redact.Redactor, name string, v, redacted json.RawMessage) bool {
	var s, rs string
	if !namesID(name) || json.Unmarshal(v, &s) != nil || json.Unmarshal(redacted, &rs) != nil {
		return false
	}
	if s == rs || !referenceRe.MatchString(s) || !secretToken.MatchString(r.String(s)) {
		return false
	}
	probe, err := json.Marshal(map[string]string{name: "ref"})
	if err != nil {
		return false
	}
	same, err := r.JSON(probe)
	return err == nil && bytes.Equal(same, probe)
}

// namesID reports whether a field name says it holds an id: "id", or an
// ending "_id", "-id", ".id", "Id" or "ID".
func namesID(name string) bool {
	lower := strings.ToLower(name)
	switch {
	case lower == "id":
		return true
	case strings.HasSuffix(lower, "_id"), strings.HasSuffix(lower, "-id"), strings.HasSuffix(lower, ".id"):
		return true
	}
	return len(name) > 2 && (strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "ID"))
}

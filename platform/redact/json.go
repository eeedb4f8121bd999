package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON redacts a JSON document and returns it compacted, still valid
// JSON, with object keys in their original order.
//
// A value under a key whose name means secret or personal data (password,
// api_key, cardNumber, email, date_of_birth, ...) is replaced whole by a
// token of the key's kind: a string or number becomes a token string, and
// inside an object or array under such a key every string and number
// does, so the shape stays readable. Booleans, nulls and empty strings are
// kept. Every other string is redacted as free text, and a string holding
// a JSON object or array (a tool call's arguments) is redacted as JSON.
// Object keys are redacted as free text too.
//
// The free text of one document is redacted up to MaxText bytes in all,
// which bounds the work of one call: a string that no longer fits is
// replaced whole by a token of kind "omitted" (KindOmitted), and the
// document stays valid JSON.
func (r *Redactor) JSON(b []byte) ([]byte, error) {
	budget := MaxText
	return r.json(b, "", &budget, nil)
}

// JSONDeclared is JSON with the fields d declares personal (DeclaredIn, a
// tool's argument schema) replaced whole by a token of their declared
// kind, whatever detection would say of them. A nil d is JSON.
func (r *Redactor) JSONDeclared(b []byte, d *Declared) ([]byte, error) {
	budget := MaxText
	return r.json(b, d.kindOf(), &budget, d)
}

// json redacts a JSON document that sits under a field of the given kind
// ("" for none), its free text within budget, the fields decl declares
// personal tokenised whole.
func (r *Redactor) json(b []byte, kind string, budget *int, decl *Declared) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(b))
	if err := r.jsonValueLeaf(dec, &out, kind, budget, nil, decl); err != nil {
		return nil, fmt.Errorf("redact json: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("redact json: data after the top-level value")
	}
	return out.Bytes(), nil
}

// jsonValueLeaf redacts one JSON value and reports, in leaf, a string value
// redacted as free text (what joinSiblings may join with its neighbour).
// decl is what the caller declared personal at this place (nil: nothing).
func (r *Redactor) jsonValueLeaf(dec *json.Decoder, out *bytes.Buffer, kind string, budget *int, leaf *jsonMember, decl *Declared) error {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			objStart := out.Len()
			out.WriteByte('{')
			var members []jsonMember
			for first := true; dec.More(); first = false {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				if !first {
					out.WriteByte(',')
				}
				appendJSONString(out, r.text(key, budget))
				out.WriteByte(':')
				k := kind
				if fk := r.fieldKind(key); fk != "" {
					k = fk
				}
				sub := decl.member(key)
				if dk := sub.kindOf(); dk != "" && kind == "" {
					k = dk
				}
				m := jsonMember{start: out.Len(), key: key}
				if err := r.jsonValueLeaf(dec, out, k, budget, &m, sub); err != nil {
					return err
				}
				m.end = out.Len()
				members = append(members, m)
			}
			r.joinSiblings(out, objStart, members)
			r.ssnInContext(out, objStart, members)
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					out.WriteByte(',')
				}
				if err := r.jsonValueLeaf(dec, out, kind, budget, nil, decl.element()); err != nil {
					return err
				}
			}
			out.WriteByte(']')
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return err
		}
	case string:
		appendJSONString(out, r.leafIn(kind, t, budget))
		if leaf != nil && kind == "" && len(t) <= maxSibling {
			leaf.text = t
		}
	case json.Number:
		if s := string(t); kind != "" {
			appendJSONString(out, r.Token(kind, s))
		} else if red := r.number(s, budget); red != s {
			appendJSONString(out, red)
		} else {
			out.WriteString(s)
			if leaf != nil {
				leaf.num = s
			}
		}
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

// leaf redacts one string value: whole under a sensitive name, otherwise
// as free text or, when it holds one, as a JSON document.
func (r *Redactor) leaf(kind, s string) string { return r.leafIn(kind, s, nil) }

// leafIn is leaf with the free text redacted within budget (nil: each
// string within MaxText, as String does).
func (r *Redactor) leafIn(kind, s string, budget *int) string {
	if kind != "" {
		if s == "" || isToken(s) {
			return s
		}
		return r.Token(kind, s)
	}
	if n := len(s); n >= 2 && (s[0] == '{' && s[n-1] == '}' || s[0] == '[' && s[n-1] == ']') && json.Valid([]byte(s)) {
		if budget == nil {
			b := MaxText
			budget = &b
		}
		red, err := r.json([]byte(s), "", budget, nil)
		if err == nil {
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(s)) == nil && bytes.Equal(compact.Bytes(), red) {
				return s // nothing redacted: keep the caller's formatting
			}
			return string(red)
		}
	}
	return r.text(s, budget)
}

// text redacts s as free text within what is left of budget (nil: none
// beyond String's own). A string that does not fit is replaced whole by a
// token of kind omitted: masked, never left in the clear. A token costs
// nothing.
func (r *Redactor) text(s string, budget *int) string {
	if budget == nil || isToken(s) {
		return r.String(s)
	}
	if len(s) > *budget {
		return r.omitted(s)
	}
	*budget -= len(s)
	return r.String(s)
}

// number redacts a number written as digits, such as a card number stored
// as a JSON number; numbers too short to be anything come back as they are.
func (r *Redactor) number(s string, budget *int) string {
	if r.marked != nil {
		if m := r.marked.replace(s); m != s {
			return m
		}
	}
	if len(s) < 9 {
		return s
	}
	return r.text(s, budget)
}

// appendJSONString writes s as a JSON string. Unlike encoding/json it does
// not escape <, > and &, which keeps log lines readable; invalid UTF-8
// becomes U+FFFD.
func appendJSONString(out *bytes.Buffer, s string) {
	const hexdigits = "0123456789abcdef"
	out.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			out.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				out.WriteByte('\\')
				out.WriteByte(c)
			case '\n':
				out.WriteString(`\n`)
			case '\r':
				out.WriteString(`\r`)
			case '\t':
				out.WriteString(`\t`)
			default:
				out.WriteString(`\u00`)
				out.WriteByte(hexdigits[c>>4])
				out.WriteByte(hexdigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		ru, size := utf8.DecodeRuneInString(s[i:])
		if ru == utf8.RuneError && size == 1 {
			out.WriteString(s[start:i])
			out.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		if ru == '\u2028' || ru == '\u2029' {
			out.WriteString(s[start:i])
			fmt.Fprintf(out, `\u%04x`, ru)
			i += size
			start = i
			continue
		}
		i += size
	}
	out.WriteString(s[start:])
	out.WriteByte('"')
}

// JSONText is raw redacted as JSON, as text to store; raw that is not
// JSON is redacted as text instead. Empty stays empty.
func (r *Redactor) JSONText(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	out, err := r.JSON(raw)
	if err != nil {
		return r.String(string(raw))
	}
	return string(out)
}

// JSONTextDeclared is JSONText with the fields d declares personal
// tokenised whole (JSONDeclared). Raw that is not JSON is redacted as
// text; when d marks the document itself, it becomes one token.
func (r *Redactor) JSONTextDeclared(raw []byte, d *Declared) string {
	if len(raw) == 0 {
		return ""
	}
	out, err := r.JSONDeclared(raw, d)
	if err != nil {
		if k := d.kindOf(); k != "" {
			return r.Token(k, string(raw))
		}
		return r.String(string(raw))
	}
	return string(out)
}

// A jsonMember is where one member's value was written in the output,
// and its string when it was redacted as free text.
type jsonMember struct {
	start, end int
	text       string
	key        string // the member's name
	num        string // its value, when a number written as it came
}

// maxSibling is the longest string joinSiblings joins with a neighbour:
// the parts of a split value are short.
const maxSibling = 64

// joinSiblings finds values split across two adjacent string members of
// one object ("card_first": "4111 1111", "card_last": "1111 1111";
// "country_code": "+44", "number": "20 7946 0958"): it reads each pair
// joined by a space, and where a card, IBAN, phone number, SSN, identity
// number or e-mail address spans both, replaces its part in each member
// with the token of the whole value. The object's members are in
// out[objStart:].
func (r *Redactor) joinSiblings(out *bytes.Buffer, objStart int, ms []jsonMember) {
	if len(ms) < 2 {
		return
	}
	repl := map[int]string{}
	for i := 0; i+1 < len(ms); i++ {
		a, b := ms[i].text, ms[i+1].text
		if a == "" || b == "" || !hasDigitOrPlus(a) || !hasDigitOrPlus(b) {
			continue
		}
		// A card number cut anywhere: the digits of both together, unless
		// a member is named for another number (an order number next to
		// a tracking number is two numbers, whatever their digits).
		if da, db := digitsOnly(a), digitsOnly(b); da != "" && db != "" && !otherNumberName(ms[i].key) && !otherNumberName(ms[i+1].key) {
			if d := da + db; len(d) >= 13 && len(d) <= 19 && cardNumber(d, false) {
				var tb strings.Builder
				r.appendToken(&tb, KindCard, d)
				repl[i], repl[i+1] = tb.String(), tb.String()
				i++
				continue
			}
		}
		joined := a + " " + b
		for _, m := range r.find(joined) {
			if m.Start >= len(a) || m.End <= len(a)+1 {
				continue
			}
			switch m.Kind {
			case KindCard, KindIBAN, KindPhone, KindSSN, KindID, KindEmail, KindNINO:
			default:
				continue
			}
			norm := m.Value
			if norm == "" {
				norm = normalise(m.Kind, joined[m.Start:m.End])
			}
			var tb strings.Builder
			r.appendToken(&tb, m.Kind, norm)
			tok := tb.String()
			repl[i] = r.String(a[:m.Start]) + tok
			repl[i+1] = tok + r.String(b[m.End-len(a)-1:])
			i++
			break
		}
	}
	rewriteMembers(out, objStart, ms, repl)
}

// rewriteMembers replaces the values of the members in repl (by index)
// with JSON strings, in out[objStart:], and moves the members' offsets
// to where their values now are.
func rewriteMembers(out *bytes.Buffer, objStart int, ms []jsonMember, repl map[int]string) {
	if len(repl) == 0 {
		return
	}
	obj := append([]byte(nil), out.Bytes()[objStart:]...)
	out.Truncate(objStart)
	prev, shift := 0, 0
	for i := range ms {
		m := &ms[i]
		v, ok := repl[i]
		if !ok {
			m.start += shift
			m.end += shift
			continue
		}
		out.Write(obj[prev : m.start-objStart])
		start := out.Len()
		appendJSONString(out, v)
		prev = m.end - objStart
		shift += out.Len() - start - (m.end - m.start)
		m.start, m.end = start, out.Len()
	}
	out.Write(obj[prev:])
}

func hasDigitOrPlus(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) || s[i] == '+' {
			return true
		}
	}
	return false
}

// digitsOnly returns the digits of s when it holds nothing but digits,
// spaces and dashes, else "".
func digitsOnly(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			b = append(b, c)
		case c == ' ' || c == '-':
		default:
			return ""
		}
	}
	return string(b)
}

// ssnInContext tokenises nine bare digits under a neutral member name as
// an SSN when the object says what they are: a sibling member named for
// one ("ssn_verified", "social_security", "taxpayer_id", "itin") or a
// sibling value naming one ({"type": "SSN", "value": "446756639"},
// {"document": "social security number", "number": 446756639}). The
// digits must be an SSN the SSA can issue (validSSN), and a member named
// for another number (an order, invoice, tracking or ticket number, a
// phone, a SKU) is left alone. The object's members are in
// out[objStart:].
func (r *Redactor) ssnInContext(out *bytes.Buffer, objStart int, ms []jsonMember) {
	if len(ms) < 2 {
		return
	}
	var cand []int
	for i, m := range ms {
		v := m.text
		if v == "" {
			v = m.num
		}
		if len(v) == 9 && digitsOnly(v) == v && validSSN(v) && !otherNumberName(m.key) {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return
	}
	cue := false
	for _, m := range ms {
		if ssnName(m.key) || m.text != "" && ssnValue(m.text) {
			cue = true
			break
		}
	}
	if !cue {
		return
	}
	repl := map[int]string{}
	for _, i := range cand {
		m := ms[i]
		was := string(out.Bytes()[m.start:m.end])
		v := m.num
		if m.text != "" {
			v = m.text
			if was != `"`+v+`"` {
				continue // redacted already
			}
		} else if was != v {
			continue
		}
		var tb strings.Builder
		r.appendToken(&tb, KindSSN, normalise(KindSSN, v))
		repl[i] = tb.String()
	}
	rewriteMembers(out, objStart, ms, repl)
}

// foldName is a member name in lower case without separators.
func foldName(k string) string {
	var b []byte
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-' || c == ' ' || c == '.':
		default:
			b = append(b, lowerASCII(c))
		}
	}
	return string(b)
}

// ssnName reports a member name that says the object is about an SSN.
func ssnName(k string) bool {
	f := foldName(k)
	for _, w := range []string{"ssn", "socialsecurity", "socsec", "taxpayer", "taxid", "itin"} {
		if strings.Contains(f, w) {
			return true
		}
	}
	return f == "social"
}

// ssnValue reports a short member value that names an SSN ("SSN",
// "US-SSN", "social security number", "ITIN").
func ssnValue(v string) bool {
	if len(v) > 40 {
		return false
	}
	f := foldName(v)
	return f == "ssn" || f == "usssn" || f == "itin" || strings.Contains(f, "socialsecurity") || strings.Contains(f, "taxpayer")
}

// otherNumberName reports a member name for a number that is not an SSN.
func otherNumberName(k string) bool {
	f := foldName(k)
	for _, w := range []string{"order", "invoice", "track", "ticket", "sku", "phone", "tel", "zip", "postcode", "amount", "total", "price", "count", "qty", "quantity"} {
		if strings.Contains(f, w) {
			return true
		}
	}
	return false
}

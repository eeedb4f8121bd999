// Package redact keeps personal data and secrets out of everything Warden
// writes: logs, traces and audit details (docs/redaction.md).
//
// A Redactor finds sensitive values in free text (String), in JSON
// documents (JSON) and in Go values (Value), and replaces each with a keyed
// token that names its kind:
//
//	refund to jane.doe+vip@example.com, card 4111 1111 1111 1111
//	refund to [email:3f9a1c2b], card [card:8d1e0a47]
//
// The eight hex digits are the start of an HMAC-SHA256 of the normalised
// value under a per-installation secret (LoadOrCreateKey), so one customer's
// card correlates across traces without being revealed, and tokens from
// another installation never match. Text that is already redacted comes out
// unchanged: a token is never detected again.
//
// Built-in detectors find e-mail addresses, phone numbers, payment cards
// (Luhn-checked), IBANs (mod-97-checked), US social security numbers, UK
// National Insurance numbers, IPv4 and IPv6 addresses, and secrets: API keys
// with well-known prefixes (including Warden's own wk_ virtual keys),
// bearer and basic credentials, JWTs, private-key blocks, passwords in URLs,
// values of secret-named keys (password=..., "api_key": "...") and long
// high-entropy strings. Each detector validates what it finds, so order ids,
// amounts, dates, versions, UUIDs, ULIDs, hex digests and numbers that fail
// their checksum survive. More detectors, such as other national
// identifiers, plug in with WithDetector. docs/redaction.md lists what is
// caught and what survives.
//
// NewHandler wraps a log/slog handler so that every record passes through a
// Redactor; it is the only handler Warden logs through.
//
// A Redactor is safe for concurrent use.
package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"
	"strings"
	"sync"
)

// Kinds of value a token can name. A field named after personal data that
// no detector recognises in free text (an address, a date of birth, a
// name) gets one of the field kinds.
const (
	KindEmail   = "email"
	KindPhone   = "phone"
	KindCard    = "card"
	KindIBAN    = "iban"
	KindSSN     = "ssn"
	KindNINO    = "nino"
	KindIP      = "ip"
	KindSecret  = "secret"
	KindAccount = "account"
	KindAddress = "address"
	KindDOB     = "dob"
	KindName    = "name"
	KindID      = "id" // other personal identifiers: passport, tax id, ...
)

// A Redactor replaces sensitive values with keyed tokens.
type Redactor struct {
	macs      sync.Pool // of hash.Hash: HMAC-SHA256 under the installation key
	detectors []Detector
	fields    map[string]string // normalised field name → kind, on top of the defaults

	// noPrefilter turns off the whole-text pre-filter; benchmarks use it to
	// show what the pre-filter saves.
	noPrefilter bool
	noRegions   bool // passes after the first read all of a long text (tests compare)
	noNER       bool // the named-entity layer of name detection is off (WithNER)

	// keep are terms set aside before name detection on top of the keep
	// gazetteer, by first word (Keeping): a tenant's allow-list.
	keep map[string][][]string

	// marked are values a caller declared personal (Marking): found
	// wherever they are written and tokenised before detection runs.
	marked *markedValues
}

// clone is a Redactor like r: same key, detectors, fields, allow-list and
// declared values.
func (r *Redactor) clone() *Redactor {
	k := &Redactor{detectors: r.detectors, fields: r.fields, noPrefilter: r.noPrefilter, noRegions: r.noRegions, noNER: r.noNER,
		keep: r.keep, marked: r.marked}
	k.macs.New = r.macs.New
	return k
}

// Keeping returns a Redactor like r (same key, detectors and fields) that
// also keeps terms readable: a tenant's allow-list of catalogue terms,
// brands, products and places ("Hugo Boss", "Cajamar Hub"). Like the keep
// gazetteer, terms are set aside after the street, postcode, date and id
// detectors and before names are looked for, so they only ever keep words
// from being read as a name; e-mail addresses, cards, IBANs, phone numbers,
// identity numbers and secrets are found whatever the list says. Case and
// punctuation are ignored; a term is matched whole, starting at a
// capitalised word. No terms: r itself.
func (r *Redactor) Keeping(terms []string) *Redactor {
	if len(terms) == 0 {
		return r
	}
	k := r.clone()
	k.keep = map[string][][]string{}
	for first, phs := range r.keep {
		k.keep[first] = slices.Clip(phs) // appending below must not write into r's
	}
	for _, t := range terms {
		var ws []string
		for _, w := range words(nil, t) {
			ws = append(ws, keepLower(t[w.start:w.end]))
		}
		if len(ws) > 0 {
			k.keep[ws[0]] = append(k.keep[ws[0]], ws)
		}
	}
	return k
}

// An Option configures a Redactor.
type Option func(*Redactor)

// WithDetector adds a detector that runs on all free text after the
// built-in ones; where its matches overlap a built-in match they are
// dropped. Use it for national identifiers and other formats the package
// does not know. The detector must be safe for concurrent use.
func WithDetector(d Detector) Option {
	return func(r *Redactor) { r.detectors = append(r.detectors, d) }
}

// WithField makes values of fields (JSON keys, struct fields, log
// attributes, key=value pairs in text) with the given name be replaced
// whole with a token of kind. Names are matched like the built-in ones:
// case, '_', '-', '.' and spaces are ignored. An empty kind marks the name
// as not sensitive, overriding the built-in list.
func WithField(name, kind string) Option {
	return func(r *Redactor) {
		if r.fields == nil {
			r.fields = make(map[string]string)
		}
		var buf [maxFieldName]byte
		if k, ok := normaliseField(buf[:0], name); ok {
			r.fields[string(k)] = sanitiseKind(kind)
		}
	}
}

// New returns a Redactor whose tokens are keyed with key, normally the
// 32-byte secret from LoadOrCreateKey. The UK National Insurance number
// detector (NINO) is registered by default; opts add more.
func New(key []byte, opts ...Option) *Redactor {
	k := append([]byte(nil), key...)
	r := &Redactor{detectors: []Detector{NINO}}
	r.macs.New = func() any { return hmac.New(sha256.New, k) }
	for _, o := range opts {
		o(r)
	}
	return r
}

// Token returns the token that replaces value of the given kind, such as
// "[email:3f9a1c2b]". The value is normalised first as the detectors do
// (e-mail lower-cased; card, phone, IBAN reduced to their digits and
// letters), so Token("email", "Jane@Example.com") matches what String
// writes for that address. A kind that is not lower-case letters, digits
// and '_' is replaced by "redacted".
func (r *Redactor) Token(kind, value string) string {
	kind = sanitiseKind(kind)
	var b strings.Builder
	b.Grow(len(kind) + 11)
	r.appendToken(&b, kind, normalise(kind, value))
	return b.String()
}

// Digest returns a keyed 128-bit fingerprint of value within domain, in
// hex: equal values give equal digests, and without the key nobody can
// tell which value made one (an account number is not brute-forced from
// it). For matching values that must not be stored, such as the target of
// an action.
func (r *Redactor) Digest(domain, value string) string {
	h := r.macs.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte(domain))
	h.Write([]byte{0})
	h.Write([]byte(value))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	r.macs.Put(h)
	return hex.EncodeToString(sum[:16])
}

// appendToken writes "[kind:xxxxxxxx]" for an already normalised value.
func (r *Redactor) appendToken(b *strings.Builder, kind, norm string) {
	h := r.macs.Get().(hash.Hash)
	h.Reset()
	if len(norm) <= 4096 {
		h.Write([]byte(norm))
	} else {
		// In pieces: []byte(norm) would copy the value, and an omitted
		// token's value is a whole long text (MaxText and more).
		chunk := make([]byte, 4096)
		for s := norm; len(s) > 0; {
			n := copy(chunk, s)
			h.Write(chunk[:n])
			s = s[n:]
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	r.macs.Put(h)

	const hexdigits = "0123456789abcdef"
	b.WriteByte('[')
	b.WriteString(kind)
	b.WriteByte(':')
	for _, c := range sum[:tokenHex/2] {
		b.WriteByte(hexdigits[c>>4])
		b.WriteByte(hexdigits[c&0xf])
	}
	b.WriteByte(']')
}

// tokenHex is how many hex digits of the HMAC a token keeps: 32 bits, enough
// to correlate one installation's values, too few to be worth attacking.
const tokenHex = 8

// maxKind bounds token kinds so that token recognition stays cheap.
const maxKind = 24

// sanitiseKind makes kind safe to put in a token: the token must be
// recognised again (idempotence), so only [a-z0-9_] starting with a letter.
func sanitiseKind(kind string) string {
	if kind == "" || len(kind) > maxKind || kind[0] < 'a' || kind[0] > 'z' {
		return "redacted"
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return "redacted"
		}
	}
	return kind
}

// tokenEnd reports the end of the token starting at s[i], or -1 when none
// starts there.
func tokenEnd(s string, i int) int {
	if i >= len(s) || s[i] != '[' {
		return -1
	}
	j := i + 1
	if j >= len(s) || s[j] < 'a' || s[j] > 'z' {
		return -1
	}
	for j < len(s) && j-i <= maxKind+1 {
		c := s[j]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' {
			j++
			continue
		}
		break
	}
	if j >= len(s) || s[j] != ':' || j+tokenHex+2 > len(s) {
		return -1
	}
	j++
	for k := 0; k < tokenHex; k++ {
		c := s[j+k]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return -1
		}
	}
	j += tokenHex
	if s[j] != ']' {
		return -1
	}
	return j + 1
}

// isToken reports whether s is exactly one token.
func isToken(s string) bool { return tokenEnd(s, 0) == len(s) }

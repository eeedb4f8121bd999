package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The canonical encoding, specified in docs/audit-format.md. Changing any of
// it breaks every stored chain: a new encoding needs a new FormatTag.
const (
	// FormatTag is the first field of every encoded event. It separates
	// audit hashes from Warden's other SHA-256 digests and names the
	// encoding version.
	FormatTag = "warden-audit-v1"
	// TimeFormat is how Time is stored and hashed: UTC, always nine
	// fractional digits, so the text sorts in time order and re-encodes
	// to the same bytes.
	TimeFormat = "2006-01-02T15:04:05.000000000Z"
	// GenesisHash is the PrevHash of the first event.
	GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"
)

// record is an event as stored: each hashed field as the exact text the
// hash covers. Verification works on records, so what is checked is what is
// in the table, byte for byte, as an independent verifier sees it.
type record struct {
	seq         int64
	time        string
	actorType   string
	actorID     string
	tenant      string
	verb        string
	subjectType string
	subjectID   string
	details     string
	prevHash    string
	hash        string
	// badTypes names the columns a verifier read that are not stored as
	// TEXT; "" when all are.
	badTypes string
}

// computeHash is SHA-256 over the fields in order, each as a 4-byte
// big-endian byte length followed by its UTF-8 bytes.
func (r record) computeHash() string {
	h := sha256.New()
	var n [4]byte
	for _, f := range [...]string{
		FormatTag,
		strconv.FormatInt(r.seq, 10),
		r.time,
		r.actorType,
		r.actorID,
		r.tenant,
		r.verb,
		r.subjectType,
		r.subjectID,
		r.details,
		r.prevHash,
	} {
		binary.BigEndian.PutUint32(n[:], uint32(len(f)))
		h.Write(n[:])
		io.WriteString(h, f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// invalidUTF8 names the first text column that is not valid UTF-8, or "".
// Append never writes one; the hash itself covers any bytes.
func (r record) invalidUTF8() string {
	for i, f := range [...]string{r.time, r.actorType, r.actorID, r.tenant, r.verb,
		r.subjectType, r.subjectID, r.details, r.prevHash, r.hash} {
		if !utf8.ValidString(f) {
			return eventColumns[i]
		}
	}
	return ""
}

// Hash is the hash ev should carry: SHA-256 over the canonical encoding of
// its fields and ev.PrevHash, in lowercase hex. It ignores ev.Hash. It fails
// only when ev cannot be encoded: a time outside years 0000–9999, details
// that are not JSON-encodable (NaN, channels, cycles), or a field too long
// for its length prefix.
func Hash(ev Event) (string, error) {
	r, err := encode(ev)
	if err != nil {
		return "", err
	}
	return r.computeHash(), nil
}

// encode turns an event into its stored form.
func encode(ev Event) (record, error) {
	t := ev.Time.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return record{}, fmt.Errorf("time %v is outside years 0000-9999", ev.Time)
	}
	details, err := canonicalDetails(ev.Details)
	if err != nil {
		return record{}, err
	}
	r := record{
		seq:         ev.Seq,
		time:        t.Format(TimeFormat),
		actorType:   ev.Actor.Type,
		actorID:     ev.Actor.ID,
		tenant:      ev.Tenant,
		verb:        ev.Verb,
		subjectType: ev.Subject.Type,
		subjectID:   ev.Subject.ID,
		details:     details,
		prevHash:    ev.PrevHash,
		hash:        ev.Hash,
	}
	for _, f := range []string{r.actorType, r.actorID, r.tenant, r.verb, r.subjectType, r.subjectID, r.details, r.prevHash} {
		if uint64(len(f)) > math.MaxUint32 {
			return record{}, errors.New("a field is longer than its 4-byte length prefix allows")
		}
	}
	return r, nil
}

// event decodes a stored record. It accepts any time in TimeFormat and any
// JSON object as details; whether the record is in canonical form is
// checkCanonical's question.
func (r record) event() (Event, error) {
	t, err := time.Parse(TimeFormat, r.time)
	if err != nil {
		return Event{}, fmt.Errorf("event %d: time %q is not in the format %s", r.seq, r.time, TimeFormat)
	}
	details, err := decodeDetails(r.details)
	if err != nil {
		return Event{}, fmt.Errorf("event %d: details: %w", r.seq, err)
	}
	return Event{
		Seq:      r.seq,
		Time:     t,
		Actor:    recordedActor(r.actorType, r.actorID, details),
		Tenant:   r.tenant,
		Verb:     r.verb,
		Subject:  Subject{Type: r.subjectType, ID: r.subjectID},
		Details:  details,
		PrevHash: r.prevHash,
		Hash:     r.hash,
	}, nil
}

// shown is the event r decodes to or, for a row Warden did not write (a
// time not in TimeFormat, details that are not a JSON object), its fields
// alone, with its time if it reads as RFC 3339. The trail's pages and
// exports show such a row instead of failing: one row tampered with must
// not hide the rest of the trail, nor Verify's verdict naming that row.
func (r record) shown() Event {
	if ev, err := r.event(); err == nil {
		return ev
	}
	t, _ := time.Parse(time.RFC3339Nano, r.time)
	return Event{Seq: r.seq, Time: t.UTC(), Actor: Actor{Type: r.actorType, ID: r.actorID}, Tenant: r.tenant,
		Verb: r.verb, Subject: Subject{Type: r.subjectType, ID: r.subjectID}, PrevHash: r.prevHash, Hash: r.hash}
}

// checkCanonical reports why r is not what encode would have written for the
// event it decodes to, or "" if it is. A row whose hash matches its text but
// whose text is not canonical was not written by Append.
func (r record) checkCanonical() string {
	t, err := time.Parse(TimeFormat, r.time)
	if err != nil || t.Format(TimeFormat) != r.time {
		return fmt.Sprintf("time %s is not in the form %s", short(r.time), TimeFormat)
	}
	details, err := decodeDetails(r.details)
	if err != nil {
		return fmt.Sprintf("details are not a JSON object: %v", err)
	}
	again, err := encodeGeneric(details)
	if err != nil {
		return fmt.Sprintf("details: %v", err)
	}
	if again != r.details {
		return "details are not in canonical JSON form"
	}
	return ""
}

// canonicalDetails is the text details are stored and hashed as: the JSON
// object encoding/json produces for generic values (map[string]any, []any,
// string, json.Number, bool, nil), with keys sorted by their UTF-8 bytes, no
// insignificant whitespace, no HTML escaping, and every number in canonical
// form (canonicalNumber). Nil details are "{}".
//
// Details are encoded, decoded into generic values and encoded again, so
// that structs, typed maps and json.Marshalers inside them reach the same
// sorted, fixed form, and integers keep their exact digits.
func canonicalDetails(details map[string]any) (string, error) {
	if details == nil {
		return "{}", nil
	}
	first, err := marshalJSON(details)
	if err != nil {
		return "", fmt.Errorf("encode details: %w", err)
	}
	generic, err := decodeDetails(string(first))
	if err != nil {
		return "", fmt.Errorf("encode details: %w", err)
	}
	return encodeGeneric(generic)
}

// encodeGeneric writes decoded details in canonical form.
func encodeGeneric(generic map[string]any) (string, error) {
	if err := canonicalize(generic, 1); err != nil {
		return "", fmt.Errorf("encode details: %w", err)
	}
	out, err := marshalJSON(generic)
	if err != nil {
		return "", fmt.Errorf("encode details: %w", err)
	}
	return string(out), nil
}

// MaxDetailsDepth is how deeply objects and arrays may nest in details, the
// details object itself being level 1. Evidence needs no deep structure,
// and the limit lets any JSON parser read the trail.
const MaxDetailsDepth = 32

// canonicalize rewrites, in place, every number inside v (a decoded
// generic value at nesting level depth) in canonical form, and enforces
// MaxDetailsDepth.
func canonicalize(v any, depth int) error {
	switch v := v.(type) {
	case map[string]any:
		if depth > MaxDetailsDepth {
			return fmt.Errorf("nested more than %d levels deep", MaxDetailsDepth)
		}
		for k, e := range v {
			if n, ok := e.(json.Number); ok {
				c, err := canonicalNumber(n)
				if err != nil {
					return err
				}
				v[k] = c
			} else if err := canonicalize(e, depth+1); err != nil {
				return err
			}
		}
	case []any:
		if depth > MaxDetailsDepth {
			return fmt.Errorf("nested more than %d levels deep", MaxDetailsDepth)
		}
		for i, e := range v {
			if n, ok := e.(json.Number); ok {
				c, err := canonicalNumber(n)
				if err != nil {
					return err
				}
				v[i] = c
			} else if err := canonicalize(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// canonicalNumber is the text a JSON number is stored as. An integer
// literal (no fraction, no exponent) keeps its digits, however many, so
// identifiers and amounts in micro-units stay exact; "-0" is "0". Any other
// number denotes the float64 nearest to it and is written as encoding/json
// writes that float64: the shortest text that reads back as the same value,
// plain when 1e-6 <= |x| < 1e21 and with an exponent otherwise. So 1.0 is
// stored as 1, 1E5 as 100000, 2.50 as 2.5 and 1e-07 as 1e-7. A number
// beyond the float64 range is refused.
func canonicalNumber(n json.Number) (json.Number, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0", nil
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", fmt.Errorf("number %s is beyond the range of a 64-bit float", s)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	if string(b) == "-0" {
		return "0", nil
	}
	return json.Number(b), nil
}

func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeDetails parses one JSON object, keeping numbers as json.Number.
func decodeDetails(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return m, nil
}

// recordedActor is the actor of a stored event, with the name and e-mail
// its details recorded (ActorDetailsKey), if any.
func recordedActor(typ, id string, details map[string]any) Actor {
	a := Actor{Type: typ, ID: id}
	a.Name, a.Email = recordedIdentity(details)
	return a
}

// recordedIdentity is the name and e-mail details record for the actor,
// "" for what they do not record.
func recordedIdentity(details map[string]any) (name, email string) {
	who, _ := details[ActorDetailsKey].(map[string]any)
	name, _ = who["name"].(string)
	email, _ = who["email"].(string)
	return name, email
}

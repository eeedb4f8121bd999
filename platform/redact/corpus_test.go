package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// tokenPattern matches the tokens String writes.
var tokenPattern = regexp.MustCompile(`\[[a-z][a-z0-9_]*:[0-9a-f]{8}\]`)

func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open("testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var es []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("corpus line %d: %v", len(es)+1, err)
		}
		es = append(es, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return es
}

// leaked reports whether a planted value survives in out: verbatim, or,
// for values of seven digits or more, as the same digits in any grouping
// once the tokens are taken out.
func leaked(out, value string) bool {
	if strings.Contains(out, value) {
		return true
	}
	if partLeaked(out, value) {
		return true
	}
	d := keep(value, clDigit, false)
	if len(d) < 7 {
		return false
	}
	return strings.Contains(keep(tokenPattern.ReplaceAllString(out, " "), clDigit, false), d)
}

// partLeaked reports whether a word of a name or street that says who or
// where (three letters or more, not a particle or a street type) survives
// on its own: "Maria [name:…]" leaks Maria van der Berg.
func partLeaked(out, value string) bool {
	out = tokenPattern.ReplaceAllString(out, " ")
	for _, w := range strings.FieldsFunc(value, func(r rune) bool { return r == ' ' || r == ',' }) {
		if utf8.RuneCountInString(w) < 3 || lookupWord(w)&(lxParticle|lxStreetEN|lxStreetFR|lxStreetDE) != 0 || strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			continue
		}
		for from := 0; ; {
			i := strings.Index(out[from:], w)
			if i < 0 {
				break
			}
			i += from
			before, _ := utf8.DecodeLastRuneInString(out[:i])
			after, _ := utf8.DecodeRuneInString(out[i+len(w):])
			if !unicode.IsLetter(before) && !unicode.IsLetter(after) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// tempts names the detector each kind of near miss could fool.
var tempts = map[string]string{
	"luhnfail": KindCard, "ean": KindCard, "epoch_ms": KindCard, "tracking": KindCard, "last4": KindCard,
	"ibanfail": KindIBAN, "sku": KindIBAN,
	"ssnbad": KindSSN, "isbn": KindSSN,
	"ipbad": KindIP, "dottedver": KindIP, "version": KindIP, "decimal": KindIP, "winbuild": KindIP,
	"handle":   KindEmail,
	"wkprefix": KindSecret, "sha": KindSecret, "sha256": KindSecret, "shortsha": KindSecret,
	"traceid": KindSecret, "uuid": KindSecret, "ulid": KindSecret, "reqid": KindSecret, "words_id": KindSecret,
	"order": KindPhone, "idnum": KindPhone, "amount": KindPhone, "date": KindPhone, "time": KindPhone,
	"ts": KindPhone, "epoch": KindPhone, "pct": KindPhone, "qty": KindPhone, "port": KindPhone,
	"duration": KindPhone, "zip": KindPhone, "room": KindPhone, "localnum": KindPhone, "httpcode": KindPhone,
}

type tally struct{ ok, total int }

func (t tally) rate() float64 { return float64(t.ok) / float64(t.total) }

// TestCorpus measures every detector on the corpus: recall is the share of
// planted values that do not survive, precision the share of the near
// misses that could fool it (tempts) that do. It fails below 99% recall
// or 98% precision for any detector, or 98% for any kind of near miss.
func TestCorpus(t *testing.T) {
	es := loadCorpus(t)
	if len(es) < 400 {
		t.Fatalf("corpus has %d entries, want at least 400", len(es))
	}
	r := New([]byte("corpus key"))
	recall, precision, byDetector := map[string]*tally{}, map[string]*tally{}, map[string]*tally{}
	count := func(m map[string]*tally, k string, ok bool) {
		if m[k] == nil {
			m[k] = &tally{}
		}
		m[k].total++
		if ok {
			m[k].ok++
		}
	}
	for _, e := range es {
		out := r.String(e.Text)
		if !utf8.ValidString(out) {
			t.Errorf("entry %d: output is not valid UTF-8", e.ID)
		}
		for _, p := range e.PII {
			ok := !leaked(out, p.Value)
			count(recall, p.Kind, ok)
			switch {
			case ok:
			case p.Kind == KindName || p.Kind == KindAddress:
				// Measured against a threshold below: names the named-entity
				// model misses are known (docs/redaction.md).
				t.Logf("entry %d: %s %q survived:\n  in:  %s\n  out: %s", e.ID, p.Kind, p.Value, e.Text, out)
			default:
				t.Errorf("entry %d: %s %q survived:\n  in:  %s\n  out: %s", e.ID, p.Kind, p.Value, e.Text, out)
			}
		}
		for _, k := range e.Keep {
			ok := strings.Contains(out, k.Value)
			count(precision, k.Kind, ok)
			d, known := tempts[k.Kind]
			if !known {
				t.Errorf("entry %d: near miss kind %s tempts no known detector", e.ID, k.Kind)
			}
			count(byDetector, d, ok)
			if !ok {
				t.Errorf("entry %d: near miss %s %q was redacted:\n  in:  %s\n  out: %s", e.ID, k.Kind, k.Value, e.Text, out)
			}
		}
	}
	t.Logf("%d entries\n%s", len(es), table("detector", "recall", recall)+table("detector", "precision", byDetector)+table("near miss", "kept", precision))
	for k, v := range recall {
		want := 0.99
		if k == KindName || k == KindAddress {
			want = 0.95
		}
		if v.rate() < want {
			t.Errorf("recall for %s is %.1f%%, want at least %.0f%%", k, 100*v.rate(), 100*want)
		}
	}
	for k, v := range byDetector {
		if v.rate() < 0.98 {
			t.Errorf("precision for %s is %.1f%%, want at least 98%%", k, 100*v.rate())
		}
	}
	for k, v := range precision {
		if v.rate() < 0.98 {
			t.Errorf("near misses of kind %s kept: %.1f%%, want at least 98%%", k, 100*v.rate())
		}
	}
}

func table(head, what string, m map[string]*tally) string {
	keys := make([]string, 0, len(m))
	all := tally{}
	for k, v := range m {
		keys = append(keys, k)
		all.ok += v.ok
		all.total += v.total
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "  %-10s %5s %9s\n", head, "n", what)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-10s %5d %8.1f%%\n", k, m[k].total, 100*m[k].rate())
	}
	fmt.Fprintf(&b, "  %-10s %5d %8.1f%%\n", "all", all.total, 100*all.rate())
	return b.String()
}

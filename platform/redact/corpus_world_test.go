package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func loadWorldCorpus(t testing.TB) []worldEntry {
	t.Helper()
	f, err := os.Open("testdata/corpus_world.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var es []worldEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e worldEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("world corpus line %d: %v", len(es)+1, err)
		}
		es = append(es, e)
	}
	return es
}

// worldLeaked reports whether a planted value, or one of its parts,
// survives in out.
func worldLeaked(out string, p worldPlanted) bool {
	if len(p.Parts) == 0 {
		return leaked(out, p.Value)
	}
	if strings.Contains(out, p.Value) {
		return true
	}
	for _, part := range p.Parts {
		if utf8.RuneCountInString(part) <= 3 {
			if wordIn(out, part) {
				return true
			}
			continue
		}
		if leaked(out, part) {
			return true
		}
	}
	return false
}

// wordIn reports whether w appears in s as a whole word.
func wordIn(s, w string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(w):])
		if !unicode.IsLetter(before) && !unicode.IsLetter(after) && !unicode.IsDigit(before) && !unicode.IsDigit(after) {
			return true
		}
		from = i + 1
	}
}

// worldChecksummed are the kinds with a published structure and a
// checksum: the aim is 99% recall on them.
var worldChecksummed = map[string]bool{"aadhaar": true, "cpf": true, "steuerid": true, "card_split": true, "iban_split": true}

// worldFloor holds the figures the detectors reached (issue 28), so that a
// regression fails: recall per kind, overall recall, the recall of the
// checksummed kinds, and the most clean values that may be redacted.
var worldFloor = struct {
	perKind             map[string]float64
	overall, checksum   float64
	falsePositiveMaxPct float64
}{
	perKind: map[string]float64{
		"aadhaar": 100, "cpf": 100, "steuerid": 100, "pan_in": 100, "ssn_bare": 100, "nino_lower": 100,
		"card_split": 100, "iban_split": 100, "phone_split": 100, "email_spelled": 100, "dob": 100,
		"name_arabic": 100, "name_cjk": 100, "name_common": 100, "name_cyrillic": 100, "name_lower": 100,
		"name_vietnamese": 91.6, "postcode_br": 100, "postcode_in": 100, "postcode_jp": 100,
		"street_br": 100, "street_in": 88.8, "street_jp": 100, "address_other": 91.6,
	},
	overall:             99.1,
	checksum:            100,
	falsePositiveMaxPct: 0,
}

// TestWorldCorpus measures recall per kind and per language on the world
// corpus and the share of clean values (brands, products, places,
// companies, ids, amounts) that are wrongly redacted, and fails when any
// figure falls below what the detectors reached (worldFloor).
func TestWorldCorpus(t *testing.T) {
	es := loadWorldCorpus(t)
	r := New([]byte("world corpus key"))
	byKind, byLang, keepKind := map[string]*tally{}, map[string]*tally{}, map[string]*tally{}
	count := func(m map[string]*tally, k string, ok bool) {
		if m[k] == nil {
			m[k] = &tally{}
		}
		m[k].total++
		if ok {
			m[k].ok++
		}
	}
	var all, sum, clean tally
	var cleanSentences, planted int
	for _, e := range es {
		var out string
		if e.Source == "json" {
			b, err := r.JSON([]byte(e.Text))
			if err != nil {
				t.Fatalf("entry %d: %v", e.ID, err)
			}
			out = string(b)
		} else {
			out = r.String(e.Text)
		}
		if len(e.PII) == 0 {
			cleanSentences++
		}
		for _, p := range e.PII {
			planted++
			ok := !worldLeaked(out, p)
			count(byKind, p.Kind, ok)
			count(byLang, e.Lang, ok)
			all.total++
			if ok {
				all.ok++
			}
			if worldChecksummed[p.Kind] {
				sum.total++
				if ok {
					sum.ok++
				}
			}
			if !ok && testing.Verbose() {
				t.Logf("entry %d: %s %q survived:\n  in:  %s\n  out: %s", e.ID, p.Kind, p.Value, e.Text, out)
			}
		}
		for _, k := range e.Keep {
			ok := strings.Contains(out, k.Value)
			count(keepKind, k.Kind, ok)
			clean.total++
			if ok {
				clean.ok++
			}
			if !ok && testing.Verbose() {
				t.Logf("entry %d: clean %s %q was redacted:\n  in:  %s\n  out: %s", e.ID, k.Kind, k.Value, e.Text, out)
			}
		}
	}
	fp := 100 * float64(clean.total-clean.ok) / float64(max(clean.total, 1))
	t.Logf("%d entries, %d planted values, %d clean sentences, %d clean values\n%s%s%s"+
		"  recall overall %.1f%% (%d/%d), checksummed kinds %.1f%% (%d/%d); clean values redacted %.2f%% (%d/%d)",
		len(es), planted, cleanSentences, clean.total,
		table("kind", "recall", byKind), table("language", "recall", byLang), table("clean kind", "kept", keepKind),
		100*all.rate(), all.ok, all.total, 100*sum.rate(), sum.ok, sum.total, fp, clean.total-clean.ok, clean.total)
	if planted < 1000 || cleanSentences < 500 {
		t.Errorf("the world corpus has %d planted values and %d clean sentences, want at least 1000 and 500", planted, cleanSentences)
	}
	for k, want := range worldFloor.perKind {
		if got := byKind[k]; got == nil || 100*got.rate() < want {
			t.Errorf("recall for %s fell below %.1f%%: %s", k, want, fmtTally(got))
		}
	}
	if 100*all.rate() < worldFloor.overall {
		t.Errorf("overall recall %.1f%%, want at least %.1f%%", 100*all.rate(), worldFloor.overall)
	}
	if 100*sum.rate() < worldFloor.checksum {
		t.Errorf("recall on checksummed kinds %.1f%%, want at least %.1f%%", 100*sum.rate(), worldFloor.checksum)
	}
	if fp > worldFloor.falsePositiveMaxPct {
		t.Errorf("%.2f%% of clean values redacted, want at most %.2f%%", fp, worldFloor.falsePositiveMaxPct)
	}
}

func fmtTally(t *tally) string {
	if t == nil {
		return "none measured"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*t.rate(), t.ok, t.total)
}

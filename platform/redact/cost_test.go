package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// addressLines are street lines of the kinds the address detector reads.
var addressLines = []string{
	"14 Harbour Street, Bristol BS1 4QA, United Kingdom",
	"Kastanienallee 21, 10435 Berlin, Germany",
	"Prinsengracht 263, 1016 GV Amsterdam, Netherlands",
	"7 Marlborough Road, Manchester M20 6TP, United Kingdom",
	"18 rue des Lilas, 69003 Lyon, France",
	"Calle de Alcalá 45, 28014 Madrid, Spain",
	"22 Grafton Street, Dublin 2, D02 HX65, Ireland",
	"Mariahilfer Straße 88, 1070 Wien, Austria",
	"1600 Pennsylvania Avenue NW, Washington, DC 20500",
	"Ship to Maria Gonzalez, 742 Evergreen Terrace, Springfield, IL 62704",
}

// repeatTo is units joined by sep, repeated to n bytes.
func repeatTo(n int, sep string, units ...string) string {
	var b strings.Builder
	b.Grow(n + 256)
	for i := 0; b.Len() < n; i++ {
		b.WriteString(units[i%len(units)])
		b.WriteString(sep)
	}
	return b.String()[:n]
}

// costShape makes n bytes of one kind of text.
type costShape struct {
	name string
	make func(t testing.TB, n int) string
}

// costShapes are the texts whose cost must grow linearly: address-like
// prompts in lines and in one long line (a JSON document's escaped line
// breaks make one line of everything), PII-dense corpus text, text that
// is mostly tokens already, and the hostile patterns of BenchmarkWorstCase.
func costShapes() []costShape {
	shapes := []costShape{
		{"addresses-lines", func(_ testing.TB, n int) string { return repeatTo(n, "\n", addressLines...) }},
		{"addresses-one-line", func(_ testing.TB, n int) string { return repeatTo(n, "; ", addressLines...) }},
		{"addresses-json-escaped", func(_ testing.TB, n int) string { return repeatTo(n, `\n`, addressLines...) }},
		{"corpus-lines", func(t testing.TB, n int) string { return repeatTo(n, "\n", corpusTexts(t)...) }},
		{"corpus-one-line", func(t testing.TB, n int) string {
			return strings.ReplaceAll(repeatTo(n, " | ", corpusTexts(t)...), "\n", " ")
		}},
		{"tokens", func(t testing.TB, n int) string {
			// Redacted text with a national insurance number between the
			// tokens: every pass meets thousands of tokens, and the plugged
			// detector's matches fall between them.
			red := New(testKey).String(strings.ReplaceAll(strings.Join(corpusTexts(t)[:200], " "), "\n", " "))
			return repeatTo(n, " QQ123456C ", red[:4096], "AB 12 34 56 C", red[4096:8192])
		}},
	}
	for _, u := range []string{"sk-", "1 ", `password:"`, "[a:", "a@", "Aaaaaaaaaa Bbbbbbbbbb ", "1 Aa Road ", "-----BEGIN RSA PRIVATE KEY-----"} {
		shapes = append(shapes, costShape{"repeat " + u, func(_ testing.TB, n int) string { return repeatTo(n, "", u) }})
	}
	return shapes
}

var corpusCache []string

func corpusTexts(t testing.TB) []string {
	if corpusCache == nil {
		for _, e := range loadCorpus(t) {
			corpusCache = append(corpusCache, e.Text)
		}
	}
	return corpusCache
}

// work is the meter's count for redacting s once.
func work(r *Redactor, s string) int64 {
	meter.n.Store(0)
	meter.on.Store(true)
	defer meter.on.Store(false)
	r.String(s)
	return meter.n.Load()
}

// TestWorkGrowsLinearly: sixteen times the text is at most sixteen times
// the work, give or take a fifth, for every shape of text — counted by the
// redactor's work meter (bytes each pass reads, line breaks indexed,
// matches merged, bytes checked around a token, words shown to the
// model), not timed. The passes after the first used to search from each
// token to the end of its line: on one long line that was quadratic, and
// a 1 MB address list took seconds of CPU.
func TestWorkGrowsLinearly(t *testing.T) {
	small, large := 64<<10, 1<<20
	if raceEnabled {
		small, large = 16<<10, 256<<10
	}
	r := New(testKey)
	for _, sh := range costShapes() {
		ws, wl := work(r, sh.make(t, small)), work(r, sh.make(t, large))
		ratio := float64(wl) / float64(max(ws, 1))
		t.Logf("%-24s %8d units at %d KiB, %9d at %d KiB: ×%.1f", sh.name, ws, small>>10, wl, large>>10, ratio)
		if ratio > 16*1.2 {
			t.Errorf("%s: %d times the text costs %.1f times the work (%d → %d units), want at most 19.2",
				sh.name, large/small, ratio, ws, wl)
		}
	}
}

// BenchmarkStringCost redacts each shape of text at 64 KiB, 256 KiB and
// 1 MiB; ns/B stays flat when the cost is linear.
func BenchmarkStringCost(b *testing.B) {
	r := New(testKey)
	r.String("load the model first: I met Bartholomew Quigley")
	for _, sh := range costShapes() {
		for _, n := range []int{64 << 10, 256 << 10, 1 << 20} {
			text := sh.make(b, n)
			b.Run(fmt.Sprintf("%s/%dKiB", sh.name, n>>10), func(b *testing.B) {
				reportCPU(b, len(text), func() { r.String(text) })
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(text)), "ns/B")
			})
		}
	}
}

// plantedLines are lines with values that must never come out in the
// clear, wherever a long text is cut.
var plantedLines = []string{
	"Refund to card 4111 1111 1111 1111 for mia.wong@example.net, phone +44 20 7946 0958",
	"IBAN GB82 WEST 1234 5698 7654 32, customer Siobhan O'Sullivan, 14 Harbour Street, Bristol BS1 4QA",
}

var clearValues = []string{"4111 1111 1111 1111", "mia.wong@example.net", "7946 0958", "GB82 WEST", "O'Sullivan", "Harbour Street", "BS1 4QA"}

func inClear(out string) []string {
	var got []string
	for _, v := range clearValues {
		if strings.Contains(out, v) {
			got = append(got, v)
		}
	}
	return got
}

// TestLongTextIsBounded: a text longer than MaxText costs no more work
// than MaxText of it, comes out at most MaxText long, redacted up to a
// line break near MaxText and the rest replaced by one "omitted" token,
// with no value in the clear — also the one the cut falls in the middle
// of — and redacting the result again gives it back.
func TestLongTextIsBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("reads 8 MB several times; the race detector makes that minutes")
	}
	r := New(testKey)
	lines := repeatTo(8<<20, "\n", append(append([]string{}, addressLines...), plantedLines...)...)
	// The line the cut would fall in: a card number across MaxText.
	straddle := []byte(lines)
	copy(straddle[MaxText-200:], strings.Repeat("x", 200))
	copy(straddle[MaxText-10:], " card 4111 1111 1111 1111 ")
	oneLine := strings.ReplaceAll(lines, "\n", " ")

	for _, tt := range []struct {
		name, text string
		whole      bool // the text has no line break to cut at
	}{
		{"lines", lines, false},
		{"a value across the bound", string(straddle), false},
		{"one line", oneLine, true},
	} {
		wl, wm := work(r, tt.text), work(r, tt.text[:MaxText])
		out := r.String(tt.text)
		tok := r.omitted(tt.text)
		switch {
		case len(out) > MaxText || !strings.HasSuffix(out, tok):
			t.Errorf("%s: %d bytes ending %q, want at most MaxText ending in %s", tt.name, len(out), out[max(0, len(out)-40):], tok)
		case tt.whole && out != tok:
			t.Errorf("%s: %d bytes, want the one token %s", tt.name, len(out), tok)
		case !tt.whole && len(out) < MaxText-2*maxCutBack:
			t.Errorf("%s: kept %d bytes, want the text up to a line break near MaxText", tt.name, len(out))
		}
		if l := inClear(out); len(l) > 0 {
			t.Errorf("%s: left %q in the clear", tt.name, l)
		}
		if tt.name == "a value across the bound" {
			// Cut at MaxText itself, the card's first digits would be
			// readable: too few to be a card.
			if naive := r.String(tt.text[:MaxText]); !strings.HasSuffix(naive, "card 4111") {
				t.Fatalf("the test's card does not straddle the bound: %q", naive[len(naive)-40:])
			}
			if strings.Contains(out, "card 4111") {
				t.Errorf("%s: the card across the bound is partly in the clear", tt.name)
			}
		}
		if again := r.String(out); again != out {
			t.Errorf("%s: redacting the result again changed it", tt.name)
		}
		if float64(wl) > 1.1*float64(wm) {
			t.Errorf("%s: 8 MiB cost %d units, MaxText of it %d; want no more", tt.name, wl, wm)
		}
	}
}

// TestLongJSONIsBounded: a JSON document's free text is redacted up to
// MaxText in all; the strings after it are replaced whole by "omitted"
// tokens, and the document stays valid JSON with nothing in the clear.
func TestLongJSONIsBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("reads 4 MB; the race detector makes that minutes")
	}
	r := New(testKey)
	var doc strings.Builder
	doc.WriteString(`{"messages":[`)
	for i := 0; doc.Len() < 4<<20; i++ {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"role":"user","content":%q}`, addressLines[i%len(addressLines)]+". "+plantedLines[i%len(plantedLines)])
	}
	doc.WriteString(`]}`)
	meter.n.Store(0)
	meter.on.Store(true)
	out, err := r.JSON([]byte(doc.String()))
	meter.on.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	wl, wm := meter.n.Load(), work(r, repeatTo(MaxText, "\n", plantedLines...))
	if !json.Valid(out) || !strings.Contains(string(out), "[omitted:") {
		t.Fatalf("JSON of 4 MiB = %d bytes, valid %v, want valid with omitted strings", len(out), json.Valid(out))
	}
	if l := inClear(string(out)); len(l) > 0 {
		t.Errorf("left %q in the clear", l)
	}
	if float64(wl) > 1.5*float64(wm) {
		t.Errorf("4 MiB of JSON cost %d units, MaxText of free text %d; want about the same", wl, wm)
	}
}

// worldAddressLines are addresses and values of the detectors added for
// issue 28: Brazilian, Indian and Japanese addresses, written-out e-mail
// addresses, CJK names, identity numbers with checksums.
var worldAddressLines = []string{
	"Entregar em Rua das Flores, 123 - Centro, São Paulo - SP, CEP 01310-100",
	"Deliver to H.No. 8-2-293, Banjara Hills, Hyderabad - 500034, Telangana",
	"Flat 12B, Sunrise Apartments, 45 MG Road, Bengaluru, Karnataka 560001",
	"〒150-0001 東京都渋谷区神宮前1-2-3　山田太郎様",
	"1-2-3 Jingumae, Shibuya-ku, Tokyo 150-0001, Japan",
	"ul. Marszałkowska 10, 00-590 Warszawa; Drottninggatan 5, 111 51 Stockholm",
	"write to jane dot doe at example dot co dot uk or ana arroba correo punto es",
	"客户王伟要求退款，收件人：李娜。Aadhaar 2345 6789 0124, CPF 123.456.789-09, PAN ABCPE1234F",
	"Клиент Иван Петров, дата рождения 12 марта 1988 г.; 12/03/1988 (date of birth)",
	"Refund approved for Will Page; ship the Hugo Boss suit from Osaka Kansai via Royal Mail",
}

// TestWorkGrowsLinearlyWorld: four times the text (256 KiB → 1 MiB) is at
// most four times the work, give or take a fifth, on address-like and
// other text that the detectors of issue 28 read: in lines, in one line
// and joined by JSON's escaped line breaks. Counted by the work meter,
// not timed.
func TestWorkGrowsLinearlyWorld(t *testing.T) {
	small, large := 256<<10, 1<<20
	if raceEnabled {
		small, large = 32<<10, 128<<10
	}
	r := New(testKey)
	for _, sh := range []costShape{
		{"world-lines", func(_ testing.TB, n int) string { return repeatTo(n, "\n", worldAddressLines...) }},
		{"world-one-line", func(_ testing.TB, n int) string { return repeatTo(n, "; ", worldAddressLines...) }},
		{"world-json-escaped", func(_ testing.TB, n int) string { return repeatTo(n, `\n`, worldAddressLines...) }},
		{"addresses-one-line", func(_ testing.TB, n int) string { return repeatTo(n, "; ", addressLines...) }},
		{"repeat at dot", func(_ testing.TB, n int) string { return repeatTo(n, "", "a dot b at ") }},
		{"repeat cjk cue", func(_ testing.TB, n int) string { return repeatTo(n, "", "客户王伟様") }},
		{"repeat block", func(_ testing.TB, n int) string { return repeatTo(n, "", "神宮前1-2-3") }},
	} {
		ws, wl := work(r, sh.make(t, small)), work(r, sh.make(t, large))
		ratio := float64(wl) / float64(max(ws, 1))
		t.Logf("%-20s %9d units at %d KiB, %9d at %d KiB: ×%.2f", sh.name, ws, small>>10, wl, large>>10, ratio)
		if ratio > 4*1.2 {
			t.Errorf("%s: %d times the text costs %.1f times the work (%d → %d units), want at most 4.8",
				sh.name, large/small, ratio, ws, wl)
		}
	}
}

package redact

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchText is realistic trace text: log lines, JSON tool arguments and
// support tickets, about one value in ten lines, built from the corpus.
func benchText(b *testing.B) string {
	var sb strings.Builder
	for _, e := range loadCorpus(b) {
		sb.WriteString(e.Text)
		sb.WriteByte('\n')
		// Most trace lines carry no personal data at all.
		for range 9 {
			sb.WriteString(cleanLines[sb.Len()%len(cleanLines)])
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

var cleanLines = []string{
	`time=2026-11-30T14:32:05.123Z level=INFO msg="journey completed" request_id=req_01HZY3KQ8V2J6G1T4N5P7R9W0X skill=refund status=completed latency=245ms tokens_in=1532 tokens_out=211`,
	`{"tool":"lookup_order","arguments":{"order_id":"ORD-2024-00917","include":["items","shipments"]},"result":{"status":"shipped","items":3,"total_minor":240000,"currency":"USD"}}`,
	`The customer asked why their order has not arrived yet. I checked the shipment status and it is still in transit; the carrier expects delivery within two business days.`,
	`level=debug msg="cache hit" key=skill:refund:v12 ttl=300s size=2048 hit_ratio=0.97`,
	`Der Kunde möchte wissen, wann die Lieferung ankommt. Ich habe den Status geprüft: unterwegs, Zustellung voraussichtlich übermorgen.`,
	`{"role":"assistant","content":"I can help with that. Could you confirm which order you mean, and whether you want a refund or a replacement?"}`,
	`2026-11-30 14:32:05,123 INFO  router: routed to skill=refund score=0.91 alternatives=[exchange:0.42, faq:0.13] release=sha256:9f86d081884c7d65`,
	`お問い合わせありがとうございます。ご注文の商品は現在配送中です。到着まで今しばらくお待ちください。`,
}

// BenchmarkString is redaction of realistic mixed trace text.
func BenchmarkString(b *testing.B) {
	text := benchText(b)
	for _, ner := range []bool{true, false} {
		b.Run(fmt.Sprintf("ner=%v", ner), func(b *testing.B) {
			r := New(testKey, WithNER(ner))
			r.String("load the model first: I met Bartholomew Quigley")
			calls := nerCalls.Load()
			reportCPU(b, len(text), func() { r.String(text) })
			b.ReportMetric(float64(nerCalls.Load()-calls)/float64(b.N), "ner-calls/op")
		})
	}
}

// BenchmarkStringLines is the same text redacted one line at a time, as a
// logger calls it.
func BenchmarkStringLines(b *testing.B) {
	lines := strings.Split(benchText(b), "\n")
	r := New(testKey)
	r.String("load the model first: I met Bartholomew Quigley")
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	reportCPU(b, n, func() {
		for _, l := range lines {
			r.String(l)
		}
	})
}

// BenchmarkPrefilter shows what the pre-filter and the scanner cost on
// clean prose (no digit, '@', ':' or '='), on clean log lines (which pass
// the pre-filter and are scanned), and on PII-dense text, with the
// pre-filter on and off.
func BenchmarkPrefilter(b *testing.B) {
	prose := strings.Repeat("The customer asked why their order has not arrived yet and whether a refund is possible. ", 50)
	logs := strings.Repeat(cleanLines[0]+"\n"+cleanLines[3]+"\n", 10)
	var dense strings.Builder
	for _, e := range loadCorpus(b)[:60] {
		dense.WriteString(e.Text)
		dense.WriteByte('\n')
	}
	for _, c := range []struct {
		name string
		text string
	}{{"prose", prose}, {"logs", logs}, {"dense", dense.String()}} {
		for _, on := range []bool{true, false} {
			name := c.name + "/prefilter=on"
			if !on {
				name = c.name + "/prefilter=off"
			}
			b.Run(name, func(b *testing.B) {
				r := New(testKey)
				r.noPrefilter = !on
				reportCPU(b, len(c.text), func() { r.String(c.text) })
			})
		}
	}
}

func BenchmarkJSON(b *testing.B) {
	doc := []byte(`{"tool":"update_customer","args":{"customer_id":"3f2504e0-4f89-11d3-9a0c-0305e82c3301","phone":"+44 20 7946 0958","email":"jane@example.com","iban":"DE89 3704 0044 0532 0130 00","note":"called about order ORD-2024-00917, refund $2,400.00 approved","items":[{"sku":"SKU-4471-BLK-XL","qty":2,"price_minor":120000}],"updated_at":"2026-11-30T14:32:05Z"}}`)
	r := New(testKey)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.JSON(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHandler(b *testing.B) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), New(testKey)))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		log.Info("journey completed", "request_id", "req_01HZY3KQ8V2J6G1T4N5P7R9W0X", "skill", "refund",
			"customer", "jane@example.com", "latency_ms", 245, "note", "refund to card ending 9182 approved")
	}
}

// BenchmarkWorstCase is hostile input: patterns that make a careless
// scanner quadratic. Each is 200 KB.
func BenchmarkWorstCase(b *testing.B) {
	for _, c := range []struct{ name, unit string }{
		{"sk", "sk-"}, {"jwt", "eyJ-"}, {"wk", "wk_-"}, {"digits", "1 "}, {"quote", `password:"`},
		{"dots", "x."}, {"brackets", "[a:"}, {"at", "a@"}, {"names", "Aaaaaaaaaa Bbbbbbbbbb "}, {"streets", "1 Aa Road "},
	} {
		text := strings.Repeat(c.unit, 200_000/len(c.unit)) + " 1"
		b.Run(c.name, func(b *testing.B) {
			r := New(testKey)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.String(text)
			}
		})
	}
}

// BenchmarkProse is clean prose with capitalised words in it (names of
// products, places, weekdays; sentence starts), which the pre-filter of
// the byte-level detectors passes but the name detector must read.
func BenchmarkProse(b *testing.B) {
	text := strings.Repeat("The customer asked why the Jordan sneakers from order ORD-2024-00917 have not arrived in Berlin yet. "+
		"On Monday the carrier said the Ford Transit parts were delayed. Unfortunately Greater Manchester is snowed in. "+
		"Der Kunde möchte wissen, wann die Lieferung nach München ankommt. ", 20)
	r := New(testKey)
	reportCPU(b, len(text), func() { r.String(text) })
}

// BenchmarkDensePII is text with a name, an address, a date of birth or
// an identity number in every line: the corpus's entries made for them.
func BenchmarkDensePII(b *testing.B) {
	var sb strings.Builder
	for _, e := range loadCorpus(b) {
		for _, p := range e.PII {
			if p.Kind == KindName || p.Kind == KindAddress || p.Kind == KindDOB || p.Kind == KindID {
				sb.WriteString(e.Text)
				sb.WriteByte('\n')
				break
			}
		}
	}
	text := sb.String()
	for _, ner := range []bool{true, false} {
		b.Run(fmt.Sprintf("ner=%v", ner), func(b *testing.B) {
			r := New(testKey, WithNER(ner))
			reportCPU(b, len(text), func() { r.String(text) })
		})
	}
}

// BenchmarkJourney is the redaction one journey does: its input, its
// correlation id, a tool call's arguments and result, its output and an
// action's summary, at 200 journeys a second. It reports the 50th and
// 99th percentile of the time one journey spends redacting, with the
// named-entity layer on and off.
func BenchmarkJourney(b *testing.B) {
	inputs := []string{
		"Please change the delivery address for ORD-1001 to 14 Harbour Road, BS3 4QA. The customer is Siobhan O'Sullivan.",
		"Refund ORD-1005: Dmitri Carvalho (date of birth 04/03/1946), passport 568193036 on file",
		"Where is my order ORD-1003? It was supposed to arrive on Monday.",
		"I spoke to Bartholomew Quigley about ORD-1002; please refund the Ford Transit parts, $45.50.",
		"Bitte Adresse für ORD-1004 ändern: Lindenstraße 12, 10115 Berlin. Kundin Jürgen Müller-Lüdenscheidt.",
	}
	args := `{"order_id":"ORD-1001","address":"14 Harbour Road, BS3 4QA","note":"customer Siobhan O'Sullivan asked for a change"}`
	result := `{"status":"accepted","order":{"id":"ORD-1001","customer":"Siobhan O'Sullivan","items":[{"sku":"SKU-4471-BLK-XL","qty":1}],"total_minor":4550}}`
	for _, ner := range []bool{true, false} {
		b.Run(fmt.Sprintf("ner=%v", ner), func(b *testing.B) {
			r := New(testKey, WithNER(ner))
			r.String("warm up the model: Kwame Mensah")
			var lat []time.Duration
			tick := time.NewTicker(5 * time.Millisecond) // 200 journeys/s
			defer tick.Stop()
			i := 0
			for b.Loop() {
				<-tick.C
				in := inputs[i%len(inputs)]
				i++
				start := time.Now()
				r.String(in)
				r.String("case " + in[:20])
				r.JSON([]byte(args))
				r.JSON([]byte(result))
				r.String("Changed the delivery address of ORD-1001 as asked. " + in)
				r.String("Refund $45.50 to the original payment method for " + in)
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

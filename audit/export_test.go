package audit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

var exportFormats = []string{audit.FormatJSONL, audit.FormatCSV}

// selects is the test's own reading of a query: which stored rows it
// keeps.
func selects(q audit.Query, r row) bool {
	tm, _ := time.Parse(audit.TimeFormat, r.Time)
	return (q.Tenant == "" || r.Tenant == q.Tenant) &&
		(q.ActorID == "" || r.ActorID == q.ActorID) &&
		(q.Verb == "" || r.Verb == q.Verb || strings.HasSuffix(q.Verb, ".") && strings.HasPrefix(r.Verb, q.Verb)) &&
		(q.SubjectType == "" || r.SubjectType == q.SubjectType) &&
		(q.SubjectID == "" || r.SubjectID == q.SubjectID) &&
		(q.Since.IsZero() || !tm.Before(q.Since)) &&
		(q.Until.IsZero() || tm.Before(q.Until))
}

func TestExportWritesEveryFieldAndVerifies(t *testing.T) {
	db := openDB(t)
	evs := appendTricky(t, db, 14)
	stored := readRows(t, db.Read())
	tests := []struct {
		name       string
		q          audit.Query
		unfiltered bool
	}{
		{"whole chain", audit.Query{}, true},
		{"a period", audit.Query{Since: evs[3].Time, Until: evs[9].Time}, true},
		{"a tenant", audit.Query{Tenant: "acme"}, false},
		{"a verb prefix", audit.Query{Verb: "action."}, false},
		{"an exact verb in a period", audit.Query{Verb: "auth.login", Since: evs[1].Time}, false},
		{"a formula-like actor", audit.Query{ActorID: "-2"}, false},
		{"a subject", audit.Query{SubjectType: "action", SubjectID: `say "hi", then leave`}, false},
		{"no match", audit.Query{Tenant: "initech"}, false},
		{"an empty period", audit.Query{Since: evs[13].Time.Add(time.Hour)}, true},
	}
	for _, tt := range tests {
		for _, format := range exportFormats {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				var want []row
				for _, r := range stored {
					if selects(tt.q, r) {
						want = append(want, r)
					}
				}
				data, m := exportOf(t, db, tt.q, format)

				got := parseExport(t, data, format)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("exported rows = %+v\nwant the stored rows %+v", got, want)
				}
				sum := sha256.Sum256(data)
				if m.SHA256 != hex.EncodeToString(sum[:]) {
					t.Errorf("manifest sha256 = %s, want the file's %x", m.SHA256, sum)
				}
				wantM := audit.Manifest{
					Version: audit.ExportVersion, Format: format, Rows: int64(len(want)),
					SHA256: m.SHA256, CreatedAt: "2025-06-02T08:00:00.000000000Z",
					Unfiltered: tt.unfiltered, Contiguous: tt.unfiltered,
					PublicKey: testSigner().PublicKeyText(), Signature: m.Signature,
					Filters: audit.ExportFilters{Tenant: tt.q.Tenant, Actor: tt.q.ActorID, Verb: tt.q.Verb,
						SubjectType: tt.q.SubjectType, SubjectID: tt.q.SubjectID},
				}
				if !tt.q.Since.IsZero() {
					wantM.Filters.Since = tt.q.Since.UTC().Format(audit.TimeFormat)
				}
				if !tt.q.Until.IsZero() {
					wantM.Filters.Until = tt.q.Until.UTC().Format(audit.TimeFormat)
				}
				if len(want) > 0 {
					wantM.FirstSeq, wantM.StartHash = want[0].Seq, want[0].PrevHash
					wantM.LastSeq, wantM.EndHash = want[len(want)-1].Seq, want[len(want)-1].Hash
				}
				if m != wantM {
					t.Errorf("manifest = %+v\nwant %+v", m, wantM)
				}

				rep, err := audit.VerifyExport(bytes.NewReader(data), m, testSigner().PublicKey())
				if err != nil || !rep.OK() || rep.Rows != int64(len(want)) || rep.Continuity != tt.unfiltered ||
					rep.KeyFromManifest || rep.Key != testSigner().PublicKeyText() || rep.Format != format {
					t.Errorf("VerifyExport = %+v, %v; want verified, %d rows, continuity %v, with the given key",
						rep, err, len(want), tt.unfiltered)
				}
				rep, err = audit.VerifyExport(bytes.NewReader(data), m, nil)
				if err != nil || !rep.OK() || !rep.KeyFromManifest || rep.Key != m.PublicKey {
					t.Errorf("VerifyExport without a key = %+v, %v; want verified with the manifest's key", rep, err)
				}
			})
		}
	}
}

func TestExportRefusesBadInput(t *testing.T) {
	db := openDB(t)
	var buf bytes.Buffer
	for _, tt := range []struct {
		name   string
		q      audit.Query
		format string
		signer *audit.Signer
	}{
		{"unknown format", audit.Query{}, "xlsx", testSigner()},
		{"no signer", audit.Query{}, audit.FormatCSV, nil},
		{"control character in a filter", audit.Query{Tenant: "acme\n"}, audit.FormatJSONL, testSigner()},
		{"overlong filter", audit.Query{SubjectID: strings.Repeat("x", audit.MaxFieldBytes+1)}, audit.FormatJSONL, testSigner()},
	} {
		if _, err := audit.Export(context.Background(), db.Read(), tt.q, tt.format, nil, &buf, tt.signer, exportNow); err == nil {
			t.Errorf("%s: Export succeeded, want an error", tt.name)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("refused exports wrote %q", buf.String())
	}
}

// TestExportTamperingIsDetected changes an export or its manifest the ways
// someone hiding something would, and expects VerifyExport to notice,
// naming the row where there is one.
func TestExportTamperingIsDetected(t *testing.T) {
	db := openDB(t)
	appendTricky(t, db, 12)

	type tampered struct {
		data []byte
		m    audit.Manifest
	}
	// rowsOf splits an export into its header (CSV) and its row lines.
	rowsOf := func(data []byte, format string) (head []byte, rows [][]byte) {
		ls := lines(data)
		if format == audit.FormatCSV {
			return ls[0], ls[1:]
		}
		return nil, ls
	}
	join := func(head []byte, rows [][]byte) []byte {
		return append(slices.Clone(head), bytes.Join(rows, nil)...)
	}
	resign := func(m audit.Manifest, s *audit.Signer, ownKey bool) audit.Manifest {
		if ownKey {
			m.PublicKey = s.PublicKeyText()
		}
		m.Signature = base64.StdEncoding.EncodeToString(s.Sign(m.SignedBytes()))
		return m
	}
	type tamper struct {
		name string
		do   func(data []byte, m audit.Manifest, format string) tampered
		// wantRow is the row the report must name in an unfiltered and a
		// filtered export: anyRow, 0 for none, or noCheck.
		wantRow  [2]int64
		wantText string
	}
	const anyRow, noCheck = -1, -2
	tampers := []tamper{
		{"a byte of a row changed", func(data []byte, m audit.Manifest, format string) tampered {
			head, rows := rowsOf(data, format)
			rows[2] = bytes.Replace(rows[2], []byte(`action`), []byte(`actiom`), 1)
			return tampered{join(head, rows), m}
		}, [2]int64{3, 3}, "hash does not match"},
		{"a row dropped", func(data []byte, m audit.Manifest, format string) tampered {
			head, rows := rowsOf(data, format)
			return tampered{join(head, slices.Delete(rows, 2, 3)), m}
		}, [2]int64{3, 0}, ""},
		{"the last row dropped", func(data []byte, m audit.Manifest, format string) tampered {
			head, rows := rowsOf(data, format)
			return tampered{join(head, rows[:len(rows)-1]), m}
		}, [2]int64{0, 0}, "rows were removed"},
		{"two rows swapped", func(data []byte, m audit.Manifest, format string) tampered {
			head, rows := rowsOf(data, format)
			rows[2], rows[3] = rows[3], rows[2]
			return tampered{join(head, rows), m}
		}, [2]int64{3, 4}, ""},
		{"a row repeated", func(data []byte, m audit.Manifest, format string) tampered {
			head, rows := rowsOf(data, format)
			return tampered{join(head, append(rows, rows[len(rows)-1])), m}
		}, [2]int64{anyRow, anyRow}, "more rows"},
		{"a blank line added", func(data []byte, m audit.Manifest, format string) tampered {
			return tampered{append(slices.Clone(data), "\r\n"...), m}
		}, [2]int64{noCheck, noCheck}, ""},
		{"the manifest's row count lowered with the last row dropped", func(data []byte, m audit.Manifest, format string) tampered {
			head, rows := rowsOf(data, format)
			m.Rows--
			return tampered{join(head, rows[:len(rows)-1]), m}
		}, [2]int64{0, 0}, "signature does not verify"},
		{"the manifest's filters edited", func(data []byte, m audit.Manifest, format string) tampered {
			m.Filters.Tenant = "globex"
			return tampered{data, m}
		}, [2]int64{0, 0}, "signature does not verify"},
		{"the manifest's file hash replaced", func(data []byte, m audit.Manifest, format string) tampered {
			data = append(slices.Clone(data), data[len(data)-1])
			sum := sha256.Sum256(data)
			m.SHA256 = hex.EncodeToString(sum[:])
			return tampered{data, m}
		}, [2]int64{0, 0}, "signature does not verify"},
		{"re-signed with another key", func(data []byte, m audit.Manifest, format string) tampered {
			return tampered{data, resign(m, otherSigner(), false)}
		}, [2]int64{0, 0}, "signature does not verify"},
		{"the last row dropped and the manifest re-signed with another key and its public key", func(data []byte, m audit.Manifest, format string) tampered {
			head, rows := rowsOf(data, format)
			data = join(head, rows[:len(rows)-1])
			sum := sha256.Sum256(data)
			m.SHA256, m.Rows = hex.EncodeToString(sum[:]), m.Rows-1
			return tampered{data, resign(m, otherSigner(), true)}
		}, [2]int64{0, 0}, "signature does not verify"},
	}

	exports := []struct {
		name string
		q    audit.Query
	}{
		{"unfiltered", audit.Query{}},
		{"filtered", audit.Query{Verb: "action."}},
	}
	for _, ex := range exports {
		for _, format := range exportFormats {
			data, m := exportOf(t, db, ex.q, format)
			if m.Rows < 5 {
				t.Fatalf("%s export has %d rows; the tampering needs 5", ex.name, m.Rows)
			}
			for _, tp := range tampers {
				t.Run(ex.name+"/"+format+"/"+tp.name, func(t *testing.T) {
					tm := tp.do(slices.Clone(data), m, format)
					if bytes.Equal(tm.data, data) && tm.m == m {
						t.Fatal("the tampering changed nothing")
					}
					rep, err := audit.VerifyExport(bytes.NewReader(tm.data), tm.m, testSigner().PublicKey())
					if err != nil || rep.OK() {
						t.Fatalf("VerifyExport = %+v, %v; want a problem", rep, err)
					}
					want := tp.wantRow[0]
					if !reflect.DeepEqual(ex.q, audit.Query{}) {
						want = tp.wantRow[1]
					}
					if want >= 0 && rep.Row != want || want == anyRow && rep.Row == 0 {
						t.Errorf("report names row %d (%s), want row %d", rep.Row, rep.Problem, want)
					}
					if !strings.Contains(rep.Problem, tp.wantText) {
						t.Errorf("problem = %q, want it to say %q", rep.Problem, tp.wantText)
					}
				})
			}
			// The careful forger's manifest verifies only against its own
			// key, and the report says whose key that was.
			t.Run(ex.name+"/"+format+"/forger's own key", func(t *testing.T) {
				forged := resign(m, otherSigner(), true)
				rep, err := audit.VerifyExport(bytes.NewReader(data), forged, nil)
				if err != nil || !rep.OK() || !rep.KeyFromManifest || rep.Key != otherSigner().PublicKeyText() {
					t.Errorf("VerifyExport(forged, no key) = %+v, %v; want verified with the manifest's (forger's) key, said so", rep, err)
				}
			})
		}
	}
}

// TestExportCSVRoundTrip reads a CSV export back with encoding/csv and
// gets every stored value, including commas, quotes, newlines, tabs and
// formula-like cells, whose guard is a single leading '.
func TestExportCSVRoundTrip(t *testing.T) {
	db := openDB(t)
	appendTricky(t, db, 8)
	// Rows Warden does not write (control characters), appended with
	// valid hashes by someone with the database file: an export must
	// carry them faithfully all the same.
	raw := tamperer(t, db)
	prev := readRows(t, raw)
	last := prev[len(prev)-1]
	for i, odd := range []row{
		{ActorID: "line one\nline two", SubjectID: "\ttabbed", Tenant: "=cmd|' /C calc'!A0"},
		{ActorID: "+\n=", SubjectID: "''twice", Tenant: "@tenant"},
	} {
		odd.Seq, odd.Time, odd.ActorType, odd.Verb, odd.SubjectType = last.Seq+1, "2025-06-01T09:30:0"+string(rune('0'+i))+".000000000Z", "principal", "auth.login", "action"
		odd.Details, odd.PrevHash = `{"csv":"a,\"b\"\n"}`, last.Hash
		odd.Hash = docHash(odd)
		insertRow(t, raw, odd)
		last = odd
	}
	stored := readRows(t, raw)

	data, m := exportOf(t, db, audit.Query{}, audit.FormatCSV)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	guarded := 0
	for i, rec := range recs[1:] {
		r := stored[i]
		for j, v := range []string{"", r.Time, r.ActorType, r.ActorID, "", "", r.Tenant, r.Verb, r.SubjectType, r.SubjectID, "", "", r.Details, r.PrevHash, r.Hash} {
			if v == "" {
				continue
			}
			if strings.ContainsAny(v[:1], "=+-@\t'") {
				guarded++
				if rec[j] != "'"+v {
					t.Errorf("seq %d column %d = %q, want %q guarded by one '", r.Seq, j, rec[j], v)
				}
			} else if rec[j] != v {
				t.Errorf("seq %d column %d = %q, want %q as stored", r.Seq, j, rec[j], v)
			}
		}
	}
	if guarded < 10 {
		t.Errorf("only %d guarded cells; the chain should have more", guarded)
	}
	if got := parseExport(t, data, audit.FormatCSV); !reflect.DeepEqual(got, stored) {
		t.Errorf("CSV read back = %+v\nwant %+v", got, stored)
	}
	if rep, err := audit.VerifyExport(bytes.NewReader(data), m, testSigner().PublicKey()); err != nil || !rep.OK() {
		t.Errorf("VerifyExport = %+v, %v; want verified", rep, err)
	}
	if lf, crlf := bytes.Count(data, []byte("\n")), bytes.Count(data, []byte("\r\n")); lf != crlf {
		t.Errorf("%d line feeds, %d of them after a carriage return; want CRLF line breaks throughout (RFC 4180)", lf, crlf)
	}
	if !bytes.HasPrefix(data, []byte(exportHeader+"\r\n")) {
		t.Errorf("CSV does not start with the header and CRLF: %.120q", data)
	}
}

// TestExportCSVLosesCarriageReturns pins what docs/audit-format.md says of
// the one value CSV cannot carry: a raw carriage return, which only a row
// Warden did not write can hold. JSONL carries it; CSV's row fails its
// hash, as a changed row does.
func TestExportCSVLosesCarriageReturns(t *testing.T) {
	db := openDB(t)
	appendTricky(t, db, 2)
	raw := tamperer(t, db)
	last := readRows(t, raw)[1]
	odd := row{Seq: 3, Time: "2025-06-01T09:30:00.000000000Z", ActorType: "principal", ActorID: "a\rb",
		Verb: "auth.login", Details: "{}", PrevHash: last.Hash}
	odd.Hash = docHash(odd)
	insertRow(t, raw, odd)

	data, m := exportOf(t, db, audit.Query{}, audit.FormatJSONL)
	if rep, err := audit.VerifyExport(bytes.NewReader(data), m, nil); err != nil || !rep.OK() {
		t.Errorf("JSONL: VerifyExport = %+v, %v; want verified", rep, err)
	}
	data, m = exportOf(t, db, audit.Query{}, audit.FormatCSV)
	if rep, err := audit.VerifyExport(bytes.NewReader(data), m, nil); err != nil || rep.Row != 3 || !strings.Contains(rep.Problem, "hash") {
		t.Errorf("CSV: VerifyExport = %+v, %v; want row 3's hash to fail", rep, err)
	}
}

// TestExportIsFixedAtStart appends an event while an export is being
// written: the export and its manifest leave it out.
func TestExportIsFixedAtStart(t *testing.T) {
	db := openDB(t)
	bulkChain(t, db, 3000, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	// The first export has 3 chunks of rows, the second (every third
	// event, and the first export's acme event) just over one.
	for _, tt := range []struct {
		q        audit.Query
		wantLast int64
	}{{audit.Query{}, 3000}, {audit.Query{Tenant: "acme"}, 3001}} {
		q := tt.q
		var once sync.Once
		w := writerFunc(func(p []byte) (int, error) {
			once.Do(func() { appendTricky(t, db, 1) })
			return len(p), nil
		})
		var buf bytes.Buffer
		m, err := audit.Export(context.Background(), db.Read(), q, audit.FormatJSONL, nil, io.MultiWriter(&buf, w), testSigner(), exportNow)
		if err != nil {
			t.Fatal(err)
		}
		if m.LastSeq != tt.wantLast {
			t.Errorf("%+v: manifest last_seq = %d, want %d (the event appended meanwhile left out)", q, m.LastSeq, tt.wantLast)
		}
		if rep, err := audit.VerifyExport(&buf, m, nil); err != nil || !rep.OK() {
			t.Errorf("%+v: VerifyExport = %+v, %v", q, rep, err)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestExportMemoryIsConstant exports 10,000 and 100,000 events and
// compares the heap's peak growth while writing: an export that held its
// rows would need about ten times more for the larger.
func TestExportMemoryIsConstant(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory makes heap figures meaningless")
	}
	db := openDB(t)
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	bulkChain(t, db, 100_000, start)
	small := exportHeapGrowth(t, db, audit.Query{Until: start.Add(10_000 * time.Millisecond)}, audit.FormatJSONL, 10_000)
	large := exportHeapGrowth(t, db, audit.Query{}, audit.FormatJSONL, 100_000)
	t.Logf("peak heap growth: %.1f MB for 10k rows, %.1f MB for 100k", mb(small), mb(large))
	if large > small+8<<20 {
		t.Errorf("peak heap growth %.1f MB for 100k rows against %.1f MB for 10k: memory grows with the rows", mb(large), mb(small))
	}
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }

// exportHeapGrowth exports q to a writer that samples the heap,
// and returns the highest heap in use above where it started.
func exportHeapGrowth(t testing.TB, db *store.DB, q audit.Query, format string, wantRows int64) uint64 {
	t.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	h := &heapSampler{base: ms.HeapAlloc}
	m, err := audit.Export(context.Background(), db.Read(), q, format, nil, h, testSigner(), exportNow)
	if err != nil || m.Rows != wantRows {
		t.Fatalf("Export = %d rows, %v; want %d", m.Rows, err, wantRows)
	}
	return h.growth()
}

// heapSampler discards what is written to it, noting the heap's peak at
// every write (the export writes in 64 KiB blocks).
type heapSampler struct {
	base, peak uint64
	bytes      int64
}

func (h *heapSampler) Write(p []byte) (int, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapAlloc)
	h.bytes += int64(len(p))
	return len(p), nil
}

func (h *heapSampler) growth() uint64 {
	if h.peak < h.base {
		return 0
	}
	return h.peak - h.base
}

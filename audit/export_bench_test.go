package audit_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
)

// BenchmarkExport exports a chain of 1,000,000 events (written once, in
// about ten seconds) as JSONL and CSV, reporting rows/s and the heap's
// peak growth, which must stay under 50 MB; verifies such an export from
// a file; and measures the time to the first byte of an export, whole and
// filtered.
//
//	go test -run '^$' -bench Export -benchtime 1x ./audit
func BenchmarkExport(b *testing.B) {
	const n = 1_000_000
	db := openDB(b)
	bulkChain(b, db, n, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()

	for _, format := range exportFormats {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				m, err := audit.Export(ctx, db.Read(), audit.Query{}, format, nil, io.Discard, testSigner(), exportNow)
				if err != nil || m.Rows != n {
					b.Fatalf("Export = %d rows, %v", m.Rows, err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			// Once more, untimed, sampling the heap at every write.
			growth := exportHeapGrowth(b, db, audit.Query{}, format, n)
			b.ReportMetric(mb(growth), "MB-heap-growth")
			if growth > 50<<20 {
				b.Errorf("the heap grew by %.1f MB exporting %d rows; want under 50 MB", mb(growth), n)
			}
		})
	}

	errFirstByte := errors.New("first byte")
	// Verifying the export offline, from a file.
	for _, format := range exportFormats {
		b.Run("verify-"+format, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "export."+format))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			m, err := audit.Export(ctx, db.Read(), audit.Query{}, format, nil, f, testSigner(), exportNow)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := f.Seek(0, io.SeekStart); err != nil {
					b.Fatal(err)
				}
				rep, err := audit.VerifyExport(bufio.NewReaderSize(f, 64<<10), m, testSigner().PublicKey())
				if err != nil || !rep.OK() {
					b.Fatalf("VerifyExport = %+v, %v", rep, err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}

	// The worst case is a filter that matches nothing: the first byte
	// (the CSV header) waits for the scan of the whole chain.
	for _, tt := range []struct {
		name   string
		q      audit.Query
		format string
	}{
		{"first-byte/whole", audit.Query{}, audit.FormatJSONL},
		{"first-byte/tenant", audit.Query{Tenant: "globex"}, audit.FormatJSONL},
		{"first-byte/last-100k-by-time", audit.Query{Since: time.Date(2025, 6, 1, 0, 15, 0, 0, time.UTC)}, audit.FormatJSONL},
		{"first-byte/no-match", audit.Query{ActorID: "nobody"}, audit.FormatCSV},
	} {
		b.Run(tt.name, func(b *testing.B) {
			var worst time.Duration
			for b.Loop() {
				start := time.Now()
				var first time.Duration
				w := writerFunc(func(p []byte) (int, error) {
					first = time.Since(start)
					return 0, errFirstByte
				})
				if _, err := audit.Export(ctx, db.Read(), tt.q, tt.format, nil, w, testSigner(), exportNow); !errors.Is(err, errFirstByte) {
					b.Fatalf("Export = %v, want it stopped at the first byte", err)
				}
				worst = max(worst, first)
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "ms-to-first-byte")
		})
	}
}

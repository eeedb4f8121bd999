package audit_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/wardenhq/warden/audit"
)

// BenchmarkAppend is one audited write: a transaction on a real database
// file holding a single Append.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	ev := sampleEvent(1)
	for b.Loop() {
		err := db.Transact(ctx, func(tx *sql.Tx) error {
			_, err := audit.Append(ctx, tx, ev)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify walks a stored chain of 10,000 events.
func BenchmarkVerify(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	db := openDB(b)
	err := db.Transact(ctx, func(tx *sql.Tx) error {
		for i := range n {
			if _, err := audit.Append(ctx, tx, sampleEvent(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if head, err := audit.Verify(ctx, db.Read(), nil); err != nil || head.Seq != n {
			b.Fatalf("Verify = %v, %v", head, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

package audit_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// BenchmarkAppend is one audited write: a transaction on a real database
// file holding a single Append.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	ev := sampleEvent(1)
	for b.Loop() {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := audit.Append(ctx, tx, ev)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendConcurrent16 is 16 writers appending at once, each event
// in its own transaction, as concurrent requests do. Every append must
// succeed: the write pool's single connection and BEGIN IMMEDIATE make
// writers queue, never fail with "database is locked".
func BenchmarkAppendConcurrent16(b *testing.B) {
	db := openDB(b)
	b.ResetTimer()
	appendConcurrently(b, db, 16, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.StopTimer()
	if head, err := audit.Verify(context.Background(), db.Read(), nil); err != nil || head.Seq != int64(b.N) {
		b.Fatalf("Verify after concurrent appends = %v, %v; want %d events", head, err, b.N)
	}
}

func TestAppendSixteenConcurrentWriters(t *testing.T) {
	db := openDB(t)
	appendConcurrently(t, db, 16, 320)
	if head, err := audit.Verify(context.Background(), db.Read(), nil); err != nil || head.Seq != 320 {
		t.Fatalf("Verify after concurrent appends = %v, %v; want 320 events", head, err)
	}
}

// appendConcurrently appends n events from the given number of goroutines,
// one transaction each, and fails on any error, naming a locked database.
func appendConcurrently(tb testing.TB, db *store.DB, writers, n int) {
	tb.Helper()
	ctx := context.Background()
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				err := db.Transact(ctx, func(tx *store.Tx) error {
					_, err := audit.Append(ctx, tx, sampleEvent(w))
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if strings.Contains(err.Error(), "database is locked") || strings.Contains(err.Error(), "SQLITE_BUSY") {
			tb.Errorf("concurrent append hit a locked database: %v", err)
		} else {
			tb.Errorf("concurrent append: %v", err)
		}
	}
}

// BenchmarkVerify walks a stored chain of 10,000 events.
func BenchmarkVerify(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	db := openDB(b)
	err := db.Transact(ctx, func(tx *store.Tx) error {
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

// BenchmarkVerifyMillion verifies a stored chain of 1,000,000 events with a
// signed checkpoint every 100,000, as warden audit verify does. The aim is
// at least 1,000,000 events a minute.
func BenchmarkVerifyMillion(b *testing.B) {
	const n = 1_000_000
	ctx := context.Background()
	db := openDB(b)
	s := signerFor(b, db)
	buildChain(b, db, s, n, 100_000)
	for b.Loop() {
		head, err := audit.Verify(ctx, db.Read(), &audit.Trust{Key: s.PublicKey()})
		if err != nil || head.Seq != n {
			b.Fatalf("Verify = %v, %v", head, err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Minutes(), "events/min")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}

// buildChain writes n events as Append would, but computed here (with
// docHash, from the format document) and inserted in one transaction with
// one prepared statement, with a checkpoint signed by s every
// checkpointEvery events: a million-event chain in seconds.
func buildChain(tb testing.TB, db *store.DB, s *audit.Signer, n, checkpointEvery int) {
	tb.Helper()
	ctx := context.Background()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tenants := []string{"acme", "globex", ""}
	err := db.Transact(ctx, func(tx *store.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO audit_events
			(seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, details, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		prev := audit.GenesisHash
		for i := 1; i <= n; i++ {
			r := row{
				Seq:         int64(i),
				Time:        start.Add(time.Duration(i) * time.Millisecond).Format(audit.TimeFormat),
				ActorType:   audit.ActorPrincipal,
				ActorID:     "01JWKX4Q8ZB3C5D7E9F1G2H3J" + strconv.Itoa(i%10),
				Tenant:      tenants[i%3],
				Verb:        "auth.login",
				SubjectType: "principal",
				SubjectID:   "01JWKX4Q8ZB3C5D7E9F1G2H3J" + strconv.Itoa(i%10),
				Details:     `{"method":"oidc","n":` + strconv.Itoa(i) + `,"note":"Zürich ☕"}`,
				PrevHash:    prev,
			}
			r.Hash = docHash(r)
			if _, err := ins.ExecContext(ctx, r.Seq, r.Time, r.ActorType, r.ActorID, r.Tenant, r.Verb,
				r.SubjectType, r.SubjectID, r.Details, r.PrevHash, r.Hash); err != nil {
				return err
			}
			prev = r.Hash
			if i%checkpointEvery == 0 {
				signed := r.Time
				msg := fmt.Sprintf("warden-audit-checkpoint/v1\n%d\n%s\n%s", i, r.Hash, signed)
				_, err := tx.ExecContext(ctx, `INSERT INTO audit_checkpoints (seq, hash, time, signature, key) VALUES (?, ?, ?, ?, ?)`,
					i, r.Hash, signed, base64.StdEncoding.EncodeToString(s.Sign([]byte(msg))), s.PublicKeyText())
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("build a chain of %d events: %v", n, err)
	}
}

// The benchmark's chain is one Warden would have written.
func TestBuiltChainVerifies(t *testing.T) {
	db := openDB(t)
	s := signerFor(t, db)
	buildChain(t, db, s, 250, 100)
	head, err := audit.Verify(context.Background(), db.Read(), &audit.Trust{Key: s.PublicKey()})
	if err != nil || head.Seq != 250 {
		t.Fatalf("Verify = %v, %v; want an intact chain of 250", head, err)
	}
	if cps, err := audit.Checkpoints(context.Background(), db.Read()); err != nil || len(cps) != 2 {
		t.Errorf("Checkpoints = %d, %v; want 2", len(cps), err)
	}
}

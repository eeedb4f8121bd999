package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkConcurrentWrites measures write transactions per second on
// SQLite with many requests writing at once (16 goroutines per CPU), with
// group commit and without it (one transaction and one commit each, as
// before). Each transaction is a request's typical write: a row of its
// own, an update of a shared counter (a budget) and an appended row (an
// audit event).
//
//	go test ./platform/store -run '^$' -bench ConcurrentWrites -benchtime 3s
func BenchmarkConcurrentWrites(b *testing.B) {
	for _, mode := range []string{"grouped", "ungrouped"} {
		b.Run(mode+"/serial", func(b *testing.B) { benchWrites(b, mode == "ungrouped", 0) })
	}
	for _, mode := range []string{"grouped", "ungrouped"} {
		for _, par := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/goroutines=%dxCPU", mode, par), func(b *testing.B) {
				benchWrites(b, mode == "ungrouped", par)
			})
		}
	}
}

func benchWrites(b *testing.B, ungrouped bool, par int) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "warden.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.ungrouped = ungrouped
	err = db.TransactAlone(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE bench_rows (id TEXT PRIMARY KEY, body TEXT NOT NULL);
			CREATE TABLE bench_counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
			CREATE TABLE bench_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, row TEXT NOT NULL);
			INSERT INTO bench_counter (id, n) VALUES (1, 0)`)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("x", 300)
	var seq atomic.Int64
	write := func() error {
		id := fmt.Sprint(seq.Add(1))
		return db.Transact(ctx, func(tx *Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO bench_rows (id, body) VALUES (?, ?)`, id, body); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE bench_counter SET n = n + 1 WHERE id = 1`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO bench_log (row) VALUES (?)`, id)
			return err
		})
	}
	b.ResetTimer()
	if par == 0 { // one writer at a time: what group commit costs when there is nothing to group
		for range b.N {
			if err := write(); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := write(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tx/s")
	if c := db.gc.commits.Load(); c > 0 {
		b.ReportMetric(float64(db.gc.grouped.Load())/float64(c), "tx/commit")
	}
	var n int64
	if err := db.Read().QueryRowContext(ctx, `SELECT n FROM bench_counter WHERE id = 1`).Scan(&n); err != nil || n != int64(b.N) {
		b.Fatalf("counter = %d, %v; want %d", n, err, b.N)
	}
}

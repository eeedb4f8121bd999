//go:build unix

package search

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// benchSizes are the numbers of journeys (each with one action and one
// audit event) the benchmarks run at: a search and a page of the Actions
// list should cost the same at both.
var benchSizes = []int{10_000, 1_000_000}

// BenchmarkSearch runs the header search as on-call (every tenant, with
// journeys and audit events), and reads pages of the Actions list with
// its filters — the first page, and one deep in the list — at 10k and at
// 1M journeys, each with an action and an audit event.
//
// Besides ns/op it reports cpu-ns/op, the process's CPU time per search:
// on a busy machine the wall time is mostly waiting for a core.
//
//	go test ./search -run '^$' -bench . -benchtime 100x -timeout 60m
func BenchmarkSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a million journeys")
	}
	r := redact.New([]byte("0123456789abcdef0123456789abcdef"))
	ctx := context.Background()
	for _, n := range benchSizes {
		db := seedBench(b, r, n)
		for _, text := range []string{"ORD-1004", "$2,400.00", "2400", "Support bot 3", "alice", fmt.Sprintf("act_%010d", n/2)} {
			q, err := Parse(text)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(size(n)+"/search/"+text, func(b *testing.B) {
				defer cpuPerOp(b)()
				for b.Loop() {
					res, err := Run(ctx, db.Read(), r, Scope{Journeys: true, Audit: true}, q)
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Actions) == 0 {
						b.Fatalf("search %q found nothing", text)
					}
				}
			})
		}
		deep := &store.Cursor{Key: benchTime(n / 2), ID: fmt.Sprintf("act_%010d", n/2)}
		for _, c := range []struct {
			name string
			f    approvals.BrowseFilter
		}{
			{"all", approvals.BrowseFilter{}},
			{"all-deep", approvals.BrowseFilter{Page: store.Page{After: deep}}},
			{"executed-refunds", approvals.BrowseFilter{Status: approvals.StatusExecuted, Tool: "issue_refund"}},
			{"tenant-deep", approvals.BrowseFilter{TenantIDs: []string{"ten_3"}, Page: store.Page{After: deep}}},
			{"target", approvals.BrowseFilter{TargetKey: approvals.TargetOf(r, "ORD-1004").Key}},
			{"day", approvals.BrowseFilter{Since: benchDay(n / 2), Until: benchDay(n/2).AddDate(0, 0, 1)}},
		} {
			b.Run(size(n)+"/actions/"+c.name, func(b *testing.B) {
				f := c.f
				f.Page.Size = 50
				defer cpuPerOp(b)()
				for b.Loop() {
					p, err := approvals.Browse(ctx, db.Read(), f)
					if err != nil {
						b.Fatal(err)
					}
					if len(p.Rows) == 0 {
						b.Fatalf("%s: an empty page", c.name)
					}
				}
			})
		}
		db.Close()
	}
}

// cpuPerOp starts counting the process's CPU time; the function it
// returns reports it per operation as cpu-ns/op.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func size(n int) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("%dM", n/1_000_000)
	}
	return fmt.Sprintf("%dk", n/1000)
}

var benchBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// benchTime is when the i-th seeded action was asked for: one a minute.
func benchTime(i int) string { return store.FormatTime(benchBase.Add(time.Duration(i) * time.Minute)) }
func benchDay(i int) time.Time {
	return benchBase.Add(time.Duration(i) * time.Minute).Truncate(24 * time.Hour)
}

// seedBench writes n journeys over ten tenants and ten keys, each with an
// action (amounts cycling through 5,000 values, statuses and tools
// cycling) and its audit event, one a minute, in a few statements the
// database runs itself; then the ORD-1004 refunds a search looks for and
// Alice's decisions on every thousandth action.
func seedBench(b *testing.B, r *redact.Redactor, n int) *store.DB {
	b.Helper()
	ctx := context.Background()
	db := storetest.Open(b)
	pg := db.Dialect() == store.Postgres
	pad := func(col string) string { return "substr('0000000000' || " + col + ", -10)" }
	ts := func(col string) string {
		return "strftime('%Y-%m-%dT%H:%M:%S', '2025-01-01', '+' || " + col + " || ' minutes') || '.000000000Z'"
	}
	if pg {
		pad = func(col string) string { return "lpad(" + col + "::text, 10, '0')" }
		ts = func(col string) string {
			return `to_char(timestamp '2025-01-01' + ` + col + ` * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS') || '.000000000Z'`
		}
	}
	series := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
	if pg {
		series = "WITH n(i) AS (SELECT generate_series(1, ?)) "
	}
	target := approvals.TargetOf(r, "ORD-1004").Key
	start := time.Now()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var stmts []string
		for k := range 10 {
			stmts = append(stmts,
				fmt.Sprintf(`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_%d', 't%d', 'T%d', '2025-01-01T00:00:00.000000000Z')`, k, k, k),
				fmt.Sprintf(`INSERT INTO virtual_keys (id, tenant_id, name, prefix, secret_hash, created_by, created_at) VALUES ('key_%d', 'ten_%d', 'Support bot %d', 'wk_%d', 'x', 'cli', '2025-01-01T00:00:00.000000000Z')`, k, k, k, k))
		}
		stmts = append(stmts, `INSERT INTO principals (id, issuer, subject, email, name, first_seen_at, last_login_at)
			VALUES ('pri_alice', 'iss', 'alice', 'alice@example.com', 'Alice Approver', '2025-01-01T00:00:00.000000000Z', '2025-01-01T00:00:00.000000000Z')`)
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		for _, s := range []string{
			series + `INSERT INTO journeys (id, tenant_id, key_id, request_id, correlation_id, release_digest, status, created_at)
				SELECT 'jrn_' || ` + pad("i") + `, 'ten_' || (i % 10), 'key_' || (i % 10), 'r', 'c', 'd', 'completed', ` + ts("i") + ` FROM n`,
			series + `INSERT INTO actions (id, tenant_id, journey_id, key_id, tool, arguments_sealed, arguments_redacted, summary, amount_minor, currency,
				impact, reversibility, policy_rule, payload_digest, idempotency_key, status, expires_at, created_at, updated_at, target_key, target_label)
				SELECT 'act_' || ` + pad("i") + `, 'ten_' || (i % 10), 'jrn_' || ` + pad("i") + `, 'key_' || (i % 10),
					CASE i % 3 WHEN 0 THEN 'issue_refund' WHEN 1 THEN 'send_customer_email' ELSE 'reverse_refund' END,
					'x', '{}', 'Refund order ORD-' || i, (i % 5000) * 100, 'USD', 'high', 'compensatable', 'r', 'd', 'idem_' || i,
					CASE i % 4 WHEN 0 THEN 'executed' WHEN 1 THEN 'pending' WHEN 2 THEN 'rejected' ELSE 'failed' END,
					` + ts("i") + `, ` + ts("i") + `, ` + ts("i") + `, 'tk_' || i, 'ORD-' || i FROM n`,
			series + `INSERT INTO audit_events (seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, prev_hash, hash)
				SELECT i, ` + ts("i") + `, 'key', 'key_' || (i % 10), 't' || (i % 10), 'action.requested', 'action', 'act_' || ` + pad("i") + `, 'p', 'h' FROM n`,
			series + `INSERT INTO decisions (id, action_id, principal_id, decision, payload_digest, created_at)
				SELECT 'dec_' || i, 'act_' || ` + pad("i") + `, 'pri_alice', 'approve', 'd', ` + ts("i") + ` FROM n WHERE i % 1000 = 0`,
		} {
			if _, err := tx.ExecContext(ctx, s, n); err != nil {
				return fmt.Errorf("%s: %w", strings.Fields(s)[len(strings.Fields(series))+2], err)
			}
		}
		// ORD-1004's refunds: twenty-five over the whole history.
		_, err := tx.ExecContext(ctx, `UPDATE actions SET target_key = ? WHERE id IN (`+strings.TrimSuffix(strings.Repeat("?,", 25), ",")+`)`,
			append([]any{target}, orderIDs(n)...)...)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, "ANALYZE")
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %s journeys, actions and audit events in %v", size(n), time.Since(start).Round(time.Millisecond))
	return db
}

// orderIDs are 25 action ids spread over the n seeded.
func orderIDs(n int) []any {
	out := make([]any, 25)
	for k := range out {
		out[k] = fmt.Sprintf("act_%010d", 1+k*(n/25))
	}
	return out
}

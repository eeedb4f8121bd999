package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// BenchmarkConsolePagesAtScale times every list page of the console with a
// million journeys, 100,000 audit events and 20,000 actions in the
// database: each page a signed-in user's GET over loopback, which is the
// server's time plus a loopback round trip. It reports the median and the
// 95th percentile of each page in milliseconds; every page must stay under
// 50 ms. WARDEN_BENCH_JOURNEYS and WARDEN_BENCH_AUDIT change the sizes;
// WARDEN_BENCH_KEEP_DB=path keeps a copy of the seeded database.
//
//	go test ./web -run '^$' -bench ConsolePagesAtScale -benchtime 1x
func BenchmarkConsolePagesAtScale(b *testing.B) {
	journeys, events := benchSize("WARDEN_BENCH_JOURNEYS", 1_000_000), benchSize("WARDEN_BENCH_AUDIT", 100_000)
	in := startWardenDemo(b, nil)
	start := time.Now()
	seedScale(b, in.DB, time.Now().UTC(), journeys, events, 20_000)
	b.Logf("seeded %d journeys, %d audit events, 20,000 actions in %s", journeys, events, time.Since(start).Round(time.Millisecond))
	if path := os.Getenv("WARDEN_BENCH_KEEP_DB"); path != "" {
		// A copy to study query plans with the sqlite3 shell.
		if _, err := in.DB.Read().Exec(`VACUUM INTO ?`, path); err != nil {
			b.Fatal(err)
		}
	}
	in.waitReady(b)

	erin, alice, carol, dave := newBrowser(b, in.URL), newBrowser(b, in.URL), newBrowser(b, in.URL), newBrowser(b, in.URL)
	erin.loginDev("erin")
	alice.loginDev("alice")
	carol.loginDev("carol")
	dave.loginDev("dave")
	pages := []struct {
		name string
		who  *browser
		path string
	}{
		{"budgets", erin, "/budgets"},
		{"traces", erin, "/traces"},
		{"traces-tenant-failed", erin, "/traces?tenant=acme&status=failed"},
		{"audit", dave, "/audit"},
		{"audit-verb", dave, "/audit?verb=action."},
		{"approvals", alice, "/approvals"},
		{"status", carol, "/status"},
		{"home-approver", alice, "/"},
		{"home-oncall", carol, "/"},
		{"home-auditor", dave, "/"},
		{"home-admin", erin, "/"},
	}
	for _, pg := range pages {
		b.Run(pg.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				p := pg.who.get(pg.path)
				lat = append(lat, time.Since(t0))
				if p.Status != http.StatusOK {
					b.Fatalf("GET %s = %d", pg.path, p.Status)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// The benchmark's audit pages answered 500 in about one run in ten: the
// seeded events' times were written with RFC3339Nano, which drops trailing
// zeros, and the trail reads only its own nine-digit format. A clock
// reading with trailing zeros seeds the rows that broke those runs.
func TestScaleSeedOnTheAuditPage(t *testing.T) {
	in := startWardenDemo(t, nil)
	now := time.Now().UTC().Truncate(time.Second).Add(120 * time.Millisecond) // RFC3339Nano: ".12Z"
	seedScale(t, in.DB, now, 400, 120, 40)
	in.waitReady(t)
	var first int64
	if err := in.DB.Read().QueryRow(`SELECT MIN(seq) FROM audit_events WHERE actor_id = 'bench-principal'`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	// The benchmark times rows as Append writes them: the page reads
	// others too, but that is not the page being measured.
	var stored string
	if err := in.DB.Read().QueryRow(`SELECT time FROM audit_events WHERE seq = ?`, first).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if at, err := time.Parse(audit.TimeFormat, stored); err != nil || at.Format(audit.TimeFormat) != stored {
		t.Errorf("seeded event %d has time %q, want it in the trail's format %s", first, stored, audit.TimeFormat)
	}
	dave := newBrowser(t, in.URL)
	dave.loginDev("dave")
	for _, tt := range []struct {
		query string
		keep  func(audit.Event) bool
	}{
		{"", func(audit.Event) bool { return true }},
		{"?verb=action.", func(e audit.Event) bool { return strings.HasPrefix(e.Verb, "action.") }},
	} {
		p := dave.get("/audit" + tt.query)
		if p.Status != http.StatusOK {
			t.Fatalf("GET /audit%s = %d, want 200", tt.query, p.Status)
		}
		got := auditSeqs(t, p.Doc)
		if len(got) == 0 || got[0] < first {
			t.Fatalf("GET /audit%s lists seqs %v, want the seeded events (from seq %d) first", tt.query, got, first)
		}
		// Events recorded after the page was read are not on it.
		var evs []audit.Event
		for _, e := range everyEvent(t, in.DB) {
			if e.Seq <= got[0] {
				evs = append(evs, e)
			}
		}
		if want := wantSeqs(evs, tt.keep); !slices.Equal(got, want) {
			t.Errorf("GET /audit%s lists seqs %v, want %v", tt.query, got, want)
		}
	}
}

func benchSize(env string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
		return n
	}
	return def
}

// seedScale bulk-inserts journeys over the 20 days before now across four
// tenants (acme and three more, each with a monthly budget), audit events
// after the chain's head, and actions (most executed, some failed, some
// pending) in one transaction with multi-row inserts.
func seedScale(b testing.TB, db *store.DB, now time.Time, journeys, events, actions int) {
	b.Helper()
	ctx := context.Background()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		acme, err := tenants.BySlug(ctx, tx, "acme")
		if err != nil {
			return err
		}
		tenantList := []tenants.Tenant{acme}
		for i := range 3 {
			t, err := tenants.Insert(ctx, tx, fmt.Sprintf("bench-%d", i), fmt.Sprintf("Bench %d", i))
			if err != nil {
				return err
			}
			tenantList = append(tenantList, t)
		}
		for _, t := range tenantList {
			if _, err := tx.ExecContext(ctx, `INSERT INTO budgets (tenant_id, period, limit_micros, spent_micros, period_start, updated_at)
				VALUES (?, 'month', 1000000000000, 0, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET period = 'month'`,
				t.ID, store.FormatTime(now.AddDate(0, 0, -40)), store.FormatTime(now)); err != nil {
				return err
			}
		}
		span := 20 * 24 * time.Hour
		skills := []string{"refund", "order_status", "faq", "exchange"}
		statuses := []string{"completed", "completed", "completed", "completed", "completed", "completed", "failed", "rejected"}
		if err := bulkInsert(ctx, tx, `INSERT INTO journeys (id, tenant_id, request_id, correlation_id, skill, release_digest, status, input, cost_micros, latency_ms, created_at, finished_at) VALUES `,
			"(?,?,?,?,?,?,?,?,?,?,?,?)", journeys, func(i int) []any {
				at := now.Add(-span + time.Duration(int64(span)/int64(journeys)*int64(i)))
				id := fmt.Sprintf("jrn_bench%08d", i)
				return []any{id, tenantList[i%len(tenantList)].ID, "req-" + id, "corr-" + id, skills[i%len(skills)], "sha256:bench",
					statuses[i%len(statuses)], fmt.Sprintf("Where is my order ORD-%d? My card is [card:%08x], thanks", i, i),
					int64((i*7919)%100_000 + 1), 300 + i%700, store.FormatTime(at), store.FormatTime(at.Add(time.Second))}
			}); err != nil {
			return fmt.Errorf("journeys: %w", err)
		}
		actionStatus := func(i int) string {
			switch {
			case i%100 == 0:
				return "failed"
			case i%250 == 1:
				return "pending"
			}
			return "executed"
		}
		if err := bulkInsert(ctx, tx, `INSERT INTO actions (id, tenant_id, journey_id, tool, arguments_sealed, arguments_redacted, summary, amount_minor, currency,
				impact, reversibility, policy_rule, payload_digest, idempotency_key, status, failure, expires_at, created_at, updated_at) VALUES `,
			"(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", actions, func(i int) []any {
				at := now.Add(-time.Duration(actions-i) * time.Minute)
				id := fmt.Sprintf("act_bench%07d", i)
				status := actionStatus(i)
				failure := ""
				if status == "failed" {
					failure = "provider refused: account closed"
				}
				return []any{id, tenantList[i%len(tenantList)].ID, fmt.Sprintf("jrn_bench%08d", (i*37)%journeys), "issue_refund", "sealed", `{}`,
					fmt.Sprintf("Refund $%d.00 for order ORD-%d", 10+i%500, i), int64((10 + i%500) * 100), "USD", "high", "compensatable",
					"bench", "sha256:" + id, "idem-" + id, status, failure, store.FormatTime(now.Add(24 * time.Hour)), store.FormatTime(at), store.FormatTime(at)}
			}); err != nil {
			return fmt.Errorf("actions: %w", err)
		}
		// Agents' keys: the actions' requests are theirs on the trail,
		// so the audit page names keys as it does in life.
		const benchKeys = 200
		if err := bulkInsert(ctx, tx, `INSERT INTO virtual_keys (id, tenant_id, name, prefix, secret_hash, created_by, created_at) VALUES `,
			"(?,?,?,?,?,?,?)", benchKeys, func(i int) []any {
				return []any{fmt.Sprintf("key_bench%03d", i), tenantList[i%len(tenantList)].ID, fmt.Sprintf("bench-agent-%03d", i),
					fmt.Sprintf("wk_bench%03d", i), "bench", "bench", store.FormatTime(now.Add(-span))}
			}); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
		var seq int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM audit_events`).Scan(&seq); err != nil {
			return err
		}
		verbs := []string{"action.requested", "action.approved", "action.executed", "auth.login", "tenant.rename", "key.create"}
		return bulkInsert(ctx, tx, `INSERT INTO audit_events (seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, details, prev_hash, hash) VALUES `,
			"(?,?,?,?,?,?,?,?,?,?,?)", events, func(i int) []any {
				verb := verbs[i%len(verbs)]
				subject := strings.SplitN(verb, ".", 2)[0]
				// The trail's own format (nine fractional digits): the
				// trail reads no other, and RFC3339Nano drops trailing zeros.
				actorType, actor := "principal", "bench-principal"
				if verb == "action.requested" {
					actorType, actor = "key", fmt.Sprintf("key_bench%03d", (i/len(verbs))%benchKeys)
				}
				return []any{seq + int64(i) + 1, now.Add(-time.Duration(events-i) * time.Second).Format(audit.TimeFormat), actorType, actor,
					tenantList[i%len(tenantList)].Slug, verb, subject, fmt.Sprintf("act_bench%07d", i%actions), `{"summary":"Refund $10.00","n":1}`,
					strings.Repeat("0", 64), fmt.Sprintf("%064x", i)}
			})
	})
	if err != nil {
		b.Fatal(err)
	}
}

// bulkInsert runs prefix with n rows of values, 200 rows a statement.
func bulkInsert(ctx context.Context, tx *store.Tx, prefix, row string, n int, values func(i int) []any) error {
	const per = 200
	full := prefix + strings.TrimSuffix(strings.Repeat(row+",", per), ",")
	stmt, err := tx.PrepareContext(ctx, full)
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, 0, per*strings.Count(row, "?"))
	for i := 0; i < n; i += per {
		args = args[:0]
		k := min(per, n-i)
		for j := range k {
			args = append(args, values(i+j)...)
		}
		if k == per {
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, prefix+strings.TrimSuffix(strings.Repeat(row+",", k), ","), args...); err != nil {
			return err
		}
	}
	return nil
}

package search

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// recorder is a Querier that keeps every statement it runs, to explain
// them afterwards.
type recorder struct {
	q     store.Querier
	stmts []stmt
}

type stmt struct {
	sql  string
	args []any
}

func (r *recorder) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	r.stmts = append(r.stmts, stmt{query, args})
	return r.q.QueryContext(ctx, query, args...)
}

func (r *recorder) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	r.stmts = append(r.stmts, stmt{query, args})
	return r.q.QueryRowContext(ctx, query, args...)
}

// seedOne writes one of each row a search reads: a tenant, a person who
// decided, a key, a journey and its action on ORD-1004 for $2,400.00.
func seedOne(t *testing.T, db *store.DB, r *redact.Redactor) {
	t.Helper()
	ctx := context.Background()
	now := store.FormatTime(time.Now())
	target := approvals.TargetOf(r, "ORD-1004")
	err := db.Transact(ctx, func(tx *store.Tx) error {
		for _, s := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', ?)`, []any{now}},
			{`INSERT INTO principals (id, issuer, subject, email, name, first_seen_at, last_login_at) VALUES ('pri_a', 'iss', 'alice', 'alice@example.com', 'Alice Approver', ?, ?)`, []any{now, now}},
			{`INSERT INTO virtual_keys (id, tenant_id, name, prefix, secret_hash, created_by, created_at) VALUES ('key_a', 'ten_a', 'Support bot', 'wk_a', 'x', 'cli', ?)`, []any{now}},
			{`INSERT INTO journeys (id, tenant_id, key_id, request_id, correlation_id, release_digest, status, created_at) VALUES ('jrn_a', 'ten_a', 'key_a', 'r', 'c', 'd', 'completed', ?)`, []any{now}},
			{`INSERT INTO actions (id, tenant_id, journey_id, key_id, tool, arguments_sealed, arguments_redacted, summary, amount_minor, currency,
				impact, reversibility, policy_rule, payload_digest, idempotency_key, status, expires_at, created_at, updated_at, target_key, target_label)
				VALUES ('act_a', 'ten_a', 'jrn_a', 'key_a', 'issue_refund', 'x', '{}', 'Refund', 240000, 'USD', 'high', 'compensatable', 'r', 'd', 'i', 'executed', ?, ?, ?, ?, 'ORD-1004')`,
				[]any{now, now, now, target.Key}},
			{`INSERT INTO decisions (id, action_id, principal_id, decision, payload_digest, created_at) VALUES ('dec_a', 'act_a', 'pri_a', 'approve', 'd', ?)`, []any{now}},
		} {
			if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bigTables are the tables that grow with use: none may be read whole.
var bigTables = []string{"actions", "journeys", "journey_steps", "audit_events", "decisions", "principals", "virtual_keys"}

// aliases maps the queries' aliases to their tables.
var aliases = map[string]string{"a": "actions", "j": "journeys", "d": "decisions", "k": "virtual_keys", "t": "tenants"}

var (
	sqliteScan  = regexp.MustCompile(`^SCAN (\w+)( |$)`)
	pgSeqScan   = regexp.MustCompile(`Seq Scan on (\w+)`)
	pgIndexScan = regexp.MustCompile(`Index (?:Only )?Scan (?:Backward )?using (\w+) on (\w+)`)
)

// TestSearchAndActionsListUseIndexes explains every statement a search
// and the Actions list's filters run, and wants none to read a table that
// grows with use from end to end (SQLite's SCAN without an index,
// PostgreSQL's Seq Scan with sequential scans priced out), nor, on
// SQLite, to sort what it found to fill a page in order.
func TestSearchAndActionsListUseIndexes(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	r := redact.New([]byte("0123456789abcdef0123456789abcdef"))
	seedOne(t, db, r)
	conn, err := db.Read().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pg := db.Dialect() == store.Postgres
	if pg {
		// With the tables this small, a sequential scan is cheapest; priced
		// out, one is still chosen when no index serves the query.
		if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{q: conn}
	for _, scope := range []Scope{
		{Journeys: true, Audit: true},
		{TenantIDs: []string{"ten_a"}, TenantSlugs: []string{"acme"}, Journeys: true, Audit: true},
	} {
		for _, text := range []string{"ORD-1004", "$2,400.00", "2400", "act_a", "jrn_a", "alice", "support"} {
			q, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctx, rec, r, scope, q)
			if err != nil {
				t.Fatalf("search %q: %v", text, err)
			}
			if len(res.Actions) != 1 {
				t.Errorf("search %q found %d actions, want the one", text, len(res.Actions))
			}
		}
	}
	lo, hi := int64(100000), int64(300000)
	since := time.Now().Add(-time.Hour)
	for _, f := range []approvals.BrowseFilter{
		{},
		{Status: "executed"},
		{Tool: "issue_refund"},
		{Status: "executed", Tool: "issue_refund"},
		{TenantIDs: []string{"ten_a"}},
		{TargetKey: approvals.TargetOf(r, "ORD-1004").Key},
		{MinMinor: &lo, MaxMinor: &hi},
		{MinMinor: &hi, MaxMinor: &hi},
		{Since: since, Until: time.Now().Add(time.Hour)},
	} {
		f.Page = store.Page{Size: 50}
		if _, err := approvals.Browse(ctx, rec, f); err != nil {
			t.Fatal(err)
		}
		// and the next page, from a cursor
		f.Page.After = &store.Cursor{Key: store.FormatTime(time.Now()), ID: "act_z"}
		if _, err := approvals.Browse(ctx, rec, f); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.stmts) < 40 {
		t.Fatalf("recorded %d statements; the search ran fewer than it should", len(rec.stmts))
	}
	for _, s := range rec.stmts {
		plan := explain(t, conn, pg, s)
		filtered := strings.Contains(s.sql, " WHERE ")
		if pg {
			for _, m := range pgSeqScan.FindAllStringSubmatch(plan, -1) {
				if isBig(m[1]) {
					t.Errorf("reads all of %s:\n%s\n%s", m[1], oneLine(s.sql), plan)
				}
			}
			// An index read from end to end is a table scan too: each read
			// of a big table seeks (an Index Cond), unless nothing filters.
			for _, table := range pgUnseeked(t, conn, plan) {
				if filtered && isBig(table) {
					t.Errorf("walks a whole index of %s:\n%s\n%s", table, oneLine(s.sql), plan)
				}
			}
			continue
		}
		for _, line := range strings.Split(plan, "\n") {
			// "SCAN j" after "CO-ROUTINE j" reads the page a subquery chose.
			// "SCAN a USING INDEX" walks a whole index: only the list with no
			// filter may, since it stops at the page's end.
			if m := sqliteScan.FindStringSubmatch(line); m != nil && (filtered || !strings.Contains(line, " USING ")) && isBig(m[1]) &&
				!strings.Contains(plan, "CO-ROUTINE "+m[1]) {
				t.Errorf("reads all of %s:\n%s\n%s", m[1], oneLine(s.sql), plan)
			}
			if strings.Contains(line, "USE TEMP B-TREE FOR ORDER BY") && strings.Contains(s.sql, "FROM actions a") && !sortsFew(s.sql) {
				t.Errorf("sorts every match to fill one page:\n%s\n%s", oneLine(s.sql), plan)
			}
		}
	}
}

// sortsFew: what the query selects is sorted to fill the page, which is
// as cheap as the selection is narrow — a list of values (the tenants in
// scope) each with its own run of the index, the few actions of one
// journey — or, for an amount range on the Actions list, as costly as the
// range is wide: a range of one column and an order by another cannot
// both come from one index. Search asks for exact amounts.
func sortsFew(q string) bool {
	return strings.Contains(q, "tenant_id IN") || strings.Contains(q, "a.journey_id = ?") || strings.Contains(q, "a.amount_minor >= ?")
}

func isBig(name string) bool {
	if t, ok := aliases[name]; ok {
		name = t
	}
	for _, b := range bigTables {
		if b == name {
			return true
		}
	}
	return false
}

func explain(t *testing.T, conn *sql.Conn, pg bool, s stmt) string {
	t.Helper()
	prefix := "EXPLAIN QUERY PLAN "
	if pg {
		prefix = "EXPLAIN "
	}
	rows, err := conn.QueryContext(context.Background(), prefix+s.sql, s.args...)
	if err != nil {
		t.Fatalf("explain %s: %v", oneLine(s.sql), err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		detail := vals[len(vals)-1]
		switch d := detail.(type) {
		case []byte:
			out = append(out, string(d))
		case string:
			out = append(out, d)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// pgUnseeked lists the tables of the plan's index scans that do not seek:
// no Index Cond on the index's first column. (PostgreSQL checks a
// condition on a later column while reading the whole index, and calls
// that an Index Cond too.)
func pgUnseeked(t *testing.T, conn *sql.Conn, plan string) []string {
	var out []string
	lines := strings.Split(plan, "\n")
	for i, line := range lines {
		m := pgIndexScan.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var first string
		if err := conn.QueryRowContext(context.Background(), `SELECT pg_get_indexdef(to_regclass(?)::oid, 1, true)`, m[1]).Scan(&first); err != nil {
			t.Fatalf("first column of %s: %v", m[1], err)
		}
		seeks := false
		for _, next := range lines[i+1:] {
			if strings.Contains(next, "->") {
				break
			}
			if cond, ok := strings.CutPrefix(strings.TrimSpace(next), "Index Cond:"); ok && strings.Contains(cond, first) {
				seeks = true
			}
		}
		if !seeks {
			out = append(out, m[2])
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

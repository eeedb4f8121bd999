package store

import (
	"database/sql/driver"
	"reflect"
	"testing"
)

func TestRebindRewritesPlaceholdersOutsideQuotes(t *testing.T) {
	pos := func(vs ...any) []driver.NamedValue {
		out := make([]driver.NamedValue, len(vs))
		for i, v := range vs {
			out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		}
		return out
	}
	named := func(kv ...any) []driver.NamedValue {
		var out []driver.NamedValue
		for i := 0; i < len(kv); i += 2 {
			out = append(out, driver.NamedValue{Name: kv[i].(string), Ordinal: len(out) + 1, Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name     string
		query    string
		args     []driver.NamedValue
		want     string
		wantArgs []any
	}{
		{"positional", `SELECT a FROM t WHERE b = ? AND c = ?`, pos(1, "x"),
			`SELECT a FROM t WHERE b = $1 AND c = $2`, []any{1, "x"}},
		{"quoted string", `SELECT '?', 'it''s ?', ? FROM t`, pos(7),
			`SELECT '?', 'it''s ?', $1 FROM t`, []any{7}},
		{"quoted identifier", `SELECT "a?b" FROM t WHERE x = ?`, pos(7),
			`SELECT "a?b" FROM t WHERE x = $1`, []any{7}},
		{"comments", "SELECT ? -- why?\n/* or ? */ + ?", pos(1, 2),
			"SELECT $1 -- why?\n/* or ? */ + $2", []any{1, 2}},
		{"dollar quoted", `SELECT $$a ? b$$, $tag$ ? $tag$, ?`, pos(3),
			`SELECT $$a ? b$$, $tag$ ? $tag$, $1`, []any{3}},
		{"named reused", `UPDATE b SET r = r + :amount WHERE t = :tenant AND r + :amount <= l`,
			named("amount", int64(5), "tenant", "t1", "unused", "z"),
			`UPDATE b SET r = r + $1 WHERE t = $2 AND r + $1 <= l`, []any{int64(5), "t1"}},
		{"named keeps casts", `SELECT :a::text, @b, $c`, named("a", 1, "b", 2, "c", 3),
			`SELECT $1::text, $2, $3`, []any{1, 2, 3}},
		{"cast without named args", `SELECT x::text FROM t WHERE y = ?`, pos(1),
			`SELECT x::text FROM t WHERE y = $1`, []any{1}},
		{"no args", `SELECT 1`, nil, `SELECT 1`, nil},
		{"prepare numbers in order", `INSERT INTO t VALUES (?, ?)`, nil, `INSERT INTO t VALUES ($1, $2)`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, args := rebind(tt.query, tt.args)
			if got != tt.want {
				t.Errorf("rebind(%q) = %q, want %q", tt.query, got, tt.want)
			}
			var vals []any
			for i, a := range args {
				if a.Ordinal != i+1 || a.Name != "" {
					t.Errorf("arg %d: ordinal %d name %q, want ordinal %d unnamed", i, a.Ordinal, a.Name, i+1)
				}
				vals = append(vals, a.Value)
			}
			if !reflect.DeepEqual(vals, tt.wantArgs) {
				t.Errorf("rebind(%q) args = %v, want %v", tt.query, vals, tt.wantArgs)
			}
		})
	}
}

// Every SQLite migration has its PostgreSQL translation under the same
// number and name: a migration added for one engine only fails here.
func TestEveryMigrationHasAPostgresTranslation(t *testing.T) {
	lite, err := migrations(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := migrations(Postgres)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for _, m := range pg {
		names[m.version] = m.name
	}
	for _, m := range lite {
		if got, ok := names[m.version]; !ok || got != m.name {
			t.Errorf("migrations/%04d_%s.sql has no migrations/postgres/%04d_%s.sql (found %q): translate it", m.version, m.name, m.version, m.name, got)
		}
	}
	if len(pg) != len(lite) {
		t.Errorf("%d PostgreSQL migrations for %d SQLite ones", len(pg), len(lite))
	}
}

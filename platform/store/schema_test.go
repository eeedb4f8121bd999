package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// The migrations exist twice, migrations/*.sql for SQLite and
// migrations/postgres/*.sql for PostgreSQL, written by hand. This test
// migrates a fresh database on each engine and compares what the two sets
// of files built, in the common vocabulary below, so that a column, index,
// default or trigger added, changed or forgotten on one engine only fails
// here with both engines' values.
//
// What is compared: tables, their columns (type, nullability, default),
// primary keys, foreign keys (columns, parent, ON UPDATE and ON DELETE),
// unique constraints, indexes (name, table, columns in order with their
// direction, uniqueness, the partial WHERE), triggers (name, table, timing,
// event), views and functions. River's tables and functions (river_*) and
// the bookkeeping table schema_migrations are left out: River migrates its
// own schema, on PostgreSQL only. CHECK constraints are not compared (no
// engine hands them back in a form worth normalising); the domain tests
// that hit them run on both engines.
//
// The common vocabulary, strict on purpose:
//
//   - Types map by exact declared name, one to one: SQLite INTEGER is
//     PostgreSQL BIGINT (both 64 bits; PostgreSQL's 32-bit INTEGER would
//     overflow where SQLite does not, so it maps to nothing), TEXT is TEXT,
//     REAL is DOUBLE PRECISION, BLOB is BYTEA. Any other declared type is
//     reported as it is, on the engine that has it.
//   - A primary-key column is NOT NULL. PostgreSQL says so; SQLite lets a
//     non-INTEGER primary key hold NULL for compatibility with its old
//     versions, which Warden never relies on (every insert names its key).
//   - A default is compared as written, without PostgreSQL's casts
//     (''::text is '') and without enclosing parentheses. A column that
//     numbers itself is "identity": SQLite's INTEGER PRIMARY KEY
//     AUTOINCREMENT, PostgreSQL's GENERATED … AS IDENTITY; neither reuses a
//     number. (SQLite's INTEGER PRIMARY KEY without AUTOINCREMENT also
//     numbers a row inserted without it, but may reuse the number of the
//     last row deleted; it is compared as what it was declared, a plain
//     key, and code must name it, as PostgreSQL requires.)
//   - An index made by a PRIMARY KEY is not compared as an index (the key
//     is); one made by a UNIQUE constraint has no name to compare (SQLite
//     names it sqlite_autoindex_…, PostgreSQL <table>_<column>_key) and is
//     compared by table and columns. A partial index's WHERE is compared
//     lower-cased, without parentheses and PostgreSQL's casts.
//
// Where the engines differ on purpose, the difference is listed in
// engineDifferences, with the reason; the comparison itself is not
// loosened for it.

// engineDifferences are the differences the migrations make on purpose,
// exactly as the comparison reports them. An entry that no longer matches
// a difference fails the test too, so the list stays true.
var engineDifferences = []schemaDifference{
	{
		What:     "function warden_refuse",
		SQLite:   "(none)",
		Postgres: "present",
		Why: "the append-only triggers' body: a SQLite trigger refuses with RAISE(ABORT, …) inline, " +
			"a PostgreSQL trigger must EXECUTE FUNCTION, and this one raises the message the trigger names",
	},
	{
		What:     "function spend_add",
		SQLite:   "(none)",
		Postgres: "present",
		Why:      "the spend totals' upsert, which the PostgreSQL trigger functions below share; SQLite's triggers write it inline",
	},
	{
		What:     "function spend_journeys",
		SQLite:   "(none)",
		Postgres: "present",
		Why:      "the body of the journeys' spend triggers (0037): a SQLite trigger writes spend_totals and top_journeys inline, a PostgreSQL trigger must EXECUTE FUNCTION",
	},
	{
		What:     "function spend_actions",
		SQLite:   "(none)",
		Postgres: "present",
		Why:      "the body of the actions' spend triggers (0037), as spend_journeys",
	},
	{
		What:     "function spend_model_calls",
		SQLite:   "(none)",
		Postgres: "present",
		Why:      "the body of the model calls' spend triggers (0037), as spend_journeys",
	},
}

// TestMigrationsBuildTheSameSchemaOnBothEngines is the check above. It
// needs both engines at once: SQLite in a temporary directory, and
// PostgreSQL at WARDEN_TEST_POSTGRES, without which it is skipped.
func TestMigrationsBuildTheSameSchemaOnBothEngines(t *testing.T) {
	ctx := context.Background()
	lite, err := store.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	ls := readSQLiteSchema(t, lite.Read())
	if !storetest.Postgres() {
		t.Skipf("comparing the two engines' schemas needs PostgreSQL: set %s (read SQLite's: %d tables)", storetest.EnvPostgres, len(ls.tables))
	}
	pg := storetest.Open(t)
	ps := readPostgresSchema(t, pg.Read())

	diffs := compareSchemas(ls, ps)
	deliberate := map[schemaDifference]bool{}
	for _, d := range engineDifferences {
		deliberate[schemaDifference{What: d.What, SQLite: d.SQLite, Postgres: d.Postgres}] = false
	}
	for _, d := range diffs {
		if _, ok := deliberate[d]; ok {
			deliberate[d] = true
			continue
		}
		t.Errorf("%s: SQLite %s, PostgreSQL %s", d.What, d.SQLite, d.Postgres)
	}
	for _, d := range engineDifferences {
		if !deliberate[schemaDifference{What: d.What, SQLite: d.SQLite, Postgres: d.Postgres}] {
			t.Errorf("engineDifferences lists %q (SQLite %s, PostgreSQL %s), which the migrations no longer make: remove it",
				d.What, d.SQLite, d.Postgres)
		}
	}
	if t.Failed() {
		t.Log("fix the drift with a new migration on the engine that lacks it (never by editing an applied one), " +
			"or, if the engines must differ, add the difference to engineDifferences with its reason")
	}
	if len(ls.tables) < 20 || len(ls.tables) != len(ps.tables) || len(ls.indexes) < 20 {
		t.Errorf("read %d tables and %d indexes on SQLite, %d and %d on PostgreSQL: the readers missed the schema",
			len(ls.tables), len(ls.indexes), len(ps.tables), len(ps.indexes))
	}

	// The comparison sees a change made on one engine only: a column, an
	// index, a default.
	t.Run("sees a change on one engine", func(t *testing.T) {
		for _, stmt := range []string{
			`ALTER TABLE tenants ADD COLUMN drift_probe INTEGER NOT NULL DEFAULT 0`,
			`CREATE INDEX drift_probe_index ON tenants (name)`,
		} {
			if _, err := lite.Read().ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		got := compareSchemas(readSQLiteSchema(t, lite.Read()), ps)
		for _, want := range []schemaDifference{
			{What: "column tenants.drift_probe", SQLite: "integer not null default 0", Postgres: "(none)"},
			{What: "index drift_probe_index", SQLite: "on tenants (name)", Postgres: "(none)"},
		} {
			if !slices.Contains(got, want) {
				t.Errorf("after a change on SQLite only, the differences are %v; want among them %v", got, want)
			}
		}
	})
}

// schemaDifference is one thing the engines disagree on, each side in the
// common vocabulary ("(none)" when it has no such thing).
type schemaDifference struct {
	What, SQLite, Postgres string
	Why                    string // engineDifferences only
}

// schemaFacts is a migrated schema as the comparison sees it: a flat map
// from what (a table's column, a table's primary key, an index …) to its
// description in the common vocabulary, so that a difference names the
// thing and both values.
type schemaFacts struct {
	tables  map[string]bool
	indexes map[string]bool
	facts   map[string]string
}

func newFacts() *schemaFacts {
	return &schemaFacts{tables: map[string]bool{}, indexes: map[string]bool{}, facts: map[string]string{}}
}

func (s *schemaFacts) set(t *testing.T, what, value string) {
	t.Helper()
	if old, ok := s.facts[what]; ok {
		t.Fatalf("%s read twice: %q and %q", what, old, value)
	}
	s.facts[what] = value
}

// compareSchemas lists the differences, sorted. A table only one engine
// has is one difference, not one per column.
func compareSchemas(lite, pg *schemaFacts) []schemaDifference {
	var out []schemaDifference
	keys := map[string]bool{}
	for k := range lite.facts {
		keys[k] = true
	}
	for k := range pg.facts {
		keys[k] = true
	}
	for k := range keys {
		if tbl, ok := tableOf(k); ok && lite.tables[tbl] != pg.tables[tbl] {
			continue // reported once, as the table
		}
		l, lok := lite.facts[k]
		p, pok := pg.facts[k]
		if !lok {
			l = "(none)"
		}
		if !pok {
			p = "(none)"
		}
		if l != p {
			out = append(out, schemaDifference{What: k, SQLite: l, Postgres: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].What < out[j].What })
	return out
}

// tableOf is the table a column or key fact belongs to.
func tableOf(what string) (string, bool) {
	for _, p := range []string{"column ", "primary key of ", "foreign key of ", "unique constraint on "} {
		if rest, ok := strings.CutPrefix(what, p); ok {
			tbl, _, _ := strings.Cut(rest, ".")
			tbl, _, _ = strings.Cut(tbl, " ")
			return tbl, true
		}
	}
	return "", false
}

// commonType is a declared type in the common vocabulary.
func commonType(engine, declared string) string {
	vocabulary := map[string]map[string]string{
		"sqlite":   {"INTEGER": "integer", "TEXT": "text", "REAL": "real", "BLOB": "blob"},
		"postgres": {"bigint": "integer", "text": "text", "double precision": "real", "bytea": "blob"},
	}
	if c, ok := vocabulary[engine][declared]; ok {
		return c
	}
	return fmt.Sprintf("%q (no common type)", declared)
}

func describeColumn(typ string, notNull bool, dflt string) string {
	s := typ
	if notNull {
		s += " not null"
	} else {
		s += " null"
	}
	if dflt != "" {
		s += " default " + dflt
	}
	return s
}

var pgCast = regexp.MustCompile(`::(text|bigint|integer|numeric|double precision|character varying|boolean|bytea)\b`)

// normalDefault is a default as written, without casts and enclosing
// parentheses; a number PostgreSQL quoted to cast it ('-1'::bigint) is
// the number.
func normalDefault(d string) string {
	d = strings.TrimSpace(pgCast.ReplaceAllString(d, ""))
	for strings.HasPrefix(d, "(") && strings.HasSuffix(d, ")") {
		d = strings.TrimSpace(d[1 : len(d)-1])
	}
	if len(d) > 2 && d[0] == '\'' && d[len(d)-1] == '\'' && regexp.MustCompile(`^-?[0-9.]+$`).MatchString(d[1:len(d)-1]) {
		d = d[1 : len(d)-1]
	}
	return d
}

// normalPredicate is a partial index's WHERE, lower-cased, without
// parentheses, casts and extra spaces.
func normalPredicate(w string) string {
	w = pgCast.ReplaceAllString(strings.ToLower(w), "")
	w = strings.NewReplacer("(", " ", ")", " ", ";", " ").Replace(w)
	return strings.Join(strings.Fields(w), " ")
}

func describeIndex(table string, columns []string, unique bool, where string) string {
	s := "on " + table + " (" + strings.Join(columns, ", ") + ")"
	if unique {
		s = "unique " + s
	}
	if where != "" {
		s += " where " + normalPredicate(where)
	}
	return s
}

func ignoredTable(name string) bool {
	return name == "schema_migrations" || strings.HasPrefix(name, "river_")
}

// rows runs a query and hands each row to scan.
func rows(t *testing.T, q store.Querier, scan func(*sql.Rows) error, query string, args ...any) {
	t.Helper()
	rs, err := q.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

var (
	sqliteAutoincrement = regexp.MustCompile(`(?i)\bAUTOINCREMENT\b`)
	sqliteWhere         = regexp.MustCompile(`(?is)\)\s*WHERE\s+(.*)$`)
	sqliteTrigger       = regexp.MustCompile(`(?is)^CREATE\s+TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+(BEFORE|AFTER|INSTEAD\s+OF)?\s*(INSERT|DELETE|UPDATE)\b.*?\bON\s+"?(\w+)"?`)
)

// readSQLiteSchema reads the schema from sqlite_schema and the table,
// index and foreign-key pragmas.
func readSQLiteSchema(t *testing.T, db *sql.DB) *schemaFacts {
	t.Helper()
	s := newFacts()
	type tbl struct{ name, sql string }
	var tables []tbl
	rows(t, db, func(r *sql.Rows) error {
		var x tbl
		err := r.Scan(&x.name, &x.sql)
		tables = append(tables, x)
		return err
	}, `SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	for _, tb := range tables {
		if ignoredTable(tb.name) {
			continue
		}
		s.tables[tb.name] = true
		s.set(t, "table "+tb.name, "present")
		pk := map[int]string{}
		var pkType string
		rows(t, db, func(r *sql.Rows) error {
			var name, typ, dflt string
			var notNull bool
			var pkPos int
			if err := r.Scan(&name, &typ, &notNull, &dflt, &pkPos); err != nil {
				return err
			}
			if pkPos > 0 {
				pk[pkPos] = name
				pkType = typ
				notNull = true
			}
			s.set(t, "column "+tb.name+"."+name, describeColumn(commonType("sqlite", typ), notNull, normalDefault(dflt)))
			return nil
		}, `SELECT name, type, "notnull", COALESCE(dflt_value, ''), pk FROM pragma_table_info(?)`, tb.name)
		if len(pk) == 1 && strings.EqualFold(pkType, "INTEGER") && sqliteAutoincrement.MatchString(tb.sql) {
			c := "column " + tb.name + "." + pk[1]
			s.facts[c] = describeColumn("integer", true, "identity")
		}
		if len(pk) > 0 {
			cols := make([]string, len(pk))
			for i := range cols {
				cols[i] = pk[i+1]
			}
			s.set(t, "primary key of "+tb.name, "("+strings.Join(cols, ", ")+")")
		}

		type fk struct {
			parent, onUpdate, onDelete string
			from, to                   []string
		}
		fks := map[int]*fk{}
		rows(t, db, func(r *sql.Rows) error {
			var id, seq int
			var parent, from, onUpdate, onDelete string
			var to sql.NullString
			if err := r.Scan(&id, &seq, &parent, &from, &to, &onUpdate, &onDelete); err != nil {
				return err
			}
			f := fks[id]
			if f == nil {
				f = &fk{parent: parent, onUpdate: onUpdate, onDelete: onDelete}
				fks[id] = f
			}
			f.from = append(f.from, from)
			f.to = append(f.to, to.String)
			return nil
		}, `SELECT id, seq, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, tb.name)
		for _, f := range fks {
			if f.to[0] == "" { // REFERENCES parent: its primary key
				f.to = nil
				rows(t, db, func(r *sql.Rows) error {
					var c string
					err := r.Scan(&c)
					f.to = append(f.to, c)
					return err
				}, `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, f.parent)
			}
			s.set(t, "foreign key of "+tb.name+" ("+strings.Join(f.from, ", ")+")",
				fmt.Sprintf("references %s (%s) on update %s on delete %s",
					f.parent, strings.Join(f.to, ", "), strings.ToLower(f.onUpdate), strings.ToLower(f.onDelete)))
		}

		type idx struct {
			name, origin string
			unique       bool
		}
		var idxs []idx
		rows(t, db, func(r *sql.Rows) error {
			var x idx
			err := r.Scan(&x.name, &x.unique, &x.origin)
			idxs = append(idxs, x)
			return err
		}, `SELECT name, "unique", origin FROM pragma_index_list(?)`, tb.name)
		for _, ix := range idxs {
			if ix.origin == "pk" {
				continue
			}
			var cols []string
			rows(t, db, func(r *sql.Rows) error {
				var name sql.NullString
				var desc bool
				if err := r.Scan(&name, &desc); err != nil {
					return err
				}
				c := name.String
				if !name.Valid {
					c = "(an expression)"
				}
				if desc {
					c += " desc"
				}
				cols = append(cols, c)
				return nil
			}, `SELECT name, "desc" FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`, ix.name)
			if ix.origin == "u" {
				s.set(t, "unique constraint on "+tb.name+" ("+strings.Join(cols, ", ")+")", "present")
				continue
			}
			var def string
			if err := db.QueryRow(`SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?`, ix.name).Scan(&def); err != nil {
				t.Fatalf("index %s: %v", ix.name, err)
			}
			var where string
			if m := sqliteWhere.FindStringSubmatch(def); m != nil {
				where = m[1]
			}
			s.indexes[ix.name] = true
			s.set(t, "index "+ix.name, describeIndex(tb.name, cols, ix.unique, where))
		}
	}
	rows(t, db, func(r *sql.Rows) error {
		var name, table, def string
		if err := r.Scan(&name, &table, &def); err != nil {
			return err
		}
		if ignoredTable(table) {
			return nil
		}
		m := sqliteTrigger.FindStringSubmatch(def)
		if m == nil {
			return fmt.Errorf("trigger %s: cannot read %q", name, def)
		}
		timing := m[1]
		if timing == "" {
			timing = "BEFORE" // SQLite's default
		}
		s.set(t, "trigger "+name, strings.ToLower(strings.Join(strings.Fields(timing), " ")+" "+m[2]+" on "+m[3]+" for each row"))
		return nil
	}, `SELECT name, tbl_name, sql FROM sqlite_schema WHERE type = 'trigger'`)
	rows(t, db, func(r *sql.Rows) error {
		var name string
		err := r.Scan(&name)
		s.set(t, "view "+name, "present")
		return err
	}, `SELECT name FROM sqlite_schema WHERE type = 'view'`)
	return s
}

// readPostgresSchema reads the schema the connection works in
// (current_schema()) from information_schema and pg_catalog.
func readPostgresSchema(t *testing.T, db *sql.DB) *schemaFacts {
	t.Helper()
	s := newFacts()
	rows(t, db, func(r *sql.Rows) error {
		var name string
		if err := r.Scan(&name); err != nil {
			return err
		}
		if !ignoredTable(name) {
			s.tables[name] = true
			s.set(t, "table "+name, "present")
		}
		return nil
	}, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)

	pkCols := map[string]bool{}
	rows(t, db, func(r *sql.Rows) error {
		var table, cols string
		if err := r.Scan(&table, &cols); err != nil {
			return err
		}
		if !ignoredTable(table) {
			s.set(t, "primary key of "+table, "("+cols+")")
			for _, c := range strings.Split(cols, ", ") {
				pkCols[table+"."+c] = true
			}
		}
		return nil
	}, `SELECT tc.relname, array_to_string(ARRAY(
			SELECT a.attname FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
			JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum ORDER BY k.n), ', ')
		FROM pg_index ix
		JOIN pg_class tc ON tc.oid = ix.indrelid
		JOIN pg_namespace ns ON ns.oid = tc.relnamespace
		WHERE ns.nspname = current_schema() AND ix.indisprimary`)

	rows(t, db, func(r *sql.Rows) error {
		var table, name, typ, nullable, dflt, identity string
		if err := r.Scan(&table, &name, &typ, &nullable, &dflt, &identity); err != nil {
			return err
		}
		if !s.tables[table] {
			return nil
		}
		dflt = normalDefault(dflt)
		if identity == "YES" || strings.HasPrefix(dflt, "nextval(") {
			dflt = "identity"
		}
		s.set(t, "column "+table+"."+name, describeColumn(commonType("postgres", typ), nullable == "NO", dflt))
		return nil
	}, `SELECT table_name, column_name, data_type, is_nullable, COALESCE(column_default, ''), is_identity
		FROM information_schema.columns WHERE table_schema = current_schema()`)

	rows(t, db, func(r *sql.Rows) error {
		var table, from, parent, to, onUpdate, onDelete string
		if err := r.Scan(&table, &from, &parent, &to, &onUpdate, &onDelete); err != nil {
			return err
		}
		if !ignoredTable(table) {
			s.set(t, "foreign key of "+table+" ("+from+")",
				fmt.Sprintf("references %s (%s) on update %s on delete %s", parent, to, fkAction(onUpdate), fkAction(onDelete)))
		}
		return nil
	}, `SELECT tc.relname,
			array_to_string(ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, n)
				JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.n), ', '),
			pc.relname,
			array_to_string(ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, n)
				JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.n), ', '),
			con.confupdtype::text, con.confdeltype::text
		FROM pg_constraint con
		JOIN pg_class tc ON tc.oid = con.conrelid
		JOIN pg_class pc ON pc.oid = con.confrelid
		JOIN pg_namespace ns ON ns.oid = tc.relnamespace
		WHERE ns.nspname = current_schema() AND con.contype = 'f'`)

	rows(t, db, func(r *sql.Rows) error {
		var name, table, cols, where string
		var unique, primary, constraint bool
		if err := r.Scan(&name, &table, &unique, &primary, &constraint, &where, &cols); err != nil {
			return err
		}
		switch {
		case ignoredTable(table) || primary:
		case constraint:
			s.set(t, "unique constraint on "+table+" ("+cols+")", "present")
		default:
			s.indexes[name] = true
			s.set(t, "index "+name, describeIndex(table, strings.Split(cols, ", "), unique, where))
		}
		return nil
	}, `SELECT ic.relname, tc.relname, ix.indisunique, ix.indisprimary,
			EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid AND con.conrelid = ix.indrelid AND con.contype IN ('p', 'u')),
			COALESCE(pg_get_expr(ix.indpred, ix.indrelid), ''),
			array_to_string(ARRAY(
				SELECT COALESCE(a.attname, '(an expression)') || CASE WHEN ix.indoption[k.n - 1] & 1 = 1 THEN ' desc' ELSE '' END
				FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
				LEFT JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum AND k.attnum <> 0
				WHERE k.n <= ix.indnkeyatts ORDER BY k.n), ', ')
		FROM pg_index ix
		JOIN pg_class ic ON ic.oid = ix.indexrelid
		JOIN pg_class tc ON tc.oid = ix.indrelid
		JOIN pg_namespace ns ON ns.oid = tc.relnamespace
		WHERE ns.nspname = current_schema()`)

	rows(t, db, func(r *sql.Rows) error {
		var name, table, timing, events, orientation string
		if err := r.Scan(&name, &table, &timing, &events, &orientation); err != nil {
			return err
		}
		if !ignoredTable(table) {
			s.set(t, "trigger "+name, strings.ToLower(timing+" "+events+" on "+table+" for each "+orientation))
		}
		return nil
	}, `SELECT trigger_name, event_object_table, action_timing,
			string_agg(event_manipulation, ' or ' ORDER BY event_manipulation), action_orientation
		FROM information_schema.triggers WHERE trigger_schema = current_schema()
		GROUP BY trigger_name, event_object_table, action_timing, action_orientation`)

	rows(t, db, func(r *sql.Rows) error {
		var name string
		err := r.Scan(&name)
		s.set(t, "view "+name, "present")
		return err
	}, `SELECT table_name FROM information_schema.views WHERE table_schema = current_schema()`)

	rows(t, db, func(r *sql.Rows) error {
		var name string
		if err := r.Scan(&name); err != nil {
			return err
		}
		if !strings.HasPrefix(name, "river_") {
			s.facts["function "+name] = "present" // overloads are one function here
		}
		return nil
	}, `SELECT p.proname FROM pg_proc p JOIN pg_namespace ns ON ns.oid = p.pronamespace WHERE ns.nspname = current_schema()`)
	return s
}

// fkAction names pg_constraint's action codes as SQLite's pragma does.
func fkAction(code string) string {
	switch code {
	case "a":
		return "no action"
	case "r":
		return "restrict"
	case "c":
		return "cascade"
	case "n":
		return "set null"
	case "d":
		return "set default"
	}
	return fmt.Sprintf("%q (unknown action)", code)
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ErrTargetNotEmpty is CheckEmptyTarget's error when the target holds rows.
var ErrTargetNotEmpty = errors.New("the target database is not empty")

// derivedTables are the tables the target's triggers fill as the rows of
// others arrive (the spend totals of migration 0037: spend_totals and
// top_journeys, from journeys, actions and model_calls). CopyAll copies
// them last and clears what the triggers wrote first, so they arrive as
// the source holds them: spend whose journeys retention had deleted
// stays counted, and nothing is counted twice.
var derivedTables = []string{"spend_totals", "top_journeys"}

// seededTables are the tables a migration fills with one default row (the
// notification timing settings of migration 0036): CopyAll clears the
// target's default before copying the source's row in its place.
var seededTables = []string{"notify_settings"}

// CopyTable is one table CopyAll copied, with its row counts on both sides.
type CopyTable struct {
	Name           string
	Source, Target int64
}

// Tables lists the tables of a SQLite database (schema_migrations and
// SQLite's own excluded) in an order in which every table comes after the
// tables its foreign keys reference, so that rows inserted in this order
// satisfy every foreign key.
func (db *DB) Tables(ctx context.Context) ([]string, error) {
	if db.dialect != SQLite {
		return nil, errors.New("tables: the source of a copy is a SQLite database")
	}
	all, err := TableNames(ctx, db.read)
	if err != nil {
		return nil, err
	}
	names := slices.DeleteFunc(all, func(n string) bool { return n == "schema_migrations" })
	deps := make(map[string][]string, len(names))
	for _, n := range names {
		refs, err := Strings(ctx, db.read, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, n)
		if err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", n, err)
		}
		deps[n] = refs
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string) error
	visit = func(n string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("foreign keys of %s form a cycle", n)
		case 2:
			return nil
		}
		state[n] = 1
		for _, d := range deps[n] {
			if d != n && slices.Contains(names, d) {
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		state[n] = 2
		order = append(order, n)
		return nil
	}
	for _, n := range names {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// CheckEmptyTarget returns ErrTargetNotEmpty, naming the tables, when any
// table of the PostgreSQL database db (schema_migrations aside) holds a
// row. It only reads.
func CheckEmptyTarget(ctx context.Context, db *DB) error {
	if db.dialect != Postgres {
		return errors.New("the target of a copy is a PostgreSQL database")
	}
	tables, err := TableNames(ctx, db.read)
	if err != nil {
		return fmt.Errorf("the target: %w", err)
	}
	var full []string
	for _, t := range tables {
		if t == "schema_migrations" || slices.Contains(seededTables, t) {
			continue // a seeded default is replaced by the copy
		}
		var any bool
		if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+quoteIdent(t)+`)`).Scan(&any); err != nil {
			return fmt.Errorf("read %s on the target: %w", t, err)
		}
		if any {
			full = append(full, t)
		}
	}
	if len(full) > 0 {
		return fmt.Errorf("%w: %s hold rows; migrate into a new, empty database", ErrTargetNotEmpty, strings.Join(full, ", "))
	}
	return nil
}

// CopyAll copies every table of the SQLite database src into the
// migrated, empty PostgreSQL database dst, in foreign-key order, batch
// rows per transaction, reading src in one read transaction (one
// snapshot). Values are copied as they are stored, so the audit chain's
// seq, hashes and signatures arrive unchanged. Identity columns'
// sequences are then moved past the copied ids. progress, if not nil, is
// called after each table.
//
// The copy only inserts. The append-only triggers on the target refuse
// UPDATE and DELETE, so they stay enabled and need no session setting;
// foreign keys stay checked too, which the order satisfies. The spend
// triggers stay enabled as well: the tables they fill (derivedTables)
// are copied last, after what they wrote is cleared.
func CopyAll(ctx context.Context, src, dst *DB, batch int, progress func(CopyTable)) ([]CopyTable, error) {
	if src.dialect != SQLite || dst.dialect != Postgres {
		return nil, errors.New("copy: from SQLite to PostgreSQL only")
	}
	if batch <= 0 {
		batch = 500
	}
	tables, err := src.Tables(ctx)
	if err != nil {
		return nil, err
	}
	// Derived tables last, in the order listed.
	tables = slices.DeleteFunc(tables, func(t string) bool { return slices.Contains(derivedTables, t) })
	tables = append(tables, derivedTables...)
	rtx, err := src.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read the source: %w", err)
	}
	defer rtx.Rollback()

	var out []CopyTable
	for _, t := range tables {
		if slices.Contains(derivedTables, t) || slices.Contains(seededTables, t) {
			if err := dst.Transact(ctx, func(tx *Tx) error { _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(t)); return err }); err != nil {
				return out, fmt.Errorf("clear %s on the target: %w", t, err)
			}
		}
		n, err := copyTable(ctx, &Tx{Tx: rtx, dialect: src.dialect}, dst, t, batch)
		if err != nil {
			return out, fmt.Errorf("copy %s: %w", t, err)
		}
		ct := CopyTable{Name: t, Source: n}
		out = append(out, ct)
		if progress != nil {
			progress(ct)
		}
	}
	if err := resetIdentities(ctx, dst); err != nil {
		return out, err
	}
	return out, nil
}

func copyTable(ctx context.Context, rtx *Tx, dst *DB, table string, batch int) (int64, error) {
	cols, err := Strings(ctx, rtx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return 0, err
	}
	target, err := Strings(ctx, dst.read, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ?`, table)
	if err != nil {
		return 0, err
	}
	if len(target) == 0 {
		return 0, fmt.Errorf("the target has no table %s", table)
	}
	for _, c := range cols {
		if !slices.Contains(target, c) {
			return 0, fmt.Errorf("the target's %s has no column %s", table, c)
		}
	}
	// Rows per statement: PostgreSQL takes at most 65535 parameters.
	per := max(1, min(batch, 60000/len(cols)))
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = quoteIdent(c)
	}
	rows, err := rtx.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+quoteIdent(table)+` ORDER BY rowid`)
	if err != nil {
		// A WITHOUT ROWID table: its primary key orders it.
		rows, err = rtx.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+quoteIdent(table))
	}
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	insert := `INSERT INTO ` + quoteIdent(table) + ` (` + strings.Join(quoted, ", ") + `) VALUES `
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var n int64
	var pending [][]any
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		// Rows of one batch commit together; statements of at most per
		// rows each.
		err := dst.Transact(ctx, func(tx *Tx) error {
			for start := 0; start < len(pending); start += per {
				chunk := pending[start:min(start+per, len(pending))]
				args := make([]any, 0, len(chunk)*len(cols))
				parts := make([]string, len(chunk))
				for i, r := range chunk {
					parts[i] = row
					args = append(args, r...)
				}
				if _, err := tx.ExecContext(ctx, insert+strings.Join(parts, ", "), args...); err != nil {
					return err
				}
			}
			return nil
		})
		pending = pending[:0]
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		pending = append(pending, vals)
		n++
		if len(pending) >= batch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// resetIdentities moves each identity column's sequence past the largest
// id copied, so that the next row PostgreSQL numbers does not collide.
func resetIdentities(ctx context.Context, dst *DB) error {
	rows, err := dst.read.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("list identity columns: %w", err)
	}
	var ids [][2]string
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, [2]string{t, c})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		q := `SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT MAX(` + quoteIdent(id[1]) + `) FROM ` + quoteIdent(id[0]) + `), 0) + 1, false)`
		if _, err := dst.write.ExecContext(ctx, q, quoteIdent(id[0]), id[1]); err != nil {
			return fmt.Errorf("move the sequence of %s.%s: %w", id[0], id[1], err)
		}
	}
	return nil
}

// CountRows counts the rows of each table on db, sorted by name.
func CountRows(ctx context.Context, db *DB, tables []string) (map[string]int64, error) {
	out := make(map[string]int64, len(tables))
	sorted := slices.Clone(tables)
	sort.Strings(sorted)
	for _, t := range sorted {
		var n int64
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(t)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

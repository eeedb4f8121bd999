package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SQLite's migrations are migrations/*.sql; PostgreSQL's are
// migrations/postgres/*.sql, the same numbers translated (times stay TEXT
// in FormatTime's form, so domain code reads and compares them alike).
// TestMigrationsBuildTheSameSchemaOnBothEngines compares what the two
// sets build.
//
//go:embed migrations/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migrationDir is where a dialect's migrations are embedded.
func migrationDir(d Dialect) string {
	if d == Postgres {
		return "migrations/postgres"
	}
	return "migrations"
}

type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the dialect's embedded files named NNNN_name.sql in
// order.
func migrations(d Dialect) ([]migration, error) {
	dir := migrationDir(d)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration file %q is not named NNNN_name.sql", e.Name())
		}
		body, err := migrationFiles.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %d (%s) is out of sequence: want %d", m.version, m.name, i+1)
		}
	}
	return out, nil
}

func latestVersion(d Dialect) int {
	ms, err := migrations(d)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

func (db *DB) appliedVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, err
	}
	return int(v.Int64), nil
}

// migrate applies, in order and each in its own transaction, the embedded
// migrations newer than the recorded version.
func (db *DB) migrate(ctx context.Context) error {
	if db.dialect == Postgres {
		return db.migratePostgres(ctx)
	}
	ms, err := migrations(SQLite)
	if err != nil {
		return err
	}
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := db.TransactAlone(ctx, func(tx *Tx) error {
			// Checked inside the transaction: two processes starting at
			// once serialise on BEGIN IMMEDIATE and the second skips.
			return applyMigration(ctx, db, tx, m)
		})
		if err != nil {
			return fmt.Errorf("apply migration %04d_%s: %w", m.version, m.name, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *DB, tx *Tx, m migration) error {
	applied, err := db.appliedVersion(ctx, tx)
	if err != nil {
		return err
	}
	if m.version <= applied {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UTC().Format(time.RFC3339Nano))
	return err
}

// migrationLock is the session advisory lock replicas starting together
// take before migrating PostgreSQL: one migrates, the others wait and
// then find nothing to do.
const migrationLock = 0x77617264656e // "warden"

// migratePostgres applies PostgreSQL's migrations on one connection that
// holds the migration lock throughout; each migration is its own
// transaction (DDL is transactional there).
func (db *DB) migratePostgres(ctx context.Context) (err error) {
	ms, err := migrations(Postgres)
	if err != nil {
		return err
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer func() {
		// A session lock outlives a failed transaction; release it on a
		// context that is not cancelled, or drop the connection.
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(?)`, int64(migrationLock)); uerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := func() (err error) {
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer func() {
				if err != nil {
					_ = tx.Rollback()
				}
			}()
			if err := applyMigration(ctx, db, &Tx{Tx: tx, dialect: db.dialect}, m); err != nil {
				return err
			}
			return tx.Commit()
		}()
		if err != nil {
			return fmt.Errorf("apply migration %04d_%s: %w", m.version, m.name, err)
		}
	}
	// River's tables (the durable job queue on PostgreSQL) follow, under
	// the same lock.
	return migrateRiver(ctx, db.dsn)
}

// LatestVersion is the newest migration this binary embeds for d.
func LatestVersion(d Dialect) int { return latestVersion(d) }

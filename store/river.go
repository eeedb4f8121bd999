package store

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// migrateRiver brings River's schema up to date on PostgreSQL: river_job
// and its companions, where agent/jobs keeps durable jobs on that engine.
// It runs on the connection that holds Warden's migration lock, after
// Warden's own migrations, so two replicas starting together migrate
// once; each River version is its own transaction (one adds an enum value
// that the next uses, which PostgreSQL refuses within one transaction).
// River versions its schema itself (the river_migration table), so
// upgrading River upgrades it here. SQLite has no River tables: its jobs
// stay in the jobs table.
func migrateRiver(ctx context.Context, conn *sql.Conn) error {
	m, err := rivermigrate.New(riverdatabasesql.New(nil), &rivermigrate.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	for {
		n, err := riverStep(ctx, conn, m)
		if err != nil {
			return fmt.Errorf("migrate river: %w", err)
		}
		if n == 0 {
			return nil
		}
	}
}

// riverStep applies River's next migration, if any, and reports how many
// it applied.
func riverStep(ctx context.Context, conn *sql.Conn, m *rivermigrate.Migrator[*sql.Tx]) (n int, err error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	res, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{MaxSteps: 1})
	if err != nil {
		return 0, err
	}
	return len(res.Versions), tx.Commit()
}

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
// and its companions, where platform/jobs keeps durable jobs on that engine.
// The caller holds Warden's migration lock on a connection of its own and
// has applied Warden's own migrations, so two replicas starting together
// migrate once; River migrates on one more connection, opened here and
// closed when it is done, so a pool of one (WARDEN_DB_MAX_CONNS=1) does
// not wait on itself. River's Migrate runs each of its
// versions in a transaction of its own (one adds an enum value that the
// next uses, which PostgreSQL refuses within one transaction) and
// versions its schema itself (the river_migration table), so upgrading
// River upgrades it here. SQLite has no River tables: its jobs stay in
// the jobs table.
func migrateRiver(ctx context.Context, dsn string) error {
	pool, err := sql.Open(pgDriverName, dsn)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	defer pool.Close()
	pool.SetMaxOpenConns(1)
	m, err := rivermigrate.New(riverdatabasesql.New(pool), &rivermigrate.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}

package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
)

func TestRetentionDeletesOnlyOldTraces(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t)
	key, _ := redact.LoadOrCreateKey(dir)
	rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	now := time.Now().UTC()
	day := 24 * time.Hour
	err = db.Transact(ctx, func(tx *store.Tx) error {
		var errs []error
		exec := func(q string, args ...any) {
			_, err := tx.Exec(q, args...)
			errs = append(errs, err)
		}
		a, err := tenants.Insert(ctx, tx, "acme", "Acme") // default 30 days
		if err != nil {
			return err
		}
		g, err := tenants.Insert(ctx, tx, "globex", "Globex") // 7 days
		if err != nil {
			return err
		}
		exec(`UPDATE tenants SET trace_retention_days = 7 WHERE id = ?`, g.ID)
		ins := func(id, tenant, status string, age time.Duration) {
			exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, created_at) VALUES (?, ?, 'r', 'c', 'x', ?, ?)`,
				id, tenant, status, store.FormatTime(now.Add(-age)))
			exec(`INSERT INTO journey_steps (journey_id, n, kind, status, started_at) VALUES (?, 1, 'route', 'ok', ?)`, id, store.FormatTime(now))
		}
		ins("acme-old", a.ID, "completed", 31*day)
		ins("acme-new", a.ID, "completed", 29*day)
		ins("acme-waiting", a.ID, "awaiting_approval", 40*day)
		ins("globex-old", g.ID, "failed", 8*day)
		ins("globex-new", g.ID, "completed", 6*day)
		if err := errors.Join(errs...); err != nil {
			return err
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: "system", ID: "t"}, Verb: "test.old", Time: now.Add(-400 * day)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := rt.PurgeTraces(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("purged %d journeys, want 2", n)
	}
	var left []string
	rows, _ := db.Read().Query(`SELECT id FROM journeys ORDER BY id`)
	for rows.Next() {
		var id string
		rows.Scan(&id)
		left = append(left, id)
	}
	rows.Close()
	want := []string{"acme-new", "acme-waiting", "globex-new"}
	if len(left) != len(want) || left[0] != want[0] || left[1] != want[1] || left[2] != want[2] {
		t.Errorf("journeys left = %v, want %v", left, want)
	}
	var steps int
	db.Read().QueryRow(`SELECT COUNT(*) FROM journey_steps`).Scan(&steps)
	if steps != 3 {
		t.Errorf("journal steps left = %d, want 3 (deleted with their journeys)", steps)
	}
	if _, err := audit.Verify(ctx, db.Read(), nil); err != nil {
		t.Errorf("audit chain after retention: %v", err)
	}
	var old int
	db.Read().QueryRow(`SELECT COUNT(*) FROM audit_events WHERE verb = 'test.old'`).Scan(&old)
	if old != 1 {
		t.Error("retention touched the audit trail")
	}
}

func TestSweepEndsInterruptedJourneysAndReleasesReservations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t)
	key, _ := redact.LoadOrCreateKey(dir)
	rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	now := time.Now().UTC()
	err = db.Transact(ctx, func(tx *store.Tx) error {
		a, err := tenants.Insert(ctx, tx, "acme", "Acme")
		if err != nil {
			return err
		}
		_, err1 := tx.Exec(`INSERT INTO budgets (tenant_id, period, limit_micros, reserved_micros, period_start, updated_at) VALUES (?, 'total', 1000000, 700, ?, ?)`,
			a.ID, store.FormatTime(time.Unix(0, 0)), store.Now())
		ins := func(id string, age time.Duration, reserved int) error {
			_, err := tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, reserved_micros, created_at) VALUES (?, ?, 'r', 'c', 'x', 'running', ?, ?)`,
				id, a.ID, reserved, store.FormatTime(now.Add(-age)))
			return err
		}
		return errors.Join(err1, ins("crashed", time.Hour, 500), ins("recent", time.Minute, 200))
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := rt.Journeys.SweepInterrupted(ctx, 15*time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("SweepInterrupted = %d, %v; want 1", n, err)
	}
	var status, code string
	db.Read().QueryRow(`SELECT status, error_code FROM journeys WHERE id = 'crashed'`).Scan(&status, &code)
	var reserved int64
	db.Read().QueryRow(`SELECT reserved_micros FROM budgets`).Scan(&reserved)
	if status != "failed" || code != "interrupted" || reserved != 200 {
		t.Errorf("crashed journey %s/%s, budget reserved %d; want failed/interrupted and 200 left for the recent one", status, code, reserved)
	}
}

// A purge of a range (a runbook's purge_traces) removes only the tenant's
// journeys in [from, to), keeps those awaiting approval, and leaves the
// audit trail as it was.
func TestDeleteRangeRemovesOnlyTheRange(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var acme tenants.Tenant
	err := db.Transact(ctx, func(tx *store.Tx) error {
		acme, _ = tenants.Insert(ctx, tx, "acme", "Acme")
		g, _ := tenants.Insert(ctx, tx, "globex", "Globex")
		ins := func(id, tenant, status string, at time.Time) {
			tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, created_at) VALUES (?, ?, 'r', 'c', 'x', ?, ?)`,
				id, tenant, status, store.FormatTime(at))
			tx.Exec(`INSERT INTO journey_steps (journey_id, n, kind, status, started_at) VALUES (?, 1, 'route', 'ok', ?)`, id, store.FormatTime(at))
		}
		ins("before", acme.ID, "completed", base.Add(-time.Second))
		ins("at-from", acme.ID, "completed", base)
		ins("inside", acme.ID, "failed", base.Add(12*time.Hour))
		ins("waiting", acme.ID, "awaiting_approval", base.Add(12*time.Hour))
		ins("at-to", acme.ID, "completed", base.Add(24*time.Hour))
		ins("other-tenant", g.ID, "completed", base.Add(time.Hour))
		_, err := audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: "system", ID: "t"}, Tenant: "acme", Verb: "test.kept", Time: base.Add(time.Hour)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.Transact(ctx, func(tx *store.Tx) (err error) {
		n, err = journeys.DeleteRange(ctx, tx, acme.ID, base, base.Add(24*time.Hour))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("DeleteRange = %d, want 2", n)
	}
	var left []string
	rows, _ := db.Read().Query(`SELECT id FROM journeys ORDER BY id`)
	for rows.Next() {
		var id string
		rows.Scan(&id)
		left = append(left, id)
	}
	rows.Close()
	if want := []string{"at-to", "before", "other-tenant", "waiting"}; !slices.Equal(left, want) {
		t.Errorf("journeys left = %v, want %v", left, want)
	}
	var steps, kept int
	db.Read().QueryRow(`SELECT COUNT(*) FROM journey_steps`).Scan(&steps)
	db.Read().QueryRow(`SELECT COUNT(*) FROM audit_events WHERE verb = 'test.kept'`).Scan(&kept)
	if steps != 4 || kept != 1 {
		t.Errorf("steps left = %d, audit events kept = %d; want 4 and 1", steps, kept)
	}
}

// At start-up every journey admitted before the process started is ended
// and its reservation released, however recent: a kill -9 a minute ago
// must not hold the tenant's budget for the periodic sweep's 15 minutes.
func TestStartupSweepEndsWhatAPreviousProcessLeftRunning(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t)
	var tenant string
	err := db.Transact(ctx, func(tx *store.Tx) error {
		a, err := tenants.Insert(ctx, tx, "acme", "Acme")
		if err != nil {
			return err
		}
		tenant = a.ID
		_, err1 := tx.Exec(`INSERT INTO budgets (tenant_id, period, limit_micros, reserved_micros, period_start, updated_at) VALUES (?, 'total', 1000000, 500, ?, ?)`,
			a.ID, store.FormatTime(time.Unix(0, 0)), store.Now())
		_, err2 := tx.Exec(`INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, reserved_micros, created_at) VALUES ('killed', ?, 'r', 'c', 'x', 'running', 500, ?)`,
			a.ID, store.FormatTime(time.Now().Add(-time.Minute)))
		return errors.Join(err1, err2)
	})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := redact.LoadOrCreateKey(dir)
	rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { rt.Run(runCtx); close(done) }()
	var status string
	var reserved int64
	wait.For(10*time.Second, func() bool {
		db.Read().QueryRow(`SELECT status FROM journeys WHERE id = 'killed'`).Scan(&status)
		db.Read().QueryRow(`SELECT reserved_micros FROM budgets WHERE tenant_id = ?`, tenant).Scan(&reserved)
		return status == "failed" && reserved == 0
	})
	stop()
	<-done
	if status != "failed" || reserved != 0 {
		t.Errorf("after start-up the minute-old running journey is %q with %d reserved; want failed and 0", status, reserved)
	}
}

// Stored model responses (/v1/responses) past the tenant's retention are
// deleted with its journeys; newer ones, and other tenants', stay
// readable.
func TestRetentionDeletesOldStoredResponses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t)
	key, _ := redact.LoadOrCreateKey(dir)
	rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	now := time.Now().UTC()
	day := 24 * time.Hour
	var acme, globex tenants.Tenant
	err = db.Transact(ctx, func(tx *store.Tx) error {
		if acme, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil { // 30 days
			return err
		}
		if globex, err = tenants.Insert(ctx, tx, "globex", "Globex"); err != nil {
			return err
		}
		var errs []error
		_, e := tx.Exec(`UPDATE tenants SET trace_retention_days = 7 WHERE id = ?`, globex.ID)
		errs = append(errs, e)
		ins := func(id, tenant string, age time.Duration) {
			_, err := tx.Exec(`INSERT INTO model_responses (id, tenant_id, key_id, previous_id, input, output, response, created_at)
				VALUES (?, ?, 'k1', '', '[]', '[]', '{"object":"response","status":"completed"}', ?)`, id, tenant, store.FormatTime(now.Add(-age)))
			errs = append(errs, err)
		}
		ins("resp_acme_old", acme.ID, 31*day)
		ins("resp_acme_new", acme.ID, 29*day)
		ins("resp_globex_old", globex.ID, 8*day)
		ins("resp_globex_new", globex.ID, 6*day)
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.PurgeTraces(ctx, now); err != nil {
		t.Fatal(err)
	}
	g := models.NewGateway(db, nil, nil, nil)
	for id, want := range map[string]bool{"resp_acme_old": false, "resp_acme_new": true, "resp_globex_old": false, "resp_globex_new": true} {
		tn := acme
		if strings.HasPrefix(id, "resp_globex") {
			tn = globex
		}
		_, err := g.Response(ctx, admission.Caller{Tenant: tn, Key: keys.Key{ID: "k1", TenantID: tn.ID}}, id)
		if got := err == nil; got != want {
			t.Errorf("%s readable after retention = %v (%v), want %v", id, got, err, want)
		}
	}
	var details string
	db.Read().QueryRow(`SELECT details FROM audit_events WHERE verb = 'traces.purged' AND tenant = 'acme'`).Scan(&details)
	if !strings.Contains(details, `"responses":1`) {
		t.Errorf("acme's purge event = %q, want it to count the response", details)
	}
}

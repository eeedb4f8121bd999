package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
)

// BenchmarkApprovalToEffect measures the time from an action's final
// approval to its effect recorded by the built-in provider (job worker
// wake-up, ledger, provider, completion), one action at a time.
func BenchmarkApprovalToEffect(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	db := storetest.Open(b)
	key, _ := redact.LoadOrCreateKey(dir)
	rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.SeedDemo(ctx); err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { rt.Run(runCtx); close(done) }()
	defer func() { stop(); <-done }()

	tenant, _ := tenants.BySlug(ctx, db.Read(), "acme")
	tool, _ := catalog.Get(ctx, db.Read(), "issue_refund")
	approver := identity.Principal{ID: "p-bench", Name: "Bench", Roles: []string{"approver"}, Tenants: []string{"*"}}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		amount := int64(1)
		var a approvals.Action
		err := db.Transact(ctx, func(tx *store.Tx) error {
			var err error
			a, err = approvals.Create(ctx, tx, rt.Journeys.Sealer(), approvals.Spec{
				TenantID: tenant.ID, TenantSlug: "acme", JourneyID: fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano()), KeyID: "bench", Tool: catalog.ForApproval(tool),
				Args:         json.RawMessage(`{"order_id":"ORD-1004","amount_minor":1,"currency":"USD","account":"GB74BUKB20201555559182"}`),
				ArgsRedacted: json.RawMessage(`{}`), Summary: "bench", AmountMinor: &amount, Currency: "USD", Rule: "bench", ApprovalsRequired: 1,
			}, time.Now())
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if _, err := rt.Execution.Decide(ctx, approvals.Request{Principal: approver, ActionID: a.ID, Decision: approvals.Approve, Digest: a.PayloadDigest}); err != nil {
			b.Fatal(err)
		}
		var got approvals.Action
		wait.ForEvery(30*time.Second, 200*time.Microsecond, func() bool {
			var err error
			if got, err = approvals.Get(ctx, db.Read(), a.ID); err != nil {
				b.Fatal(err)
			}
			return got.Status == approvals.StatusExecuted || got.Status == approvals.StatusFailed
		})
		if got.Status != approvals.StatusExecuted {
			b.Fatalf("action is %s: %s", got.Status, got.Failure)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

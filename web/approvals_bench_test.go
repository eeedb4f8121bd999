package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// BenchmarkApprovalQueue10k measures the queue page's server time (a
// signed-in approver's GET /approvals over loopback) with 10,000 pending
// actions across tenants in the database.
func BenchmarkApprovalQueue10k(b *testing.B) {
	in := startWardenDemo(b, nil)
	ctx := context.Background()
	tool, _ := catalog.Get(ctx, in.DB.Read(), "issue_refund")
	slugs := []string{"acme"}
	for i := range 4 {
		slug := fmt.Sprintf("tenant-%d", i)
		in.DB.Transact(ctx, func(tx *store.Tx) error { _, err := tenants.Insert(ctx, tx, slug, slug); return err })
		slugs = append(slugs, slug)
	}
	sealer := in.Agent.Journeys.Sealer()
	for batch := range 100 {
		err := in.DB.Transact(ctx, func(tx *store.Tx) error {
			for i := range 100 {
				n := batch*100 + i
				t, _ := tenants.BySlug(ctx, tx, slugs[n%len(slugs)])
				amount := int64(100 + n)
				_, err := approvals.Create(ctx, tx, sealer, approvals.Spec{
					TenantID: t.ID, TenantSlug: t.Slug, JourneyID: fmt.Sprintf("bench-%d", n), KeyID: "bench", Tool: catalog.ForApproval(tool),
					Args: json.RawMessage(fmt.Sprintf(`{"order_id":"ORD-%d","amount_minor":%d}`, 2000+n, amount)), ArgsRedacted: json.RawMessage(`{}`),
					Summary: fmt.Sprintf("Refund $%d.%02d", amount/100, amount%100), AmountMinor: &amount, Currency: "USD", Rule: "bench", ApprovalsRequired: 1,
				}, time.Now())
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	in.waitReady(b)
	br := newBrowser(b, in.URL)
	br.loginDev("alice")
	for _, sort := range []string{"expiry", "amount"} {
		var lat []time.Duration
		for range 200 {
			start := time.Now()
			p := br.get("/approvals?sort=" + sort)
			lat = append(lat, time.Since(start))
			if p.Status != http.StatusOK || !strings.Contains(p.Body, "Refund") {
				b.Fatalf("queue = %d", p.Status)
			}
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms-"+sort)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms-"+sort)
	}

	// From a high-impact journey's 202 to the action in the queue's rows.
	var vis []time.Duration
	for range 20 {
		start := time.Now()
		r := journey(b, in, in.DemoKey, "Refund order ORD-1004 in full, the customer returned everything", nil)
		action, _ := r.Body["action"].(map[string]any)
		id, _ := action["id"].(string)
		for {
			p := br.get("/approvals/rows?sort=age&min=2400")
			if strings.Contains(p.Body, id) {
				break
			}
			if time.Since(start) > 10*time.Second {
				b.Fatalf("action %s never reached the queue", id)
			}
		}
		vis = append(vis, time.Since(start))
	}
	slices.Sort(vis)
	b.ReportMetric(float64(vis[len(vis)/2].Microseconds())/1000, "p50-ms-journey-to-queue")
	for range b.N {
	}
}

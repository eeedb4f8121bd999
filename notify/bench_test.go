package notify_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/store"
)

// BenchmarkProposal is the latency of proposing a pending action
// (approvals.Create in its transaction) with no notification routes and
// with three (Slack, Teams and a generic webhook, each to a loopback
// receiver): the cost of queueing the messages alone (the queue stopped),
// and while the queue delivers them beside the proposals (its writes share
// the database). Reported as p50 and p99 per proposal.
func BenchmarkProposal(b *testing.B) {
	for _, c := range []struct {
		routes     int
		delivering bool
	}{{0, false}, {3, false}, {0, true}, {3, true}} {
		routes := c.routes
		b.Run(fmt.Sprintf("routes=%d/delivering=%v", routes, c.delivering), func(b *testing.B) {
			r := newRig(b)
			if routes > 0 {
				for i, kind := range []string{notify.Slack, notify.Teams, notify.Webhook}[:routes] {
					rc := newReceiver(b)
					ch := r.channel(b, notify.Input{Name: fmt.Sprintf("c%d", i), Kind: kind, Secret: notify.Secret{URL: rc.URL + "/hook", SigningSecret: signingSecret}})
					r.route(b, notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID})
				}
			}
			if c.delivering {
				r.start(b, 2)
			}
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				r.propose(b, 240000)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkDeliveryThroughput is how many messages a second the
// notifications' lane delivers to a loopback generic webhook: b.N
// messages (at least 200) are queued at once, then delivered. On
// PostgreSQL River's fetch cooldown bounds it (a lane fetches at most its
// free workers' jobs per cooldown): "before" is the lane as it was (two
// workers, River's default 100 ms), "after" as it is (Workers,
// FetchCooldown). On SQLite the outbox's workers claim the next job as
// soon as they finish one, and the cooldown does not apply.
func BenchmarkDeliveryThroughput(b *testing.B) {
	for _, c := range []struct {
		name     string
		workers  int
		cooldown time.Duration
	}{
		{"before/workers=2/cooldown=100ms", 2, 100 * time.Millisecond},
		{fmt.Sprintf("after/workers=%d/cooldown=%v", notify.Workers, notify.FetchCooldown), notify.Workers, notify.FetchCooldown},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newRig(b)
			rc := newReceiver(b)
			rc.status = func(int) int { return http.StatusOK }
			ch := r.channel(b, notify.Input{Name: "hook", Kind: notify.Webhook, Secret: notify.Secret{URL: rc.URL + "/hook", SigningSecret: signingSecret}})
			r.route(b, notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID})
			ctx := context.Background()
			n := max(b.N, 200)
			err := r.db.Transact(ctx, func(tx *store.Tx) error {
				for i := range n {
					if err := notify.ActionPending(ctx, tx, notify.ActionInfo{ID: fmt.Sprintf("act_%d", i), TenantID: r.tenant.ID, TenantSlug: "acme",
						Tool: "refund", Summary: "Refund $24.00", Amount: "$24.00", ApprovalsRequired: 1, ExpiresAt: time.Now().Add(time.Hour), CreatedAt: time.Now()}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			r.startLane(b, c.workers, c.cooldown)
			pollFor(b, "every message delivered", time.Millisecond, 5*time.Minute, func() bool { return rc.count() >= n })
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
		})
	}
}

// BenchmarkDeliveryLatency is how long one message takes from the commit
// that queued it to its arrival at a loopback webhook, the lane idle
// between messages: on PostgreSQL River learns of the insert through
// LISTEN/NOTIFY (the insert's trigger), or else at its next poll, a second
// later. Reported as p50 and p99.
func BenchmarkDeliveryLatency(b *testing.B) {
	r := newRig(b)
	rc := newReceiver(b)
	ch := r.channel(b, notify.Input{Name: "hook", Kind: notify.Webhook, Secret: notify.Secret{URL: rc.URL + "/hook", SigningSecret: signingSecret}})
	r.route(b, notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID})
	r.start(b, notify.Workers)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		i++
		want := rc.count() + 1
		err := r.db.Transact(ctx, func(tx *store.Tx) error {
			return notify.ActionPending(ctx, tx, notify.ActionInfo{ID: fmt.Sprintf("act_%d", i), TenantID: r.tenant.ID, TenantSlug: "acme",
				Tool: "refund", Summary: "Refund $24.00", Amount: "$24.00", ApprovalsRequired: 1, ExpiresAt: time.Now().Add(time.Hour), CreatedAt: time.Now()})
		})
		if err != nil {
			b.Fatal(err)
		}
		r.queue.Notify()
		start := time.Now()
		pollFor(b, "the message", 500*time.Microsecond, time.Minute, func() bool { return rc.count() >= want })
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

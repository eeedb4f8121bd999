package alerts

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
)

// An evaluation that fires or resolves an alert queues its message for
// the channels of the alert routes, in its own transaction: a critical
// route hears the failure rate, a route for critical alerts does not hear
// a warning; nothing is queued without routes.
func TestEvaluateQueuesNotifications(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	sealer, _ := seal.New(key)
	svc := notify.New(notify.Options{DB: r.db, Sealer: sealer, AllowInternal: true})
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: "erin"}
	ch, err := svc.SaveChannel(ctx, admin, "", notify.Input{Name: "pd", Kind: notify.PagerDuty, Secret: notify.Secret{URL: "http://127.0.0.1:9/x", RoutingKey: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notify.AddRoute(ctx, r.db, admin, notify.Route{Event: notify.EventAlert, ChannelID: ch.ID, MinSeverity: "critical"}, clock); err != nil {
		t.Fatal(err)
	}
	if err := r.db.Transact(ctx, func(tx *store.Tx) error { return notify.SetQuietTime(ctx, tx, admin, 0) }); err != nil {
		t.Fatal(err)
	}
	r.journeys(t, "refunds", journeys.StatusFailed, 25, time.Second, time.Minute)
	r.journeys(t, "slow", journeys.StatusCompleted, 25, 20*time.Second, time.Minute)
	rep := r.evaluate(t, clock)
	if len(rep.Fired) != 2 {
		t.Fatalf("fired %v", describe(rep.Fired))
	}
	r.evaluate(t, clock.Add(15*time.Minute)) // both resolve
	msgs, err := store.Strings(ctx, r.db.Read(), `SELECT message FROM notify_deliveries ORDER BY created_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("queued %d messages, want the failure rate's firing and resolution (the p99 warning is below the route)", len(msgs))
	}
	var fired, resolved notify.Message
	json.Unmarshal([]byte(msgs[0]), &fired)
	json.Unmarshal([]byte(msgs[1]), &resolved)
	if fired.Alert == nil || fired.Alert.Status != "firing" || fired.Alert.DedupKey != "warden/failure_rate/refunds" ||
		fired.Alert.Runbook != "/runbooks/tool-provider-outage" || fired.Alert.Severity != "critical" {
		t.Errorf("firing message = %+v", fired.Alert)
	}
	if resolved.Alert == nil || resolved.Alert.Status != "resolved" || resolved.Alert.DedupKey != fired.Alert.DedupKey {
		t.Errorf("resolution = %+v", resolved.Alert)
	}
}

package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

// scheduled returns when the job of kind about an action runs (zero:
// none scheduled), from the outbox or River.
func (r *rig) scheduled(t *testing.T, kind, actionID string) time.Time {
	t.Helper()
	q := `SELECT run_at FROM jobs WHERE kind = ? AND payload LIKE ?`
	if storetest.Postgres() {
		q = `SELECT to_char(scheduled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US000"Z"') FROM river_job WHERE kind = ? AND args::text LIKE ?`
	}
	got, err := store.Strings(context.Background(), r.db.Read(), q, kind, "%"+actionID+"%")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		return time.Time{}
	}
	at, _ := time.Parse(time.RFC3339Nano, got[0])
	return at
}

// TestEscalation: an action of a tenant with an escalation route is
// scheduled to escalate at half its lifetime; if still undecided then
// (the clock moved there), the route hears "Still undecided" with the
// approvals still needed; after its expiry the job sends nothing; a
// tenant without an escalation route schedules none.
func TestEscalation(t *testing.T) {
	r, rc := webhookRig(t)
	a := r.propose(t, 240000) // no escalation route yet
	if at := r.scheduled(t, approvals.JobEscalate, a.ID); !at.IsZero() {
		t.Errorf("escalation scheduled at %v without an escalation route", at)
	}
	chans, _ := notify.Channels(t.Context(), r.db.Read())
	var generic notify.Channel
	for _, c := range chans {
		if c.Name == "generic" {
			generic = c
		}
	}
	r.route(t, notify.Route{Event: notify.EventEscalation, ChannelID: generic.ID, TenantID: r.tenant.ID})
	a = r.propose(t, 240000) // lives 2 h
	half := a.CreatedAt.Add(time.Hour)
	if at := r.scheduled(t, approvals.JobEscalate, a.ID); at.Sub(half).Abs() > time.Millisecond {
		t.Fatalf("escalation scheduled at %v, want half its lifetime, %v", at, half)
	}
	payload, _ := json.Marshal(approvals.EscalateJob{ActionID: a.ID})
	job := jobs.Job{Kind: approvals.JobEscalate, Payload: payload, Attempts: 1, MaxAttempts: 25}
	if err := approvals.HandleEscalate(r.db, func() time.Time { return a.ExpiresAt.Add(time.Second) })(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if n := r.deliveryStatuses(t)["queued"]; n != 6 {
		t.Errorf("after expiry the escalation queued something: %d queued, want the 6 proposals' messages", n)
	}
	if err := approvals.HandleEscalate(r.db, func() time.Time { return half })(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	r.start(t, 2)
	waitFor(t, "the escalation", func() bool {
		for _, req := range rc.generic.requests() {
			if strings.Contains(string(req.Body), "Still undecided: Refund $2,400.00 for ORD-1004") {
				return true
			}
		}
		return false
	})
	for _, req := range rc.generic.requests() {
		if get(req.Decoded, "event") == notify.EventEscalation {
			if !strings.Contains(string(req.Body), "2 of 2 approvals needed") || !strings.Contains(string(req.Body), "/approvals/"+a.ID) {
				t.Errorf("escalation: %s", req.Body)
			}
			if found := contains(string(req.Body), pii...); len(found) > 0 {
				t.Errorf("escalation carries personal data %q", found)
			}
		}
	}
}

// TestReminder: with a reminder wait of 30 minutes, a new pending action
// is scheduled to be reminded then; if still pending, the routes of new
// pending actions hear "Reminder, approval still needed"; with no wait
// set (the default) nothing is scheduled.
func TestReminder(t *testing.T) {
	r, rc := webhookRig(t)
	a := r.propose(t, 240000)
	if at := r.scheduled(t, approvals.JobRemind, a.ID); !at.IsZero() {
		t.Errorf("reminder scheduled at %v without a reminder wait", at)
	}
	if err := r.db.Transact(t.Context(), func(tx *store.Tx) error { return notify.SetReminderWait(t.Context(), tx, admin, 30*time.Minute) }); err != nil {
		t.Fatal(err)
	}
	a = r.propose(t, 240000)
	if at := r.scheduled(t, approvals.JobRemind, a.ID); at.Sub(a.CreatedAt.Add(30*time.Minute)).Abs() > time.Millisecond {
		t.Fatalf("reminder scheduled at %v, want 30 minutes after %v", at, a.CreatedAt)
	}
	payload, _ := json.Marshal(approvals.EscalateJob{ActionID: a.ID})
	if err := approvals.HandleRemind(r.db, func() time.Time { return a.CreatedAt.Add(30 * time.Minute) })(t.Context(),
		jobs.Job{Kind: approvals.JobRemind, Payload: payload, Attempts: 1, MaxAttempts: 25}); err != nil {
		t.Fatal(err)
	}
	r.start(t, 2)
	waitFor(t, "the reminder in Slack", func() bool {
		for _, req := range rc.slack.requests() {
			if get(req.Decoded, "text") == "Reminder, approval still needed: Refund $2,400.00 for ORD-1004" {
				return true
			}
		}
		return false
	})
}

package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// JobDeliver is the kind of the job that sends one message.
const JobDeliver = "notify_deliver"

// The notifications' lane of the queue (jobs.QueueNotify): its workers,
// and on PostgreSQL how soon River fetches again after a fetch. River's
// default cooldown (100 ms) let two workers deliver about 20 messages a
// second however fast the receiver; docs/notifications.md has the
// numbers.
const (
	Workers       = 4
	FetchCooldown = 5 * time.Millisecond
)

// deliverJob is JobDeliver's payload.
type deliverJob struct {
	DeliveryID string `json:"delivery_id"`
}

// deliverAttempts is every job's attempt limit: high enough that
// GiveUpAfter, not the count, ends the retries (the queue's backoff
// reaches ten minutes after ten attempts).
const deliverAttempts = 1000

// ActionInfo is what a message about an action may say: what the
// console's queue shows an approver.
type ActionInfo struct {
	ID                string
	TenantID          string
	TenantSlug        string
	Tool              string
	Summary           string // Warden's headline, never the agent's words or arguments
	Amount            string // formatted with its currency; "" for none
	AmountMinor       *int64
	ApprovalsRequired int
	ApprovalsGiven    int
	ExpiresAt         time.Time
	CreatedAt         time.Time
	// OwnerID is the principal who created the virtual key that proposed
	// the action ("" for a key made on the command line): RecipientOwner.
	// Never shown in a message.
	OwnerID string
	// Assignees are the principal ids RecipientAssignee names: the
	// approver who took the action and the one it was taken from.
	Assignees []string
}

// about is whom a message concerns, to resolve routes' recipients.
type about struct {
	tenantSlug string
	owner      string
	assignees  []string
}

func (a ActionInfo) about() about {
	return about{tenantSlug: a.TenantSlug, owner: a.OwnerID, assignees: a.Assignees}
}

// addresses are the e-mail addresses of the people r names for a message
// about ab: those who may see its tenant (principals.Addresses).
func (r Route) addresses(ctx context.Context, q store.Querier, ab about) ([]string, error) {
	people, groups, assignee, owner := r.people()
	aud := principals.Audience{People: people, Groups: groups}
	if assignee {
		aud.IDs = append(aud.IDs, ab.assignees...)
	}
	if owner && ab.owner != "" {
		aud.IDs = append(aud.IDs, ab.owner)
	}
	return principals.Addresses(ctx, q, aud, ab.tenantSlug)
}

// target is one channel's share of a message: the channel's own
// recipients (routes that name nobody) and the people routes name.
type target struct {
	channelID  string
	to         []string
	peopleOnly bool
}

// targets groups the routes that hear a message by channel: a channel
// named by several routes gets the message once, addressed to everyone
// they name. A route whose people resolve to nobody (no one of theirs may
// see the tenant) adds nothing.
func targets(ctx context.Context, q store.Querier, routes []Route, ab about, hears func(Route) bool) ([]target, error) {
	var out []target
	index := map[string]int{}
	for _, r := range routes {
		if !hears(r) {
			continue
		}
		var to []string
		if len(r.Recipients) > 0 {
			var err error
			if to, err = r.addresses(ctx, q, ab); err != nil {
				return nil, err
			}
			if len(to) == 0 {
				continue
			}
		}
		i, ok := index[r.ChannelID]
		if !ok {
			i = len(out)
			index[r.ChannelID] = i
			out = append(out, target{channelID: r.ChannelID, peopleOnly: true})
		}
		t := &out[i]
		if len(r.Recipients) == 0 {
			t.peopleOnly = false
		}
		for _, a := range to {
			if !slices.Contains(t.to, a) {
				t.to = append(t.to, a)
			}
		}
	}
	return out, nil
}

func (a ActionInfo) fields() []Field {
	var f []Field
	if a.Amount != "" {
		f = append(f, Field{"Amount", a.Amount})
	}
	f = append(f, Field{"Tool", a.Tool}, Field{"Tenant", a.TenantSlug},
		Field{"Approvals", fmt.Sprintf("%d of %d approvals needed", a.ApprovalsRequired-a.ApprovalsGiven, a.ApprovalsRequired)},
		Field{"Expires", a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST")})
	return f
}

// ActionPending tells the routes of new pending actions about a, inside
// the transaction that created it. It reads the tenant's routes and
// writes a delivery with its job per channel that hears it; it sends
// nothing.
func ActionPending(ctx context.Context, tx *store.Tx, a ActionInfo) error {
	routes, err := routesFor(ctx, tx, EventActionPending, a.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	return enqueueAll(ctx, tx, routes, a.ID, a.TenantID, a.about(), pendingMessage(a), func(r Route) bool { return r.hearsAction(a.Tool, a.AmountMinor) })
}

// pendingMessage is the message of a new pending action.
func pendingMessage(a ActionInfo) Message {
	return Message{Event: EventActionPending, Title: "Approval needed: " + a.Summary, Summary: a.Summary, Tenant: a.TenantSlug,
		Fields: a.fields(), Link: "/approvals/" + a.ID, At: a.CreatedAt}
}

// ActionProposed is ActionPending for a new action, and says when to
// escalate and remind it (zero: never): escalation when the tenant has an
// escalation route, reminders when a reminder wait is set and the action
// lives longer. It reads the routes of both events in one query, and the
// settings only when there is a route: a tenant without routes costs its
// proposals one indexed query.
func ActionProposed(ctx context.Context, tx *store.Tx, a ActionInfo) (escalateAt, remindAt time.Time, err error) {
	routes, err := store.Query(ctx, tx, scanRoute, `SELECT `+routeColumns+` FROM notify_routes r JOIN notify_channels c ON c.id = r.channel_id
		WHERE r.event IN (?, ?) AND (r.tenant_id = '' OR r.tenant_id = ?) ORDER BY c.name, r.id`, EventActionPending, EventEscalation, a.TenantID)
	if err != nil || len(routes) == 0 {
		return time.Time{}, time.Time{}, err
	}
	var pending []Route
	escalates := false
	for _, r := range routes {
		if r.Event == EventActionPending {
			pending = append(pending, r)
		} else {
			escalates = true
		}
	}
	if len(pending) > 0 {
		if err := enqueueAll(ctx, tx, pending, a.ID, a.TenantID, a.about(), pendingMessage(a), func(r Route) bool { return r.hearsAction(a.Tool, a.AmountMinor) }); err != nil {
			return time.Time{}, time.Time{}, err
		}
	}
	var pct, remind int64
	if err := tx.QueryRowContext(ctx, `SELECT escalate_percent, remind_minutes FROM notify_settings WHERE id = 1`).Scan(&pct, &remind); err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("notify settings: %w", err)
	}
	if escalates {
		escalateAt = a.CreatedAt.Add(a.ExpiresAt.Sub(a.CreatedAt) * time.Duration(pct) / 100)
	}
	if wait := time.Duration(remind) * time.Minute; len(pending) > 0 && wait > 0 && a.CreatedAt.Add(wait).Before(a.ExpiresAt) {
		remindAt = a.CreatedAt.Add(wait)
	}
	return escalateAt, remindAt, nil
}

// ActionEscalated tells the routes of escalations that a is still
// undecided.
func ActionEscalated(ctx context.Context, tx *store.Tx, a ActionInfo, now time.Time) error {
	routes, err := routesFor(ctx, tx, EventEscalation, a.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	m := Message{Event: EventEscalation, Title: "Still undecided: " + a.Summary, Summary: a.Summary, Tenant: a.TenantSlug,
		Fields: a.fields(), Link: "/approvals/" + a.ID, At: now}
	return enqueueAll(ctx, tx, routes, a.ID+"#escalation", a.TenantID, a.about(), m, func(r Route) bool { return r.hearsAction(a.Tool, a.AmountMinor) })
}

// ReviewNeeded tells the routes of reviews that a's execution failed in a
// way a person must look at.
func ReviewNeeded(ctx context.Context, tx *store.Tx, a ActionInfo, why string, now time.Time) error {
	routes, err := routesFor(ctx, tx, EventReview, a.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	f := a.fields()[:0:0]
	if a.Amount != "" {
		f = append(f, Field{"Amount", a.Amount})
	}
	f = append(f, Field{"Tool", a.Tool}, Field{"Tenant", a.TenantSlug})
	if why != "" {
		f = append(f, Field{"Why", why})
	}
	m := Message{Event: EventReview, Title: "Execution needs review: " + a.Summary, Summary: a.Summary, Tenant: a.TenantSlug,
		Fields: f, Link: "/approvals/" + a.ID, At: now}
	return enqueueAll(ctx, tx, routes, a.ID+"#review", a.TenantID, a.about(), m, func(Route) bool { return true })
}

// ChangeInfo is what a message about a pending control-plane change
// (docs/changes.md) may say: what kind of change, on what, who asked and
// until when. Never its before or after values beyond Warden's summary,
// nor the requester's reason (free text): the console shows those.
type ChangeInfo struct {
	ID          string
	Kind        string // "budget.limit"
	TenantID    string // "" for an installation-wide change
	TenantSlug  string
	Summary     string // Warden's sentence: "Switch on tool issue_refund"
	RequestedBy string // the requester's display name
	ExpiresAt   time.Time
	At          time.Time
}

// ChangePending tells the routes of pending changes (admins) that a
// change waits for a second admin, inside the transaction that recorded it.
func ChangePending(ctx context.Context, tx *store.Tx, c ChangeInfo) error {
	routes, err := routesFor(ctx, tx, EventChangePending, c.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	fields := []Field{{"Kind", c.Kind}, {"Asked by", c.RequestedBy}}
	if c.TenantSlug != "" {
		fields = append(fields, Field{"Tenant", c.TenantSlug})
	}
	fields = append(fields, Field{"Expires", c.ExpiresAt.UTC().Format("2006-01-02 15:04 MST")})
	m := Message{Event: EventChangePending, Title: "Waits for a second admin: " + c.Summary, Summary: c.Summary, Tenant: c.TenantSlug,
		Fields: fields, Link: "/changes/" + c.ID, At: c.At}
	return enqueueAll(ctx, tx, routes, c.ID, c.TenantID, about{tenantSlug: c.TenantSlug}, m, func(Route) bool { return true })
}

// AlertInfo is what a message about an alert may say.
type AlertInfo struct {
	ID         string
	Kind       string
	Subject    string
	TenantID   string // the tenant the alert is about; "" for none
	TenantSlug string
	Severity   string // info, warning or critical
	What       string // "Failure rate of skill refunds"
	Value      string // "45% (threshold 20%)"
	Runbook    string // console path of its runbook; "" for none
	FiredAt    time.Time
	Resolved   *time.Time
}

// DedupKey is the alert's key at pagers: one per kind and subject, so a
// re-fire of the same condition is the same incident.
func (a AlertInfo) DedupKey() string { return "warden/" + a.Kind + "/" + a.Subject }

// AlertChanged tells the routes of alerts that a fired (Resolved nil) or
// resolved, inside the transaction that recorded it. Each channel pages
// once per dedup key (pages.go): a resolution is sent after the quiet
// time, unless the alert fires again meanwhile, which then sends nothing.
func AlertChanged(ctx context.Context, tx *store.Tx, a AlertInfo) error {
	routes, err := routesFor(ctx, tx, EventAlert, a.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	now := a.FiredAt
	status := "firing"
	title := "Firing: " + a.What
	if a.Resolved != nil {
		now, status, title = *a.Resolved, "resolved", "Resolved: "+a.What
	}
	fields := []Field{{"Severity", a.Severity}}
	if a.Value != "" {
		fields = append(fields, Field{"Value", a.Value})
	}
	if a.TenantSlug != "" {
		fields = append(fields, Field{"Tenant", a.TenantSlug})
	}
	fields = append(fields, Field{"Since", a.FiredAt.UTC().Format("2006-01-02 15:04 MST")})
	m := Message{Event: EventAlert, Title: title, Summary: a.What, Tenant: a.TenantSlug, Fields: fields, Link: "/alerts", At: now,
		Alert: &AlertPart{DedupKey: a.DedupKey(), Status: status, Severity: a.Severity, Kind: a.Kind, Subject: a.Subject,
			Runbook: a.Runbook, StartsAt: a.FiredAt.UTC(), EndsAt: a.Resolved}}
	quiet, err := QuietTime(ctx, tx)
	if err != nil {
		return err
	}
	ts, err := targets(ctx, tx, routes, about{tenantSlug: a.TenantSlug}, func(r Route) bool { return r.hearsAlert(a.Severity) })
	if err != nil {
		return err
	}
	for _, t := range ts {
		id := "msg_" + store.NewID()
		runAt, send, err := page(ctx, tx, t.channelID, a.DedupKey(), a.Resolved != nil, id, now, quiet)
		if err != nil {
			return err
		}
		if !send {
			continue
		}
		if err := enqueue(ctx, tx, id, t, a.ID, a.TenantID, m, runAt); err != nil {
			return err
		}
	}
	return nil
}

// enqueueAll writes one delivery per channel whose routes hear the
// message (targets): the deliveries in one statement, their jobs in one
// batch, so that routes add little to the transaction of a proposal.
func enqueueAll(ctx context.Context, tx *store.Tx, routes []Route, subject, tenantID string, ab about, m Message, hears func(Route) bool) error {
	ts, err := targets(ctx, tx, routes, ab, hears)
	if err != nil || len(ts) == 0 {
		return err
	}
	var values []string
	var args []any
	var items []jobs.Item
	now := store.Now()
	for _, t := range ts {
		m.ID = "msg_" + store.NewID()
		m.To, m.PeopleOnly = t.to, t.peopleOnly
		raw, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("notify: %w", err)
		}
		values = append(values, "(?, ?, ?, ?, ?, ?, 'queued', ?)")
		args = append(args, m.ID, t.channelID, m.Event, subject, tenantID, string(raw), now)
		items = append(items, deliverItem(m.ID, time.Time{}))
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO notify_deliveries (id, channel_id, event, subject, tenant_id, message, status, created_at)
		VALUES `+strings.Join(values, ", "), args...); err != nil {
		return fmt.Errorf("notify %s: %w", m.Event, err)
	}
	return jobs.EnqueueMany(ctx, tx, items)
}

// deliverItem is the delivery job of message id, in the notifications'
// own lane of the queue (jobs.QueueNotify).
func deliverItem(id string, runAt time.Time) jobs.Item {
	return jobs.Item{Kind: JobDeliver, Payload: deliverJob{DeliveryID: id},
		Options: jobs.Options{UniqueKey: "notify:" + id, MaxAttempts: deliverAttempts, RunAt: runAt, Queue: jobs.QueueNotify}}
}

// enqueue writes one delivery and its job.
func enqueue(ctx context.Context, tx *store.Tx, id string, t target, subject, tenantID string, m Message, runAt time.Time) error {
	m.ID, m.To, m.PeopleOnly = id, t.to, t.peopleOnly
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO notify_deliveries (id, channel_id, event, subject, tenant_id, message, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, 'queued', ?)`, id, t.channelID, m.Event, subject, tenantID, string(raw), store.Now()); err != nil {
		return fmt.Errorf("notify %s: %w", m.Event, err)
	}
	return jobs.EnqueueMany(ctx, tx, []jobs.Item{deliverItem(id, runAt)})
}

// Page states.
const (
	pageOpen      = "open"
	pageResolving = "resolving"
	pageResolved  = "resolved"
)

// page keeps a channel's page of one dedup key and says whether to send
// (and when). A firing alert pages when its page is not open; a re-fire
// while its resolution waits cancels the resolution and sends nothing. A
// resolution of an open page waits quiet before it is sent (HandleDeliver
// sends it only if the page is still resolving by this delivery).
func page(ctx context.Context, tx *store.Tx, channelID, dedup string, resolved bool, deliveryID string, now time.Time, quiet time.Duration) (time.Time, bool, error) {
	var state, resolveID string
	err := tx.QueryRowContext(ctx, `SELECT state, resolve_id FROM notify_pages WHERE channel_id = ? AND dedup_key = ?`, channelID, dedup).Scan(&state, &resolveID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, fmt.Errorf("page %s: %w", dedup, err)
	}
	ts := store.FormatTime(now)
	switch {
	case !resolved && (state == "" || state == pageResolved):
		_, err = tx.ExecContext(ctx, `INSERT INTO notify_pages (channel_id, dedup_key, state, resolve_id, triggered_at, updated_at) VALUES (?, ?, ?, '', ?, ?)
			ON CONFLICT (channel_id, dedup_key) DO UPDATE SET state = excluded.state, resolve_id = '', triggered_at = excluded.triggered_at, updated_at = excluded.updated_at`,
			channelID, dedup, pageOpen, ts, ts)
		return time.Time{}, true, err
	case !resolved && state == pageResolving:
		_, err = tx.ExecContext(ctx, `UPDATE notify_pages SET state = ?, resolve_id = '', updated_at = ? WHERE channel_id = ? AND dedup_key = ?`,
			pageOpen, ts, channelID, dedup)
		return time.Time{}, false, err
	case resolved && state == pageOpen:
		_, err = tx.ExecContext(ctx, `UPDATE notify_pages SET state = ?, resolve_id = ?, updated_at = ? WHERE channel_id = ? AND dedup_key = ?`,
			pageResolving, deliveryID, ts, channelID, dedup)
		return now.Add(quiet), true, err
	}
	return time.Time{}, false, nil
}

// The Timing settings are one row of notify_settings: each getter reads
// its column, each setter validates, writes it and audits the change.

// setting reads one column of notify_settings (a constant, never input).
func setting(ctx context.Context, q store.Querier, column string) (int64, error) {
	var v int64
	if err := q.QueryRowContext(ctx, `SELECT `+column+` FROM notify_settings WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("notify settings: %w", err)
	}
	return v, nil
}

// setSetting writes one column of notify_settings, audited as verb with
// the new value under unit ("seconds", "percent", "minutes").
func setSetting(ctx context.Context, tx *store.Tx, by audit.Actor, column string, v int64, verb, subject, unit string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE notify_settings SET `+column+` = ? WHERE id = 1`, v); err != nil {
		return fmt.Errorf("set %s: %w", subject, err)
	}
	_, err := audit.Append(ctx, tx, audit.Event{Actor: by, Verb: verb, Subject: audit.Subject{Type: "notify_settings", ID: subject},
		Details: map[string]any{unit: v}})
	return err
}

// QuietTime is how long a resolution waits before it is sent (a re-fire
// within it pages nothing).
func QuietTime(ctx context.Context, q store.Querier) (time.Duration, error) {
	s, err := setting(ctx, q, "quiet_seconds")
	return time.Duration(s) * time.Second, err
}

// MaxQuietTime bounds the quiet time.
const MaxQuietTime = 24 * time.Hour

// SetQuietTime changes the quiet time, with notify.quiet_time_set.
func SetQuietTime(ctx context.Context, tx *store.Tx, by audit.Actor, d time.Duration) error {
	if d < 0 || d > MaxQuietTime || d%time.Second != 0 {
		return &store.ValidationError{Fields: map[string]string{"quiet_seconds": "The quiet time is a whole number of seconds from 0 to 86400."}}
	}
	return setSetting(ctx, tx, by, "quiet_seconds", int64(d/time.Second), "notify.quiet_time_set", "quiet_time", "seconds")
}

// EscalationPercent is the share of a pending action's lifetime, in
// percent, after which an undecided action escalates.
func EscalationPercent(ctx context.Context, q store.Querier) (int, error) {
	p, err := setting(ctx, q, "escalate_percent")
	return int(p), err
}

// SetEscalationPercent changes it (1 to 99), with
// notify.escalation_set.
func SetEscalationPercent(ctx context.Context, tx *store.Tx, by audit.Actor, percent int) error {
	if percent < 1 || percent > 99 {
		return &store.ValidationError{Fields: map[string]string{"escalate_percent": "Escalate after 1 to 99 percent of an action's lifetime."}}
	}
	return setSetting(ctx, tx, by, "escalate_percent", int64(percent), "notify.escalation_set", "escalation", "percent")
}

// ReminderWait is how long a pending action waits before its approvers
// are reminded; 0 for never.
func ReminderWait(ctx context.Context, q store.Querier) (time.Duration, error) {
	m, err := setting(ctx, q, "remind_minutes")
	return time.Duration(m) * time.Minute, err
}

// SetReminderWait changes it (whole minutes, 0 to a week), with
// notify.reminder_set.
func SetReminderWait(ctx context.Context, tx *store.Tx, by audit.Actor, d time.Duration) error {
	if d < 0 || d > 7*24*time.Hour || d%time.Minute != 0 {
		return &store.ValidationError{Fields: map[string]string{"remind_minutes": "Remind after a whole number of minutes from 0 (never) to 10080 (a week)."}}
	}
	return setSetting(ctx, tx, by, "remind_minutes", int64(d/time.Minute), "notify.reminder_set", "reminder", "minutes")
}

// ClaimTime is how long an approver's Take holds a pending action before
// it is released by itself (approvals.Take).
func ClaimTime(ctx context.Context, q store.Querier) (time.Duration, error) {
	m, err := setting(ctx, q, "claim_minutes")
	return time.Duration(m) * time.Minute, err
}

// SetClaimTime changes it (whole minutes, 1 to a day), with
// notify.claim_time_set.
func SetClaimTime(ctx context.Context, tx *store.Tx, by audit.Actor, d time.Duration) error {
	if d < time.Minute || d > 24*time.Hour || d%time.Minute != 0 {
		return &store.ValidationError{Fields: map[string]string{"claim_minutes": "A Take holds for 1 to 1440 minutes."}}
	}
	return setSetting(ctx, tx, by, "claim_minutes", int64(d/time.Minute), "notify.claim_time_set", "claim", "minutes")
}

// ActionReminder reminds the routes of new pending actions that a still
// waits.
func ActionReminder(ctx context.Context, tx *store.Tx, a ActionInfo, now time.Time) error {
	routes, err := routesFor(ctx, tx, EventActionPending, a.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	m := Message{Event: EventActionPending, Title: "Reminder, approval still needed: " + a.Summary, Summary: a.Summary, Tenant: a.TenantSlug,
		Fields: a.fields(), Link: "/approvals/" + a.ID, At: now}
	return enqueueAll(ctx, tx, routes, a.ID+"#reminder", a.TenantID, a.about(), m, func(r Route) bool { return r.hearsAction(a.Tool, a.AmountMinor) })
}

// ActionTaken tells the routes of EventAssigned that an approver took a:
// "Bob Approver is reviewing: …".
func ActionTaken(ctx context.Context, tx *store.Tx, a ActionInfo, by string, now time.Time) error {
	routes, err := routesFor(ctx, tx, EventAssigned, a.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	m := Message{Event: EventAssigned, Title: by + " is reviewing: " + a.Summary, Summary: a.Summary, Tenant: a.TenantSlug,
		Fields: append([]Field{{"Reviewing", by}}, a.fields()...), Link: "/approvals/" + a.ID, At: now}
	return enqueueAll(ctx, tx, routes, a.ID+"#taken", a.TenantID, a.about(), m, func(r Route) bool { return r.hearsAction(a.Tool, a.AmountMinor) })
}

// ActionExpired tells the tenant's escalation routes that a expired
// undecided, inside the transaction that expired it.
func ActionExpired(ctx context.Context, tx *store.Tx, a ActionInfo, now time.Time) error {
	routes, err := routesFor(ctx, tx, EventEscalation, a.TenantID)
	if err != nil || len(routes) == 0 {
		return err
	}
	f := a.fields()
	f[len(f)-1] = Field{"Expired", a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST")}
	m := Message{Event: EventEscalation, Title: "Expired undecided: " + a.Summary, Summary: a.Summary, Tenant: a.TenantSlug,
		Fields: f, Link: "/approvals/" + a.ID, At: now}
	return enqueueAll(ctx, tx, routes, a.ID+"#expired", a.TenantID, a.about(), m, func(r Route) bool { return r.hearsAction(a.Tool, a.AmountMinor) })
}

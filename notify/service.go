package notify

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/egress"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// Options build a Service.
type Options struct {
	DB     *store.DB
	Sealer *seal.Sealer
	Log    *slog.Logger
	// BaseURL is the console's public URL (WARDEN_PUBLIC_URL): messages
	// link to its pages.
	BaseURL string
	// AllowInternal lets channels reach loopback and private addresses
	// (development mode, tests), as agents' callbacks may then; otherwise
	// the egress policy refuses them unless AllowHost names the host.
	AllowInternal bool
	AllowHost     func(host string) bool
	// TLSConfig is the base of SMTP connections' TLS (nil: the system's
	// roots); tests trust their server's certificate with it.
	TLSConfig *tls.Config
	// Timeout bounds one send (default 10 s).
	Timeout time.Duration
	// Guard options for the channels' breakers (zero: defaults below).
	Guard tools.GuardOptions
	Now   func() time.Time
}

// Service sends messages: the delivery job's handler and Send test.
type Service struct {
	o      Options
	guard  *tools.Guard
	sender tools.Provider
	http   *http.Client
}

// New returns a service. Each channel is a dependency of its own guard: a
// breaker that opens after three failed sends of five in a minute and
// stays open for 30 s, so a dead receiver is not called for every queued
// message, and a send bounded by Timeout.
func New(o Options) *Service {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := o.Guard
	if g.MinCalls == 0 {
		g.MinCalls = 3
	}
	if g.Window == 0 {
		g.Window = time.Minute
	}
	if g.OpenFor == 0 {
		g.OpenFor = 30 * time.Second
	}
	if g.OnStateChange == nil {
		log := o.Log
		g.OnStateChange = func(dep, from, to string) {
			log.Warn("notification channel breaker changed state", "channel", dep, "from", from, "to", to)
		}
	}
	t := o.policy().Transport()
	t.MaxIdleConnsPerHost = 4
	s := &Service{o: o, guard: tools.NewGuard(g), http: &http.Client{Transport: t, CheckRedirect: egress.NoRedirects}}
	s.sender = s.guard.Wrap(sendProvider{})
	return s
}

// policy is the channels' egress policy: that of callbacks and model
// deployments.
func (o Options) policy() egress.Policy {
	return egress.Policy{AllowInternal: o.AllowInternal, AllowHost: o.AllowHost}
}

// checkEgress refuses, when a channel is saved, a destination the egress
// policy would refuse when sending.
func (s *Service) checkEgress(ctx context.Context, kind string, c Config, sec Secret) error {
	host := c.Host
	if kind != Email {
		host = hostOf(sec.URL)
	}
	if host == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := s.o.policy().Check(ctx, host)
	if errors.Is(err, egress.ErrInternal) {
		return errors.New("This address is inside the network (loopback, private or link-local); Warden does not send notifications there.")
	}
	// A name that does not resolve now may later; the send will tell.
	return nil
}

// Health is a channel's breaker as the guard sees it, by channel name
// ("" state: no send since start).
func (s *Service) Health() map[string]tools.DependencyHealth {
	out := map[string]tools.DependencyHealth{}
	for _, h := range s.guard.Health() {
		out[strings.TrimPrefix(h.Name, "notify:")] = h
	}
	return out
}

type sendKey struct{}

// sendProvider is the guard's provider: it runs the send the context
// carries, so each channel's sends pass its breaker and bulkhead.
type sendProvider struct{}

func (sendProvider) Execute(ctx context.Context, _ tools.Tool, _ tools.Call) (tools.Result, error) {
	f, _ := ctx.Value(sendKey{}).(func(context.Context) error)
	if f == nil {
		return tools.Result{}, &tools.Error{Kind: tools.Terminal, Reason: "nothing to send"}
	}
	return tools.Result{}, f(ctx)
}

// sendGuarded sends m to ch through the channel's breaker, once, within
// Timeout. Errors carry no secret.
func (s *Service) sendGuarded(ctx context.Context, ch Channel, sec Secret, m Message) error {
	name := "notify:" + ch.Name
	t := tools.Tool{Name: name, Impact: risk.ImpactMedium, Timeout: s.o.Timeout, MaxAttempts: 1}
	ctx = context.WithValue(ctx, sendKey{}, func(ctx context.Context) error { return s.send(ctx, ch, sec, m) })
	_, err := s.sender.Execute(ctx, t, tools.Call{Tool: name, IdempotencyKey: m.ID})
	return scrub(err, sec)
}

// scrub removes a channel's secrets from an error's text.
func scrub(err error, sec Secret) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, v := range sec.values() {
		msg = strings.ReplaceAll(msg, v, "[secret]")
	}
	if msg == err.Error() {
		return err
	}
	return &scrubbed{msg: msg, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }

// Unwrap keeps the error's kind (Transient or Terminal) for errors.As.
func (e *scrubbed) Unwrap() error { return e.err }

// terminal reports an error that retrying cannot fix: the receiver
// refused the message itself.
func terminal(err error) bool {
	var te *tools.Error
	return errors.As(err, &te) && te.Kind == tools.Terminal
}

// unavailable reports a send the guard refused before sending: the
// channel's breaker is open or its bulkhead full.
func unavailable(err error) bool {
	var te *tools.Error
	return errors.As(err, &te) && te.Kind == tools.Unavailable
}

// delivery is one row of notify_deliveries.
type delivery struct {
	ID, ChannelID, Event, Subject, TenantID, Status string
	Message                                         Message
	Attempts                                        int
	CreatedAt                                       time.Time
}

func loadDelivery(ctx context.Context, q store.Querier, id string) (delivery, error) {
	var d delivery
	var msg, created string
	err := q.QueryRowContext(ctx, `SELECT id, channel_id, event, subject, tenant_id, status, message, attempts, created_at
		FROM notify_deliveries WHERE id = ?`, id).Scan(&d.ID, &d.ChannelID, &d.Event, &d.Subject, &d.TenantID, &d.Status, &msg, &d.Attempts, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return delivery{}, store.ErrNotFound
	}
	if err != nil {
		return delivery{}, fmt.Errorf("load delivery %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(msg), &d.Message); err != nil {
		return delivery{}, fmt.Errorf("delivery %s: %w", id, err)
	}
	d.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	return d, nil
}

// system is the actor of deliveries' audit events.
var system = audit.Actor{Type: audit.ActorSystem, ID: "notify"}

// HandleDeliver is JobDeliver's handler: it sends one message, at least
// once. A message already delivered, a channel deleted meanwhile or a
// resolution overtaken by a re-fire sends nothing. A failure is retried
// with the queue's backoff until GiveUpAfter has passed since the message
// was written (or at once, if the receiver refused the message itself);
// then the delivery is failed, audited, and its job listed on the status
// page, where Retry sends it once more.
func (s *Service) HandleDeliver(ctx context.Context, j jobs.Job) error {
	var p deliverJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return &jobs.Permanent{Err: err}
	}
	db := s.o.DB
	d, err := loadDelivery(ctx, db.Read(), p.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // its channel was deleted
	}
	if err != nil {
		return err
	}
	if d.Status == "delivered" || d.Status == "skipped" {
		return nil
	}
	if a := d.Message.Alert; a != nil && a.Status == "resolved" {
		var state, resolveID string
		err := db.Read().QueryRowContext(ctx, `SELECT state, resolve_id FROM notify_pages WHERE channel_id = ? AND dedup_key = ?`,
			d.ChannelID, a.DedupKey).Scan(&state, &resolveID)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("page of %s: %w", d.ID, err)
		}
		if state != pageResolving || resolveID != d.ID {
			// It fired again within the quiet time: the page stays open.
			return db.Transact(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, `UPDATE notify_deliveries SET status = 'skipped' WHERE id = ? AND status = 'queued'`, d.ID)
				return err
			})
		}
	}
	ch, sec, err := withSecret(ctx, db.Read(), s.o.Sealer, d.ChannelID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	sendErr := s.sendGuarded(ctx, ch, sec, d.Message)
	now := s.o.Now().UTC()
	giveUp := sendErr != nil && (terminal(sendErr) || now.Sub(d.CreatedAt) >= GiveUpAfter)
	err = db.Transact(ctx, func(tx *store.Tx) error {
		ts := store.FormatTime(now)
		details := map[string]any{"channel": ch.Name, "kind": ch.Kind, "event": d.Event, "subject": d.Subject,
			"message_id": d.ID, "attempt": d.Attempts + 1}
		if sendErr == nil {
			if _, err := tx.ExecContext(ctx, `UPDATE notify_deliveries SET status = 'delivered', attempts = attempts + 1, last_error = '', delivered_at = ? WHERE id = ?`, ts, d.ID); err != nil {
				return err
			}
			if a := d.Message.Alert; a != nil && a.Status == "resolved" {
				if _, err := tx.ExecContext(ctx, `UPDATE notify_pages SET state = ?, updated_at = ? WHERE channel_id = ? AND dedup_key = ? AND resolve_id = ?`,
					pageResolved, ts, d.ChannelID, a.DedupKey, d.ID); err != nil {
					return err
				}
			}
			if err := recordResult(ctx, tx, ch.ID, now, nil); err != nil {
				return err
			}
			_, err := audit.Append(ctx, tx, audit.Event{Actor: system, Tenant: d.Message.Tenant, Verb: "notification.delivered",
				Subject: audit.Subject{Type: "notification", ID: d.ID}, Details: details})
			return err
		}
		status := "queued"
		if giveUp {
			status = "failed"
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notify_deliveries SET status = ?, attempts = attempts + 1, last_error = ? WHERE id = ?`,
			status, clip(sendErr.Error(), 500), d.ID); err != nil {
			return err
		}
		if !unavailable(sendErr) {
			if err := recordResult(ctx, tx, ch.ID, now, sendErr); err != nil {
				return err
			}
		}
		if !giveUp {
			return nil
		}
		details["error"] = clip(sendErr.Error(), 300)
		_, err := audit.Append(ctx, tx, audit.Event{Actor: system, Tenant: d.Message.Tenant, Verb: "notification.failed",
			Subject: audit.Subject{Type: "notification", ID: d.ID}, Details: details})
		return err
	})
	if err != nil {
		return fmt.Errorf("record delivery %s: %w", d.ID, err)
	}
	switch {
	case sendErr == nil:
		return nil
	case giveUp:
		return &jobs.Permanent{Err: fmt.Errorf("notification %s to %s: %w", d.ID, ch.Name, sendErr)}
	}
	return fmt.Errorf("notification %s to %s: %w", d.ID, ch.Name, sendErr)
}

// TestResult is what Send test found.
type TestResult struct {
	MessageID string
	Err       error // nil: the channel accepted the message
}

// SendTest sends a test message to the channel now, bypassing the queue
// but not the breaker, records the channel's health and audits
// notify.channel_tested (without the message).
func (s *Service) SendTest(ctx context.Context, by audit.Actor, name string) (TestResult, error) {
	c, err := GetChannel(ctx, s.o.DB.Read(), name)
	if err != nil {
		return TestResult{}, err
	}
	ch, sec, err := withSecret(ctx, s.o.DB.Read(), s.o.Sealer, c.ID)
	if err != nil {
		return TestResult{}, err
	}
	now := s.o.Now().UTC()
	m := Message{ID: "msg_" + store.NewID(), Event: EventTest, Title: "Test message from Warden",
		Summary: "Channel " + ch.Name + " reaches you. Nothing needs doing.", Link: "/notifications", At: now}
	if ch.Kind == Alertmanager || ch.Kind == PagerDuty {
		end := now.Add(5 * time.Minute)
		m.Alert = &AlertPart{DedupKey: "warden/test/" + ch.Name, Status: "firing", Severity: "info", Kind: "test", Subject: ch.Name,
			StartsAt: now, EndsAt: &end}
	}
	sendErr := s.sendGuarded(ctx, ch, sec, m)
	if sendErr == nil && ch.Kind == PagerDuty {
		// PagerDuty keeps an incident open until it is resolved.
		m.Alert.Status, m.Alert.EndsAt = "resolved", &now
		sendErr = s.sendGuarded(ctx, ch, sec, m)
	}
	err = s.o.DB.Transact(ctx, func(tx *store.Tx) error {
		if !unavailable(sendErr) {
			if err := recordResult(ctx, tx, ch.ID, now, sendErr); err != nil {
				return err
			}
		}
		details := map[string]any{"channel": ch.Name, "kind": ch.Kind, "message_id": m.ID, "ok": sendErr == nil}
		if sendErr != nil {
			details["error"] = clip(sendErr.Error(), 300)
		}
		_, err := audit.Append(ctx, tx, audit.Event{Actor: by, Verb: "notify.channel_tested",
			Subject: audit.Subject{Type: "notify_channel", ID: ch.ID}, Details: details})
		return err
	})
	return TestResult{MessageID: m.ID, Err: sendErr}, err
}

// dial is the SMTP dialer: through the egress policy.
func (s *Service) dial() func(ctx context.Context, network, address string) (net.Conn, error) {
	return s.o.policy().DialContext(&net.Dialer{Timeout: s.o.Timeout})
}

// Package changes puts Warden's own control plane under four eyes. A
// change that loosens a control (Table: raising a tenant's dual-control
// threshold, lowering a tool's impact class, switching a tool back on...)
// waits for a second admin, under the same rules as an approval of a
// refund (approvals.CheckDecider: never the requester, bound to the exact
// before and after by a payload digest, expiring, audited, decided once by
// a compare-and-set). A change that tightens one applies at once, so
// on-call can always stop things.
//
// A console handler drives it:
//
//	loosens, _ := changes.Loosens(kind, before, after)
//	if !loosens { apply now }
//	c, _ := changes.Request(ctx, db, user, proposal, now)      // pending; 303 to /changes/{id}
//	decision.Check = applier.Check                              // the object still as the before says
//	c, _ = changes.Decide(ctx, db, decision, now)               // a second admin; a moved object: 409, still pending
//	if c.Status == changes.Approved { apply; changes.Applied(ctx, db, c.ID, now) }
//
// With break glass allowed by the installation (WARDEN_BREAK_GLASS), one
// admin may apply a loosening change at once with a reason: BreakGlass
// records it (audit verb break_glass), pages on-call, and the admin home
// lists it until another admin marks it reviewed (Review).
package changes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// Statuses of a change.
const (
	Pending  = "pending"  // waiting for a second admin
	Approved = "approved" // decided; being applied
	Applied  = "applied"
	Failed   = "failed" // approved, but applying it failed
	Rejected = "rejected"
	Expired  = "expired"
)

// JobApply is the durable job an approval enqueues in its transaction: it
// applies the approved change unless the approver's request already did
// (ApplyJob's handler lives with the apply code, handlers.ApplyChangeJob).
// ApplyGrace is how long it waits for that request first.
const (
	JobApply   = "apply_change"
	ApplyGrace = 30 * time.Second
)

// ApplyJob is JobApply's payload.
type ApplyJob struct {
	Change string `json:"change"`
}

// TTL is how long a pending change waits for a second admin.
const TTL = 72 * time.Hour

// MaxReasonLen is the longest reason or comment kept.
const MaxReasonLen = 2000

// Refusals.
var (
	ErrNotAdmin       = problem.Forbidden("not_admin", "Only admins decide changes to Warden's controls.")
	ErrOutOfScope     = problem.Forbidden("out_of_scope", "This change is outside your tenants: it needs an admin of its tenant or of all tenants.")
	ErrOwnRequest     = problem.Forbidden("own_request", "You asked for this change, so another admin must decide it.")
	ErrSamePerson     = problem.Forbidden("same_person", "You asked for this change under another sign-in with the same e-mail, so another admin must decide it.")
	ErrNotFound       = problem.NotFound("not_found", "There is no change with this id.")
	ErrReasonRequired = problem.Unprocessable("reason_required", "Say why: a reason is required.")
	ErrReasonTooLong  = problem.Unprocessable("reason_too_long", fmt.Sprintf("Keep the reason under %d characters.", MaxReasonLen))
	ErrNoBreakGlass   = problem.Forbidden("break_glass_off", "Break glass is not allowed on this installation (WARDEN_BREAK_GLASS).")
	ErrAlreadyReview  = problem.Conflict("already_reviewed", "This break-glass change was already reviewed.")
	ErrOwnBreakGlass  = problem.Forbidden("own_break_glass", "You broke the glass, so another admin must review it.")
	ErrNotBreakGlass  = problem.Conflict("not_break_glass", "Only a break-glass change is reviewed afterwards.")
	ErrNotApplicable  = problem.Conflict("not_approved", "Only an approved change is applied.")
	ErrUnknownKind    = problem.Invalid("unknown_kind", "Warden does not know this kind of change.")
)

// Proposal is a change someone asks for.
type Proposal struct {
	Kind       string
	TenantID   string // "" for an installation-wide change
	TenantSlug string
	Subject    string // what it changes: a tenant's slug, a tool's name
	Summary    string // Warden's sentence: "Raise acme's dual-control threshold in USD from 1,000.00 to 1,000,000.00"
	Before     any    // the kind's value now
	After      any    // the kind's value asked for
	Reason     string
}

// Change is a recorded change: pending, decided, or applied by break glass.
type Change struct {
	ID               string
	Kind             string
	TenantID         string
	TenantSlug       string
	Subject          string
	Summary          string
	Before, After    json.RawMessage
	Reason           string
	PayloadDigest    string
	RequestedBy      string
	RequestedByName  string
	RequestedByEmail string
	Status           string
	BreakGlass       bool
	ExpiresAt        time.Time
	CreatedAt        time.Time
	DecidedBy        string
	DecidedByName    string
	DecisionComment  string
	DecidedAt        *time.Time
	Failure          string
	ReviewedByName   string
	ReviewedAt       *time.Time
}

// StatusAt is the status as people should read it at now: a pending
// change past its expiry is expired even before anything records it.
func (c Change) StatusAt(now time.Time) string {
	if c.Status == Pending && !now.Before(c.ExpiresAt) {
		return Expired
	}
	return c.Status
}

// Value decodes the change's before or after value into v.
func Value[T any](raw json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// digest binds a decision to the exact change: approvals' payload digest
// of the kind, its object and its before and after values.
func digest(kind, tenantID, subject string, before, after json.RawMessage) (string, error) {
	args, err := json.Marshal(map[string]any{"tenant": tenantID, "subject": subject, "before": before, "after": after})
	if err != nil {
		return "", err
	}
	return approvals.PayloadDigest("change."+kind, args)
}

func checkReason(reason string, required bool) (string, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case required && reason == "":
		return "", ErrReasonRequired
	case len(reason) > MaxReasonLen:
		return "", ErrReasonTooLong
	}
	return reason, nil
}

// record inserts a change with status and its audit event, inside tx.
func record(ctx context.Context, tx *store.Tx, p identity.Principal, pr Proposal, status string, breakGlass bool, verb string, now time.Time) (Change, error) {
	if _, ok := KindOf(pr.Kind); !ok {
		return Change{}, ErrUnknownKind
	}
	before, err := json.Marshal(pr.Before)
	if err != nil {
		return Change{}, fmt.Errorf("change %s: before: %w", pr.Kind, err)
	}
	after, err := json.Marshal(pr.After)
	if err != nil {
		return Change{}, fmt.Errorf("change %s: after: %w", pr.Kind, err)
	}
	d, err := digest(pr.Kind, pr.TenantID, pr.Subject, before, after)
	if err != nil {
		return Change{}, err
	}
	c := Change{ID: "chg_" + store.NewID(), Kind: pr.Kind, TenantID: pr.TenantID, TenantSlug: pr.TenantSlug, Subject: pr.Subject,
		Summary: pr.Summary, Before: before, After: after, Reason: pr.Reason, PayloadDigest: d,
		RequestedBy: p.ID, RequestedByName: p.DisplayName(), RequestedByEmail: p.Email, Status: status, BreakGlass: breakGlass,
		ExpiresAt: now.Add(TTL).UTC(), CreatedAt: now.UTC()}
	if _, err := tx.ExecContext(ctx, `INSERT INTO changes (id, kind, tenant_id, tenant_slug, subject, summary, before_json, after_json,
			reason, payload_digest, requested_by, requested_by_name, requested_by_email, status, break_glass, expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Kind, c.TenantID, c.TenantSlug, c.Subject, c.Summary, string(before), string(after), c.Reason, c.PayloadDigest,
		c.RequestedBy, c.RequestedByName, c.RequestedByEmail, c.Status, breakGlass, store.FormatTime(c.ExpiresAt), store.FormatTime(now)); err != nil {
		return Change{}, fmt.Errorf("record change %s: %w", pr.Kind, err)
	}
	if err := appendEvent(ctx, tx, p.ID, c, verb, map[string]any{"reason": c.Reason}); err != nil {
		return Change{}, err
	}
	return c, nil
}

func appendEvent(ctx context.Context, tx *store.Tx, actorID string, c Change, verb string, extra map[string]any) error {
	return appendEventBy(ctx, tx, audit.Actor{Type: audit.ActorPrincipal, ID: actorID}, c, verb, extra)
}

func appendEventBy(ctx context.Context, tx *store.Tx, actor audit.Actor, c Change, verb string, extra map[string]any) error {
	details := map[string]any{"kind": c.Kind, "subject": c.Subject, "summary": c.Summary, "payload_digest": c.PayloadDigest,
		"before": shown(c.Before), "after": shown(c.After)}
	for k, v := range extra {
		if v != "" {
			details[k] = v
		}
	}
	_, err := audit.Append(ctx, tx, audit.Event{
		Actor: actor, Tenant: c.TenantSlug, Verb: verb,
		Subject: audit.Subject{Type: "change", ID: c.ID}, Details: details,
	})
	return err
}

// Request records a loosening change as pending, for a second admin. The
// reason is optional (the approver reads it); the caller has checked that
// p may make the change at all.
func Request(ctx context.Context, db *store.DB, p identity.Principal, pr Proposal, now time.Time) (Change, error) {
	var err error
	if pr.Reason, err = checkReason(pr.Reason, false); err != nil {
		return Change{}, err
	}
	var c Change
	err = db.Transact(ctx, func(tx *store.Tx) error {
		if c, err = record(ctx, tx, p, pr, Pending, false, "change.requested", now); err != nil {
			return err
		}
		// Admins hear of it where their routes for pending changes say.
		return notify.ChangePending(ctx, tx, notify.ChangeInfo{ID: c.ID, Kind: c.Kind, TenantID: c.TenantID, TenantSlug: c.TenantSlug,
			Summary: c.Summary, RequestedBy: c.RequestedByName, ExpiresAt: c.ExpiresAt, At: now.UTC()})
	})
	return c, err
}

// CheckBreakGlass refuses break glass before anything is applied: not
// allowed on this installation, or without a reason.
func CheckBreakGlass(allowed bool, reason string) error {
	if !allowed {
		return ErrNoBreakGlass
	}
	_, err := checkReason(reason, true)
	return err
}

// BreakGlass records a loosening change that one admin applied at once,
// with a reason (required), as the installation allows (allowed): the
// audit event is break_glass, on-call's alert routes are told, and the
// change stays on the admin home until another admin reviews it. The
// caller applies the change first and records it only once it applied.
func BreakGlass(ctx context.Context, db *store.DB, p identity.Principal, pr Proposal, allowed bool, now time.Time) (Change, error) {
	if !allowed {
		return Change{}, ErrNoBreakGlass
	}
	var err error
	if pr.Reason, err = checkReason(pr.Reason, true); err != nil {
		return Change{}, err
	}
	var c Change
	err = db.Transact(ctx, func(tx *store.Tx) error {
		if c, err = record(ctx, tx, p, pr, Applied, true, "break_glass", now); err != nil {
			return err
		}
		// On-call hears of it where they hear of alerts: a critical
		// alert whose subject is the change (its summary and reason stay
		// in Warden: the message says what kind of change and where).
		return notify.AlertChanged(ctx, tx, notify.AlertInfo{ID: c.ID, Kind: "break_glass", Subject: c.ID,
			TenantID: c.TenantID, TenantSlug: c.TenantSlug, Severity: "critical",
			What:    "Break glass: " + p.DisplayName() + " applied a loosening change (" + c.Kind + ") without a second admin",
			FiredAt: now.UTC()})
	})
	return c, err
}

// Decision is a second admin's decision on a pending change.
type Decision struct {
	Principal identity.Principal
	ChangeID  string
	Decision  string // approvals.Approve or approvals.Reject
	Comment   string // required to reject
	Digest    string // the payload digest the admin saw
	// Check, on an approval, looks inside the decision's transaction
	// whether the change's object is still in its before state: a
	// *Moved refuses the approval (the console passes the apply code's
	// check, app.ChangeApplier.Check, which this package cannot import).
	// It may run more than once (a retried transaction).
	Check func(ctx context.Context, tx *store.Tx, c Change) (*Moved, error)
}

// Decide records a second admin's decision in one transaction with its
// audit event, under approvals' rules (CheckDecider with the admin role):
// not the requester, nor the requester under another sign-in with the
// same e-mail; only for the tenant in the admin's scope (an
// installation-wide change needs an admin of all tenants); not after
// expiry; only on the digest of the change as it was asked for; an
// approval only while the object is still as the change's before says
// (Check: else the change is out of date and can only be rejected, so an
// approver never approves what can no longer apply as reviewed). The
// status moves by compare-and-set, so of two admins racing exactly one
// decides. An approved change is then applied by the caller (Applied or
// Failed).
//
// An approval refused because the object moved is the one refusal the
// audit trail keeps (change.approval_refused, written after the
// decision's transaction rolled back): it is a second admin reviewing and
// agreeing to a change that a direct edit overtook, which an auditor
// reads beside that edit. The other refusals (the requester, out of
// scope, expired, stale) record nothing, as approvals' refusals do not;
// the change stays pending either way.
func Decide(ctx context.Context, db *store.DB, d Decision, now time.Time) (Change, error) {
	d.Comment = strings.TrimSpace(d.Comment)
	if d.Decision != approvals.Approve && d.Decision != approvals.Reject {
		return Change{}, problem.Invalid("unknown_decision", "Choose approve or reject.")
	}
	if d.Decision == approvals.Reject && d.Comment == "" {
		return Change{}, problem.Unprocessable("reason_required", "A rejection needs a reason: say why, for the requester and the audit trail.")
	}
	if len(d.Comment) > MaxReasonLen {
		return Change{}, ErrReasonTooLong
	}
	var c Change
	var moved *Moved
	err := db.Transact(ctx, func(tx *store.Tx) error {
		moved = nil // a retried run starts afresh (store.Transact)
		var err error
		if c, err = Get(ctx, tx, d.ChangeID); err != nil {
			return err
		}
		view := approvals.Action{RequestedBy: c.RequestedBy, Status: c.Status, ExpiresAt: c.ExpiresAt, PayloadDigest: c.PayloadDigest}
		if c.Status == Applied || c.Status == Failed || c.Status == Approved {
			view.Status = approvals.StatusApproved
		}
		if err := approvals.CheckDecider(identity.RoleAdmin, ErrNotAdmin, d.Principal, view, c.TenantSlug, nil, d.Digest, now); err != nil {
			switch {
			case errors.Is(err, approvals.ErrOutOfScope):
				return ErrOutOfScope
			case errors.Is(err, approvals.ErrOwnRequest):
				return ErrOwnRequest
			case errors.Is(err, approvals.ErrExpired):
				return problem.Conflict("expired", "This change expired before a second admin decided it; ask for it again.").Titled("This change can no longer be decided")
			case errors.Is(err, approvals.ErrAlreadyDecided):
				return problem.Conflict("already_decided", "This change was already decided.").Titled("This change can no longer be decided")
			case errors.Is(err, approvals.ErrStale):
				return problem.Conflict("stale", "This change is no longer the one you reviewed. Reload it and review it again.")
			}
			return err
		}
		if c.RequestedByEmail != "" && strings.EqualFold(strings.TrimSpace(c.RequestedByEmail), strings.TrimSpace(d.Principal.Email)) {
			return ErrSamePerson
		}
		if d.Decision == approvals.Approve {
			if err := checkOwners(ctx, tx, d.Principal, c); err != nil {
				return err
			}
			if d.Check != nil {
				switch m, err := d.Check(ctx, tx, c); {
				case err != nil:
					return err
				case m != nil:
					moved = m
					return m.Problem()
				}
			}
		}
		status, verb := Approved, "change.approved"
		if d.Decision == approvals.Reject {
			status, verb = Rejected, "change.rejected"
		}
		res, err := tx.ExecContext(ctx, `UPDATE changes SET status = ?, decided_by = ?, decided_by_name = ?, decision_comment = ?, decided_at = ?
			WHERE id = ? AND status = 'pending'`, status, d.Principal.ID, d.Principal.DisplayName(), d.Comment, store.FormatTime(now), c.ID)
		if err != nil {
			return fmt.Errorf("decide change %s: %w", c.ID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return problem.Conflict("already_decided", "This change was already decided.")
		}
		t := now.UTC()
		c.Status, c.DecidedBy, c.DecidedByName, c.DecisionComment, c.DecidedAt = status, d.Principal.ID, d.Principal.DisplayName(), d.Comment, &t
		if status == Approved {
			// The approval and the job that applies it commit together:
			// if the process dies before the caller's apply, the job
			// applies it, so no change stays approved and unapplied.
			if err := jobs.Enqueue(ctx, tx, JobApply, ApplyJob{Change: c.ID}, jobs.Options{RunAt: now.Add(ApplyGrace),
				UniqueKey: "change-apply:" + c.ID}); err != nil {
				return err
			}
		}
		return appendEvent(ctx, tx, d.Principal.ID, c, verb, map[string]any{"comment": d.Comment, "requested_by": c.RequestedBy})
	})
	if moved != nil && err != nil {
		if aerr := approvalRefused(ctx, db, d.Principal.ID, c, problem.From(err).Code); aerr != nil {
			return c, aerr
		}
	}
	return c, err
}

// approvalRefused records, in its own transaction, that p's approval of c
// was refused with the refusal's code. Its details name the change
// (kind, subject, Warden's summary, the digest reviewed) and the
// requester, never a value: the before and after are in the change's
// change.requested event, and what the object holds now is the object's.
// If it cannot be written, the refusal is answered as an error rather
// than as a refusal nobody can later find.
func approvalRefused(ctx context.Context, db *store.DB, actorID string, c Change, code string) error {
	err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor: audit.Actor{Type: audit.ActorPrincipal, ID: actorID}, Tenant: c.TenantSlug, Verb: "change.approval_refused",
			Subject: audit.Subject{Type: "change", ID: c.ID},
			Details: map[string]any{"kind": c.Kind, "subject": c.Subject, "summary": c.Summary, "payload_digest": c.PayloadDigest,
				"reason": code, "requested_by": c.RequestedBy},
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("audit the refused approval of change %s: %w", c.ID, err)
	}
	return nil
}

// MarkApplied records that an approved change was applied (or, with a
// non-empty failure, that applying it failed), with its audit event.
func MarkApplied(ctx context.Context, db *store.DB, id, failure string, now time.Time) (Change, error) {
	var c Change
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if c, err = Get(ctx, tx, id); err != nil {
			return err
		}
		status, verb := Applied, "change.applied"
		if failure != "" {
			status, verb = Failed, "change.failed"
		}
		res, err := tx.ExecContext(ctx, `UPDATE changes SET status = ?, failure = ? WHERE id = ? AND status = 'approved'`, status, failure, id)
		if err != nil {
			return fmt.Errorf("apply change %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrNotApplicable
		}
		c.Status, c.Failure = status, failure
		return appendEvent(ctx, tx, c.DecidedBy, c, verb, map[string]any{"failure": failure})
	})
	return c, err
}

// ExpireDue marks the pending changes past their expiry as expired, each
// in one transaction with its change.expired audit event (the actor is
// Warden); the periodic expiry job calls it. A change decided meanwhile
// is left as decided. It returns how many it marked.
func ExpireDue(ctx context.Context, db *store.DB, now time.Time) (int, error) {
	due, err := store.Query(ctx, db.Read(), scan, `SELECT `+changeColumns+` FROM changes WHERE status = 'pending' AND expires_at <= ?
		ORDER BY expires_at, id LIMIT 500`, store.FormatTime(now))
	if err != nil {
		return 0, fmt.Errorf("changes due to expire: %w", err)
	}
	n := 0
	for _, c := range due {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE changes SET status = 'expired' WHERE id = ? AND status = 'pending' AND expires_at <= ?`,
				c.ID, store.FormatTime(now))
			if err != nil {
				return fmt.Errorf("expire change %s: %w", c.ID, err)
			}
			if k, _ := res.RowsAffected(); k != 1 {
				return nil // decided meanwhile
			}
			n++
			c.Status = Expired
			return appendEventBy(ctx, tx, audit.Actor{Type: audit.ActorSystem, ID: "changes"}, c, "change.expired",
				map[string]any{"requested_by": c.RequestedBy, "expired_at": store.FormatTime(c.ExpiresAt)})
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Review marks a break-glass change reviewed by another admin: it leaves
// the admin home. The note is optional.
func Review(ctx context.Context, db *store.DB, p identity.Principal, id, note string, now time.Time) (Change, error) {
	note, err := checkReason(note, false)
	if err != nil {
		return Change{}, err
	}
	var c Change
	err = db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if c, err = Get(ctx, tx, id); err != nil {
			return err
		}
		switch {
		case !p.HasRole(identity.RoleAdmin):
			return ErrNotAdmin
		case !p.InTenant(c.TenantSlug):
			return ErrOutOfScope
		case !c.BreakGlass:
			return ErrNotBreakGlass
		case c.RequestedBy == p.ID || (c.RequestedByEmail != "" && strings.EqualFold(c.RequestedByEmail, p.Email)):
			return ErrOwnBreakGlass
		case c.ReviewedAt != nil:
			return ErrAlreadyReview
		}
		res, err := tx.ExecContext(ctx, `UPDATE changes SET reviewed_by_name = ?, reviewed_at = ? WHERE id = ? AND reviewed_at IS NULL`,
			p.DisplayName(), store.FormatTime(now), id)
		if err != nil {
			return fmt.Errorf("review change %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrAlreadyReview
		}
		t := now.UTC()
		c.ReviewedByName, c.ReviewedAt = p.DisplayName(), &t
		return appendEvent(ctx, tx, p.ID, c, "break_glass.reviewed", map[string]any{"note": note})
	})
	return c, err
}

const changeColumns = `id, kind, tenant_id, tenant_slug, subject, summary, before_json, after_json, reason, payload_digest,
	requested_by, requested_by_name, requested_by_email, status, break_glass, expires_at, created_at, decided_by, decided_by_name,
	decision_comment, decided_at, failure, reviewed_by_name, reviewed_at`

func scan(s store.Scanner) (Change, error) {
	var c Change
	var before, after, expires, created string
	var decided, reviewed *string
	var bg int64
	if err := s.Scan(&c.ID, &c.Kind, &c.TenantID, &c.TenantSlug, &c.Subject, &c.Summary, &before, &after, &c.Reason, &c.PayloadDigest,
		&c.RequestedBy, &c.RequestedByName, &c.RequestedByEmail, &c.Status, &bg, &expires, &created, &c.DecidedBy, &c.DecidedByName,
		&c.DecisionComment, &decided, &c.Failure, &c.ReviewedByName, &reviewed); err != nil {
		return Change{}, err
	}
	c.Before, c.After, c.BreakGlass = json.RawMessage(before), json.RawMessage(after), bg != 0
	c.ExpiresAt, _ = time.Parse(time.RFC3339Nano, expires)
	c.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	c.DecidedAt, c.ReviewedAt = parseOpt(decided), parseOpt(reviewed)
	return c, nil
}

func parseOpt(s *string) *time.Time {
	if s == nil || *s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil
	}
	return &t
}

// Get loads a change, or ErrNotFound.
func Get(ctx context.Context, q store.Querier, id string) (Change, error) {
	c, err := store.Get(ctx, q, scan, `SELECT `+changeColumns+` FROM changes WHERE id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Change{}, ErrNotFound
	}
	return c, err
}

// inScope keeps the changes p may see: an admin of all tenants sees all;
// one of some tenants sees theirs and no installation-wide one.
func inScope(p identity.Principal, cs []Change) []Change {
	out := cs[:0]
	for _, c := range cs {
		if p.InTenant(c.TenantSlug) {
			out = append(out, c)
		}
	}
	return out
}

// Queue lists the changes waiting for a second admin that p may see,
// oldest first, and the latest 50 decided or applied ones.
func Queue(ctx context.Context, q store.Querier, p identity.Principal, now time.Time) (pending, recent []Change, err error) {
	all, err := store.Query(ctx, q, scan, `SELECT `+changeColumns+` FROM changes WHERE status = 'pending' AND expires_at > ? ORDER BY created_at, id`,
		store.FormatTime(now))
	if err != nil {
		return nil, nil, fmt.Errorf("pending changes: %w", err)
	}
	done, err := store.Query(ctx, q, scan, `SELECT `+changeColumns+` FROM changes WHERE NOT (status = 'pending' AND expires_at > ?)
		ORDER BY created_at DESC, id DESC LIMIT 50`, store.FormatTime(now))
	if err != nil {
		return nil, nil, fmt.Errorf("recent changes: %w", err)
	}
	return inScope(p, all), inScope(p, done), nil
}

// PendingToRead lists the changes of kinds waiting for a second admin
// that p may read about on the page of what they change, oldest first:
// those of p's tenants and the installation-wide ones, which such a page
// (the Alerts page's thresholds per skill) shows everyone who opens it.
// Queue is stricter, as deciding is: only an admin of all tenants
// decides an installation-wide change.
func PendingToRead(ctx context.Context, q store.Querier, p identity.Principal, now time.Time, kinds ...string) ([]Change, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	args := []any{store.FormatTime(now)}
	for _, k := range kinds {
		args = append(args, k)
	}
	all, err := store.Query(ctx, q, scan, `SELECT `+changeColumns+` FROM changes WHERE status = 'pending' AND expires_at > ?
		AND kind IN (?`+strings.Repeat(", ?", len(kinds)-1)+`) ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("pending changes of %s: %w", strings.Join(kinds, ", "), err)
	}
	out := all[:0]
	for _, c := range all {
		if c.TenantSlug == "" || p.InTenant(c.TenantSlug) {
			out = append(out, c)
		}
	}
	return out, nil
}

// PendingOn lists the pending changes of one kind's object (subject), for
// that object's page.
func PendingOn(ctx context.Context, q store.Querier, subject string, now time.Time, kinds ...string) ([]Change, error) {
	out, err := store.Query(ctx, q, scan, `SELECT `+changeColumns+` FROM changes WHERE subject = ? AND status = 'pending' AND expires_at > ?
		ORDER BY created_at, id`, subject, store.FormatTime(now))
	if err != nil {
		return nil, fmt.Errorf("pending changes of %s: %w", subject, err)
	}
	if len(kinds) == 0 {
		return out, nil
	}
	keep := out[:0]
	for _, c := range out {
		for _, k := range kinds {
			if c.Kind == k {
				keep = append(keep, c)
			}
		}
	}
	return keep, nil
}

// Unreviewed lists break-glass changes nobody has reviewed yet, that p
// may see, newest first: the admin home shows them.
func Unreviewed(ctx context.Context, q store.Querier, p identity.Principal) ([]Change, error) {
	out, err := store.Query(ctx, q, scan, `SELECT `+changeColumns+` FROM changes WHERE break_glass != 0 AND reviewed_at IS NULL
		ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("unreviewed break-glass changes: %w", err)
	}
	return inScope(p, out), nil
}

// shown is a value as the audit trail keeps it: without what is only there
// to apply it (a sealed key, a whole tool or deployment definition), which
// the payload digest binds anyway.
func shown(raw json.RawMessage) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	for _, k := range []string{"key_sealed", "tool", "deployment"} {
		delete(m, k)
	}
	return m
}

// checkOwners refuses an approval of a change that needs owners
// (OwnersNeeded: a release changing a high-risk skill) from an admin who
// is not each one's owner: the person named, or a member of the group as
// the identity provider said at the admin's last sign-in (principals).
func checkOwners(ctx context.Context, tx *store.Tx, p identity.Principal, c Change) error {
	need := OwnersNeeded(c)
	if len(need) == 0 {
		return nil
	}
	groups, err := principals.GroupsOf(ctx, tx, p.ID)
	if err != nil {
		return err
	}
	var missing []string
	for _, o := range need {
		if !identity.Owns(o.Owner, p.Email, groups) {
			missing = append(missing, "the high-risk skill "+o.Skill+" is owned by "+o.Owner)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return problem.Forbidden("not_owner", "You cannot approve this change: "+strings.Join(missing, "; ")+
		", and approving needs its owner (a member of the group at their last sign-in, or the person named).").Titled("This change needs its skill's owner")
}

package alerts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// MaxAckNote bounds an acknowledgement's note: it is kept for good.
const MaxAckNote = 500

// AckRoles may acknowledge an alert: the people it pages.
var AckRoles = []string{identity.RoleOncall, identity.RoleAdmin}

// Errors of Acknowledge people can act on.
var (
	ErrNoSuchAlert    = problem.NotFound("not_found", "There is no such alert.")
	ErrAckNoteTooLong = problem.Unprocessable("note_too_long", fmt.Sprintf("Keep the note to %d characters.", MaxAckNote))
)

// Acknowledge records that p is on the alert: who, when and an optional
// note, with its alert.acknowledged event, in one transaction. An alert
// is acknowledged once (compare-and-set on acked_at): a second press,
// by anyone, changes and records nothing (changed false), and the page
// shows who got there first. A resolved alert can still be acknowledged,
// for the record. Only on-call and admins may, and a budget alert only
// by someone whose scope holds its tenant.
func Acknowledge(ctx context.Context, db *store.DB, p *identity.Principal, id, note string, now time.Time) (changed bool, err error) {
	if p == nil || !p.HasAnyRole(AckRoles...) {
		return false, problem.Forbidden("forbidden", "Only on-call and admins may acknowledge alerts.")
	}
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > MaxAckNote {
		return false, ErrAckNoteTooLong
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false
		a, err := Get(ctx, tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNoSuchAlert
		}
		if err != nil {
			return err
		}
		if a.Tenant != "" && !p.InTenant(a.Tenant) {
			return ErrNoSuchAlert
		}
		res, err := tx.ExecContext(ctx, `UPDATE alerts SET acked_by = ?, acked_by_name = ?, acked_at = ?, ack_note = ?
			WHERE id = ? AND acked_at IS NULL`, p.ID, p.DisplayName(), store.FormatTime(now.UTC()), note, id)
		if err != nil {
			return fmt.Errorf("acknowledge alert %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = true
		details := map[string]any{"kind": a.Kind, "subject": a.Subject, "what": a.What()}
		if note != "" {
			details["note"] = note
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: audit.Actor{Type: audit.ActorPrincipal, ID: p.ID}, Tenant: a.Tenant, Verb: "alert.acknowledged",
			Subject: audit.Subject{Type: "alert", ID: a.ID}, Details: details,
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

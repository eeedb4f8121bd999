// Package tenants changes tenants: their creation, name, freeze switch,
// trace retention and dual-control settings. Each change commits in one
// transaction with its audit event, so the trail can never miss a change
// nor record one that did not happen; pressing a button a second time
// changes nothing and records nothing. This package owns the tenants and
// dual_control_thresholds tables: their SQL is in store.go, and other
// packages read tenants through BySlug, ByID, SlugOf, List and Thresholds.
// The row-level writers ending in Tx (Insert, SetFrozenTx, ...) change a
// row inside a caller's transaction without an audit event; they are for
// seeding and tests.
//
// A console handler checks the principal's scope, parses its form and
// calls one function:
//
//	t, err := tenants.Create(ctx, db, actor, "acme", "Acme")  // ErrDuplicateSlug
//	changed, err := tenants.SetFrozen(ctx, db, actor, t.ID, true, "INC-12: leaked key")
//	changed, err = tenants.Rename(ctx, db, actor, t.ID, "Acme Corp")
//	var inv *store.ValidationError
//	if errors.As(err, &inv) { /* show inv.Fields next to the form's fields */ }
//
// An unknown tenant id is store.ErrNotFound.
package tenants

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Create adds a tenant with the default settings and records who added
// it. The slug check and the insert share the transaction's write lock,
// so two admins adding the same slug get one tenant and one
// ErrDuplicateSlug. A bad slug or name is a *store.ValidationError
// naming both fields when both are wrong.
func Create(ctx context.Context, db *store.DB, actor audit.Actor, slug, name string) (Tenant, error) {
	var t Tenant
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if t, err = insertChecked(ctx, tx, slug, name); err != nil {
			return err
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Tenant:  t.Slug,
			Verb:    "tenant.create",
			Subject: audit.Subject{Type: "tenant", ID: t.ID},
			Details: map[string]any{"slug": t.Slug, "name": t.Name},
		})
		return err
	})
	if err != nil {
		return Tenant{}, err
	}
	return t, nil
}

// Rename changes a tenant's display name. The audit event keeps the name
// it had, read under the same lock as the change, so the trail shows every
// name the tenant went by.
func Rename(ctx context.Context, db *store.DB, actor audit.Actor, id, name string) (changed bool, err error) {
	name = strings.TrimSpace(name)
	return change(ctx, db, actor, id, "tenant.rename", func(ctx context.Context, tx *store.Tx, t Tenant) (bool, map[string]any, error) {
		changed, err := renameTx(ctx, tx, id, name)
		return changed, map[string]any{"from": t.Name, "to": name}, err
	})
}

// ErrFreezeReasonRequired refuses freezing a tenant without saying why:
// the reason goes into the audit trail and onto the tenant's page and the
// actions the freeze blocks.
var ErrFreezeReasonRequired = problem.Unprocessable("reason_required", "Say why the tenant is frozen: the reason goes into the audit trail and tells whoever unfreezes it.")

// MaxFreezeReason bounds the reason kept for a freeze.
const MaxFreezeReason = 500

// SetFrozen freezes (frozen true) or unfreezes a tenant: its agents' keys
// are refused while it is frozen. Freezing requires a reason, kept with
// who froze it and when (FreezeOf) and in the tenant.freeze event.
// Pressing it again changes nothing and records nothing.
func SetFrozen(ctx context.Context, db *store.DB, actor audit.Actor, id string, frozen bool, reason string) (changed bool, err error) {
	reason = strings.TrimSpace(reason)
	if frozen && reason == "" {
		return false, ErrFreezeReasonRequired
	}
	if utf8.RuneCountInString(reason) > MaxFreezeReason {
		return false, problem.Unprocessable("reason_too_long", fmt.Sprintf("Keep the reason to %d characters.", MaxFreezeReason))
	}
	verb := "tenant.freeze"
	if !frozen {
		verb = "tenant.unfreeze"
	}
	return change(ctx, db, actor, id, verb, func(ctx context.Context, tx *store.Tx, _ Tenant) (bool, map[string]any, error) {
		changed, err := SetFrozenTx(ctx, tx, id, frozen)
		if err != nil || !changed {
			return changed, nil, err
		}
		if err := recordFreeze(ctx, tx, id, reason, actor.Type+":"+actor.ID, time.Now()); err != nil {
			return false, nil, err
		}
		details := map[string]any{"frozen": frozen}
		if reason != "" {
			details["reason"] = reason
		}
		return true, details, nil
	})
}

// SetRetention sets how many days a tenant's traces are kept. Shortening
// it deletes evidence at the next sweep, so the event keeps the value it
// replaced.
func SetRetention(ctx context.Context, db *store.DB, actor audit.Actor, id string, days int) (changed bool, err error) {
	return change(ctx, db, actor, id, "tenant.retention", func(ctx context.Context, tx *store.Tx, t Tenant) (bool, map[string]any, error) {
		changed, err := setRetentionTx(ctx, tx, id, days)
		return changed, map[string]any{"from_days": t.RetentionDays, "to_days": days}, err
	})
}

// SetThreshold sets the amount from which a tenant's actions in one
// currency need two approvers (0: one approver for any amount). It
// decides who may move money, so the event keeps the threshold it
// replaced, when there was one. It applies to actions requested from now
// on.
func SetThreshold(ctx context.Context, db *store.DB, actor audit.Actor, id string, th Threshold) (changed bool, err error) {
	return change(ctx, db, actor, id, "tenant.dual_control", func(ctx context.Context, tx *store.Tx, _ Tenant) (bool, map[string]any, error) {
		details := map[string]any{"currency": th.Currency, "to_minor": th.Minor}
		from, err := ThresholdFor(ctx, tx, id, th.Currency)
		switch {
		case err == nil:
			details["from_minor"] = from
		case !errors.Is(err, store.ErrNotFound):
			return false, nil, err
		}
		changed, err := SetThresholdTx(ctx, tx, id, th)
		return changed, details, err
	})
}

// RemoveThreshold deletes a tenant's threshold in one currency: actions in
// it then need two approvers for any amount, so removing one can only
// make approval stricter. Removing one that is not there records nothing.
func RemoveThreshold(ctx context.Context, db *store.DB, actor audit.Actor, id, currency string) (changed bool, err error) {
	return change(ctx, db, actor, id, "tenant.dual_control_removed", func(ctx context.Context, tx *store.Tx, _ Tenant) (bool, map[string]any, error) {
		changed, err := removeThresholdTx(ctx, tx, id, currency)
		return changed, map[string]any{"currency": currency}, err
	})
}

// SetDualControlWindow sets, in whole hours, how far back actions on the
// same target add up for dual control. It takes hours, as the form does,
// and checks their range before they become a duration, which a large
// number would overflow; out of range is a *store.ValidationError.
func SetDualControlWindow(ctx context.Context, db *store.DB, actor audit.Actor, id string, hours int) (changed bool, err error) {
	if msg := ValidateDualControlHours(hours); msg != "" {
		return false, fmt.Errorf("set dual-control window of tenant %s: %w",
			id, &store.ValidationError{Fields: map[string]string{"window_hours": msg}})
	}
	window := time.Duration(hours) * time.Hour
	return change(ctx, db, actor, id, "tenant.dual_control_window", func(ctx context.Context, tx *store.Tx, t Tenant) (bool, map[string]any, error) {
		changed, err := SetDualControlWindowTx(ctx, tx, id, window)
		return changed, map[string]any{"from_hours": int64(t.DualControlWindow / time.Hour), "to_hours": hours}, err
	})
}

// apply makes one change to tenant t inside tx: it reports whether
// anything changed and the audit details describing the change.
type apply func(ctx context.Context, tx *store.Tx, t Tenant) (changed bool, details map[string]any, err error)

// change loads the tenant inside the write transaction (so the values an
// event says it replaced are the ones it did replace), applies fn, and
// records verb only when something changed.
func change(ctx context.Context, db *store.DB, actor audit.Actor, id, verb string, fn apply) (bool, error) {
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		t, err := ByID(ctx, tx, id)
		if err != nil {
			return err
		}
		var details map[string]any
		if changed, details, err = fn(ctx, tx, t); err != nil || !changed {
			return err
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: actor, Tenant: t.Slug, Verb: verb,
			Subject: audit.Subject{Type: "tenant", ID: t.ID}, Details: details,
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

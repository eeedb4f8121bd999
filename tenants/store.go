package tenants

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// This file holds the tenant tables' SQL: tenants and
// dual_control_thresholds are written by this package alone.

// invalid is a store.ValidationError of one field.
func invalid(field, msg string) *store.ValidationError {
	return &store.ValidationError{Fields: map[string]string{field: msg}}
}

// Tenant is an organisation whose agents run through Warden.
type Tenant struct {
	ID, Slug, Name, CreatedAt string
	Frozen                    bool
	RetentionDays             int // how long its traces are kept
	// DualControlWindow is how far back actions on the same target add up
	// for dual control.
	DualControlWindow time.Duration
}

// Threshold is a tenant's dual-control threshold in one currency: actions
// of at least Minor (the currency's minor units) need two approvers; 0
// switches dual control off for that currency.
type Threshold struct {
	Currency string
	Minor    int64
}

// DefaultThreshold is what a new tenant starts with: two approvers from
// $1,000.00.
var DefaultThreshold = Threshold{Currency: "USD", Minor: 100_000}

// Limits of the dual-control window.
const (
	MinDualControlWindow = time.Hour
	MaxDualControlWindow = 90 * 24 * time.Hour
)

// Limits on tenant settings.
const (
	MaxNameChars     = 100
	MinRetentionDays = 1
	MaxRetentionDays = 3650
)

// slugRe is the tenant slug rule: the same alphabet the identity
// provider's tenant groups use (identity.Grants), 2–63 characters.
var slugRe = regexp.MustCompile(`^[a-z0-9-]{2,63}$`)

// ValidateSlug returns a message when slug is not a valid tenant
// slug, or "".
func ValidateSlug(slug string) string {
	if !slugRe.MatchString(slug) {
		return "Use 2–63 lower-case letters, digits and dashes, such as acme or acme-eu."
	}
	return ""
}

// ValidateName returns a message when name (already trimmed) is not
// a usable tenant name, or "".
func ValidateName(name string) string {
	switch {
	case name == "":
		return "Give the tenant a name, such as the organisation's name."
	case utf8.RuneCountInString(name) > MaxNameChars:
		return fmt.Sprintf("Keep the name to %d characters or fewer.", MaxNameChars)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "The name cannot contain control characters."
	}
	return ""
}

// ValidateRetentionDays returns a message when days is outside the allowed
// range, or "".
func ValidateRetentionDays(days int) string {
	if days < MinRetentionDays || days > MaxRetentionDays {
		return fmt.Sprintf("Keep traces between %d and %d days.", MinRetentionDays, MaxRetentionDays)
	}
	return ""
}

// ValidateDualControlHours returns a message when a dual-control window of
// hours is outside the allowed range, or "". It takes the hours the form
// holds rather than a duration, which a large number would overflow.
func ValidateDualControlHours(hours int) string {
	if hours < int(MinDualControlWindow/time.Hour) || hours > int(MaxDualControlWindow/time.Hour) {
		return dualControlWindowRule
	}
	return ""
}

var dualControlWindowRule = fmt.Sprintf("Use a whole number of hours from %d to %d (%d days).",
	int(MinDualControlWindow/time.Hour), int(MaxDualControlWindow/time.Hour), int(MaxDualControlWindow/(24*time.Hour)))

// ErrDuplicateSlug means another tenant already has the slug.
var ErrDuplicateSlug = errors.New("tenant slug already taken")

// Insert inserts a tenant inside tx and returns it.
func Insert(ctx context.Context, tx *store.Tx, slug, name string) (Tenant, error) {
	t := Tenant{ID: store.NewID(), Slug: slug, Name: name, CreatedAt: store.Now()}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO tenants (id, slug, name, frozen, created_at) VALUES (?, ?, ?, 0, ?)`,
		t.ID, t.Slug, t.Name, t.CreatedAt)
	if err != nil {
		return Tenant{}, fmt.Errorf("create tenant %s: %w", slug, err)
	}
	if _, err := SetThresholdTx(ctx, tx, t.ID, DefaultThreshold); err != nil {
		return Tenant{}, err
	}
	return t, nil
}

const selectTenant = `SELECT id, slug, name, frozen, created_at, trace_retention_days, dual_control_window_s FROM tenants`

// JoinedColumns are a tenant's columns in a query that joins tenants as
// t, in the order ScanJoined reads them: a read of another table that
// needs its tenant too (keys.AuthenticateWithTenant) gets both in one
// statement.
const JoinedColumns = `t.id, t.slug, t.name, t.frozen, t.created_at, t.trace_retention_days, t.dual_control_window_s`

// ScanJoined returns where the values of JoinedColumns go, to append to
// the destinations of a row's Scan, and the tenant they make once it has
// scanned.
func ScanJoined() (dest []any, tenant func() Tenant) {
	var t Tenant
	var windowS int64
	return []any{&t.ID, &t.Slug, &t.Name, &t.Frozen, &t.CreatedAt, &t.RetentionDays, &windowS}, func() Tenant {
		t.DualControlWindow = time.Duration(windowS) * time.Second
		return t
	}
}

func scanTenant(s store.Scanner) (Tenant, error) {
	var t Tenant
	var windowS int64
	err := s.Scan(&t.ID, &t.Slug, &t.Name, &t.Frozen, &t.CreatedAt, &t.RetentionDays, &windowS)
	t.DualControlWindow = time.Duration(windowS) * time.Second
	return t, err
}

// BySlug loads a tenant, or store.ErrNotFound.
func BySlug(ctx context.Context, q store.Querier, slug string) (Tenant, error) {
	t, err := store.Get(ctx, q, scanTenant, selectTenant+` WHERE slug = ?`, slug)
	if errors.Is(err, store.ErrNotFound) {
		return Tenant{}, problem.NotFound("not_found", "There is no tenant "+strconv.Quote(slug)+".")
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("load tenant %s: %w", slug, err)
	}
	return t, nil
}

// ByID loads a tenant by id, or store.ErrNotFound.
func ByID(ctx context.Context, q store.Querier, id string) (Tenant, error) {
	t, err := store.Get(ctx, q, scanTenant, selectTenant+` WHERE id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Tenant{}, problem.NotFound("not_found", "There is no such tenant.")
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("load tenant %s: %w", id, err)
	}
	return t, nil
}

// SlugOf is the slug of the tenant with this id (audit events and
// providers name tenants by slug).
func SlugOf(ctx context.Context, q store.Querier, id string) (string, error) {
	t, err := ByID(ctx, q, id)
	return t.Slug, err
}

// insertChecked validates slug and name (a *store.ValidationError with
// both fields' mistakes), refuses a slug that is taken (ErrDuplicateSlug)
// and then creates the tenant inside tx. Because tx holds the write lock,
// the check and the insert cannot race another writer.
func insertChecked(ctx context.Context, tx *store.Tx, slug, name string) (Tenant, error) {
	name = strings.TrimSpace(name)
	errs := map[string]string{}
	if msg := ValidateSlug(slug); msg != "" {
		errs["slug"] = msg
	}
	if msg := ValidateName(name); msg != "" {
		errs["name"] = msg
	}
	if len(errs) > 0 {
		return Tenant{}, fmt.Errorf("create tenant %q: %w", slug, &store.ValidationError{Fields: errs})
	}
	if _, err := BySlug(ctx, tx, slug); err == nil {
		return Tenant{}, ErrDuplicateSlug
	} else if !errors.Is(err, store.ErrNotFound) {
		return Tenant{}, err
	}
	t, err := Insert(ctx, tx, slug, name)
	if err != nil {
		return Tenant{}, err
	}
	// Read it back for the defaults the schema fills in.
	return ByID(ctx, tx, t.ID)
}

// renameTx changes a tenant's display name inside tx. It reports
// whether the name changed; an unusable name is a *store.ValidationError.
func renameTx(ctx context.Context, tx *store.Tx, id, name string) (bool, error) {
	name = strings.TrimSpace(name)
	if msg := ValidateName(name); msg != "" {
		return false, fmt.Errorf("rename tenant %s: %w", id, invalid("name", msg))
	}
	return updateTenant(ctx, tx, id, "rename", `UPDATE tenants SET name = ? WHERE id = ? AND name != ?`, name, id, name)
}

// SetFrozenTx freezes or unfreezes a tenant inside tx. It reports whether
// anything changed: freezing a frozen tenant is a harmless no-op.
func SetFrozenTx(ctx context.Context, tx *store.Tx, id string, frozen bool) (bool, error) {
	return updateTenant(ctx, tx, id, "freeze", `UPDATE tenants SET frozen = ? WHERE id = ? AND frozen != ?`, frozen, id, frozen)
}

// setRetentionTx sets how many days a tenant's traces are kept, inside tx.
// It reports whether the value changed; days out of range are a
// *store.ValidationError.
func setRetentionTx(ctx context.Context, tx *store.Tx, id string, days int) (bool, error) {
	if msg := ValidateRetentionDays(days); msg != "" {
		return false, fmt.Errorf("set retention of tenant %s: %w", id, invalid("retention_days", msg))
	}
	return updateTenant(ctx, tx, id, "set retention of", `UPDATE tenants SET trace_retention_days = ? WHERE id = ? AND trace_retention_days != ?`, days, id, days)
}

// SetThresholdTx sets a tenant's dual-control threshold in one currency,
// inside tx. It reports whether the value changed; a negative amount is a
// *store.ValidationError.
func SetThresholdTx(ctx context.Context, tx *store.Tx, id string, th Threshold) (bool, error) {
	if th.Minor < 0 {
		return false, fmt.Errorf("set dual control of tenant %s: %w", id, invalid("dual_control", "The threshold cannot be negative."))
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO dual_control_thresholds (tenant_id, currency, threshold_minor, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant_id, currency) DO UPDATE SET threshold_minor = excluded.threshold_minor, updated_at = excluded.updated_at
		WHERE dual_control_thresholds.threshold_minor != excluded.threshold_minor`, id, th.Currency, th.Minor, store.Now())
	if err != nil {
		return false, fmt.Errorf("set dual control of tenant %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// removeThresholdTx deletes a tenant's threshold in one currency, inside tx:
// that currency then needs two approvers for any amount. It reports
// whether there was one.
func removeThresholdTx(ctx context.Context, tx *store.Tx, id, currency string) (bool, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM dual_control_thresholds WHERE tenant_id = ? AND currency = ?`, id, currency)
	if err != nil {
		return false, fmt.Errorf("remove dual control of tenant %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Thresholds returns a tenant's dual-control thresholds by currency.
func Thresholds(ctx context.Context, q store.Querier, id string) ([]Threshold, error) {
	out, err := store.Query(ctx, q, func(s store.Scanner) (Threshold, error) {
		var th Threshold
		err := s.Scan(&th.Currency, &th.Minor)
		return th, err
	}, `SELECT currency, threshold_minor FROM dual_control_thresholds WHERE tenant_id = ? ORDER BY currency`, id)
	if err != nil {
		return nil, fmt.Errorf("dual control of tenant %s: %w", id, err)
	}
	return out, nil
}

// ThresholdFor returns a tenant's threshold in one currency, or
// store.ErrNotFound when none is set.
func ThresholdFor(ctx context.Context, q store.Querier, id, currency string) (int64, error) {
	var minor int64
	err := q.QueryRowContext(ctx, `SELECT threshold_minor FROM dual_control_thresholds WHERE tenant_id = ? AND currency = ?`, id, currency).Scan(&minor)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("dual control of tenant %s: %w", id, err)
	}
	return minor, nil
}

// SetDualControlWindowTx sets how far back actions on one target add up,
// inside tx. It reports whether the value changed; a window out of range
// is a *store.ValidationError.
func SetDualControlWindowTx(ctx context.Context, tx *store.Tx, id string, window time.Duration) (bool, error) {
	if window < MinDualControlWindow || window > MaxDualControlWindow {
		return false, fmt.Errorf("set dual-control window of tenant %s: %v: %w", id, window,
			invalid("window_hours", dualControlWindowRule))
	}
	s := int64(window / time.Second)
	return updateTenant(ctx, tx, id, "set dual-control window of", `UPDATE tenants SET dual_control_window_s = ? WHERE id = ? AND dual_control_window_s != ?`, s, id, s)
}

// updateTenant runs a conditional update; no row changed means either no
// such tenant (store.ErrNotFound) or nothing to change (false).
func updateTenant(ctx context.Context, tx *store.Tx, id, what, query string, args ...any) (bool, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("%s tenant %s: %w", what, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s tenant %s: %w", what, id, err)
	}
	if n == 0 {
		if _, err := ByID(ctx, tx, id); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// Count counts the tenants visible to a scope: all of them when
// slugs is nil, otherwise those whose slug is listed.
func Count(ctx context.Context, db *store.DB, slugs []string) (int64, error) {
	var n int64
	if slugs == nil {
		err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants`).Scan(&n)
		return n, err
	}
	if len(slugs) == 0 {
		return 0, nil
	}
	args := make([]any, len(slugs))
	ph := make([]byte, 0, 2*len(slugs))
	for i, s := range slugs {
		args[i] = s
		if i > 0 {
			ph = append(ph, ',')
		}
		ph = append(ph, '?')
	}
	err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants WHERE slug IN (`+string(ph)+`)`, args...).Scan(&n)
	return n, err
}

// List returns the tenants in a scope (nil for all), by slug.
func List(ctx context.Context, db *store.DB, slugs []string) ([]Tenant, error) {
	all, err := store.Query(ctx, db.Read(), scanTenant, selectTenant+` ORDER BY slug`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	var out []Tenant
	for _, t := range all {
		if slugs == nil || slices.Contains(slugs, t.Slug) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Freeze is why a tenant is frozen, by whom ("principal:<id>") and since
// when; empty when it is not frozen or was frozen before reasons were kept.
type Freeze struct {
	Frozen bool
	Reason string
	By     string
	At     *time.Time
}

// recordFreeze keeps the reason, who and when of a tenant's last freeze
// or unfreeze, inside tx.
func recordFreeze(ctx context.Context, tx *store.Tx, id, reason, by string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE tenants SET frozen_reason = ?, frozen_by = ?, frozen_at = ? WHERE id = ?`,
		reason, by, store.FormatTime(at), id); err != nil {
		return fmt.Errorf("record freeze of tenant %s: %w", id, err)
	}
	return nil
}

// FreezeOf reads a tenant's freeze, or store.ErrNotFound.
func FreezeOf(ctx context.Context, q store.Querier, id string) (Freeze, error) {
	var f Freeze
	var at string
	err := q.QueryRowContext(ctx, `SELECT frozen, frozen_reason, frozen_by, frozen_at FROM tenants WHERE id = ?`, id).
		Scan(&f.Frozen, &f.Reason, &f.By, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Freeze{}, store.ErrNotFound
	}
	if err != nil {
		return Freeze{}, fmt.Errorf("freeze of tenant %s: %w", id, err)
	}
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil && at != "" {
		f.At = &t
	}
	return f, nil
}

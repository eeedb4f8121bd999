// Package allowlist keeps each tenant's allow-list: terms its approvers
// need to read — catalogue terms, brands, product and place names — that
// name detection must leave readable for that tenant only
// (docs/redaction.md). The list only ever keeps words from being read as
// a name; e-mail addresses, cards, IBANs, phone numbers and identity
// numbers are redacted whatever it says (redact.Redactor.Keeping).
package allowlist

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
)

// MaxTerm bounds a term's length; MaxTerms a tenant's list.
const (
	MaxTerm  = 80
	MaxTerms = 500
)

// A Term is one entry of a tenant's list.
type Term struct {
	Term      string
	CreatedBy string
	CreatedAt string
}

// Errors people read at the form.
var (
	ErrBadTerm = errors.New("a term is 2 to 80 characters with at least two letters, and no @ (an e-mail address is never kept readable)")
	ErrExists  = errors.New("the term is already on the list")
	ErrFull    = fmt.Errorf("the list holds %d terms at most", MaxTerms)
)

// key folds a term as the redactor matches it: lower case, single spaces.
func key(term string) string { return strings.ToLower(strings.Join(strings.Fields(term), " ")) }

// Clean returns term trimmed, or ErrBadTerm.
func Clean(term string) (string, error) {
	term = strings.Join(strings.Fields(term), " ")
	letters := 0
	for _, r := range term {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if utf8.RuneCountInString(term) < 2 || len(term) > MaxTerm || letters < 2 || strings.ContainsRune(term, '@') {
		return "", ErrBadTerm
	}
	return term, nil
}

// List returns a tenant's terms, in alphabetical order.
func List(ctx context.Context, q store.Querier, tenantID string) ([]Term, error) {
	rows, err := q.QueryContext(ctx, `SELECT term, created_by, created_at FROM allow_terms WHERE tenant_id = ? ORDER BY term_key`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("allow-list: %w", err)
	}
	defer rows.Close()
	var out []Term
	for rows.Next() {
		var t Term
		if err := rows.Scan(&t.Term, &t.CreatedBy, &t.CreatedAt); err != nil {
			return nil, fmt.Errorf("allow-list: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Redactor returns base keeping tenantID's terms readable (base itself
// when the list is empty or cannot be read: the list only ever makes
// less redacted, so failing to read it fails safe).
func Redactor(ctx context.Context, q store.Querier, base *redact.Redactor, tenantID string) *redact.Redactor {
	if tenantID == "" {
		return base
	}
	ts, err := List(ctx, q, tenantID)
	if err != nil || len(ts) == 0 {
		return base
	}
	terms := make([]string, len(ts))
	for i, t := range ts {
		terms[i] = t.Term
	}
	return base.Keeping(terms)
}

// Add puts a term on a tenant's list and records who did (allow_list.add).
func Add(ctx context.Context, db *store.DB, actor audit.Actor, tenantID, tenantSlug, term string) error {
	term, err := Clean(term)
	if err != nil {
		return err
	}
	return db.Transact(ctx, func(tx *store.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM allow_terms WHERE tenant_id = ?`, tenantID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxTerms {
			return ErrFull
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM allow_terms WHERE tenant_id = ? AND term_key = ?`, tenantID, key(term)).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrExists
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO allow_terms (tenant_id, term_key, term, created_by, created_at) VALUES (?, ?, ?, ?, ?)`,
			tenantID, key(term), term, actor.ID, store.Now()); err != nil {
			return fmt.Errorf("allow-list: %w", err)
		}
		_, err := audit.Append(ctx, tx, audit.Event{Actor: actor, Tenant: tenantSlug, Verb: "allow_list.add",
			Subject: audit.Subject{Type: "allow_term", ID: key(term)}, Details: map[string]any{"term": term}})
		return err
	})
}

// Remove takes a term off a tenant's list (allow_list.remove); a term not
// on it is store.ErrNotFound.
func Remove(ctx context.Context, db *store.DB, actor audit.Actor, tenantID, tenantSlug, term string) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM allow_terms WHERE tenant_id = ? AND term_key = ?`, tenantID, key(term))
		if err != nil {
			return fmt.Errorf("allow-list: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Tenant: tenantSlug, Verb: "allow_list.remove",
			Subject: audit.Subject{Type: "allow_term", ID: key(term)}, Details: map[string]any{"term": term}})
		return err
	})
}

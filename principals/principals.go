// Package principals keeps the console's users as the identity provider
// names them: one row per (issuer, subject), refreshed at every sign-in,
// and the names pages show for a principal id. It owns the principals
// table.
package principals

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Principal is a console user as stored.
type Principal struct {
	ID, Issuer, Subject, Email, Name string
	Roles, Tenants                   []string
	FirstSeenAt, LastLoginAt         string
}

// Upsert records a login of (issuer, subject): it creates the
// principal on first sight, otherwise refreshes name, e-mail, roles and
// tenant scope. It returns the principal's id.
func Upsert(ctx context.Context, tx *store.Tx, p Principal) (string, error) {
	roles, _ := json.Marshal(p.Roles)
	tenants, _ := json.Marshal(p.Tenants)
	now := store.Now()
	var id string
	err := tx.QueryRowContext(ctx, `
		INSERT INTO principals (id, issuer, subject, email, name, roles, tenants, first_seen_at, last_login_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (issuer, subject) DO UPDATE SET
			email = excluded.email, name = excluded.name, roles = excluded.roles,
			tenants = excluded.tenants, last_login_at = excluded.last_login_at
		RETURNING id`,
		store.NewID(), p.Issuer, p.Subject, p.Email, p.Name, string(roles), string(tenants), now, now).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("upsert principal: %w", err)
	}
	return id, nil
}

// ErrNotFound is a principal Warden has never seen sign in; errors.Is
// matches it against store.ErrNotFound.
var ErrNotFound = problem.NotFound("not_found", "There is no such user.")

// ByID loads one principal, or ErrNotFound.
func ByID(ctx context.Context, db *store.DB, id string) (Principal, error) {
	var p Principal
	var roles, tenants string
	err := db.Read().QueryRowContext(ctx, `
		SELECT id, issuer, subject, email, name, roles, tenants, first_seen_at, last_login_at
		FROM principals WHERE id = ?`, id).
		Scan(&p.ID, &p.Issuer, &p.Subject, &p.Email, &p.Name, &roles, &tenants, &p.FirstSeenAt, &p.LastLoginAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrNotFound
	}
	if err != nil {
		return Principal{}, fmt.Errorf("load principal %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(roles), &p.Roles); err != nil {
		return Principal{}, fmt.Errorf("principal %s roles: %w", id, err)
	}
	if err := json.Unmarshal([]byte(tenants), &p.Tenants); err != nil {
		return Principal{}, fmt.Errorf("principal %s tenants: %w", id, err)
	}
	return p, nil
}

// NamesOf maps principal ids to display names (name, else e-mail,
// else subject); unknown ids are left out.
func NamesOf(ctx context.Context, db *store.DB, ids []string) (Names, error) {
	out := make(Names, len(ids))
	for _, id := range ids {
		if _, seen := out[id]; seen || id == "" {
			continue
		}
		var name, email, subject string
		err := db.Read().QueryRowContext(ctx, `SELECT name, email, subject FROM principals WHERE id = ?`, id).Scan(&name, &email, &subject)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("principal names: %w", err)
		}
		switch {
		case name != "":
			out[id] = name
		case email != "":
			out[id] = email
		default:
			out[id] = subject
		}
	}
	return out, nil
}

// Names maps principal ids to the names people read.
type Names map[string]string

// Of is the name to show for a principal id: its display name, or the id
// itself for a principal Warden has not seen sign in ("cli", an id from an
// older installation). "" stays "".
func (n Names) Of(id string) string {
	if name := n[id]; name != "" {
		return name
	}
	return id
}

// NameOf is the name to show for one principal id (see Names.Of).
func NameOf(ctx context.Context, db *store.DB, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	names, err := NamesOf(ctx, db, []string{id})
	if err != nil {
		return "", err
	}
	return names.Of(id), nil
}

// EmailsOf loads the issuer and e-mail of each principal in ids, keyed by
// id (ID, Issuer and Email filled; unknown ids left out): what dual
// control compares to tell one person signed in through two issuers,
// whose ids differ, from two people.
func EmailsOf(ctx context.Context, q store.Querier, ids []string) (map[string]Principal, error) {
	out := make(map[string]Principal, len(ids))
	for _, id := range ids {
		if _, seen := out[id]; seen || id == "" {
			continue
		}
		p, err := store.Get(ctx, q, func(s store.Scanner) (Principal, error) {
			var p Principal
			err := s.Scan(&p.ID, &p.Issuer, &p.Email)
			return p, err
		}, `SELECT id, issuer, email FROM principals WHERE id = ?`, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("principal e-mails: %w", err)
		}
		out[id] = p
	}
	return out, nil
}

// Identity is the display name and e-mail of principal id as stored now
// (both "" for a principal Warden has never seen sign in). The audit
// trail records them in each event a person causes, read inside the
// event's transaction, so the trail names people as they were named when
// they acted, whatever the identity provider calls them later.
func Identity(ctx context.Context, q store.Querier, id string) (name, email string, err error) {
	err = q.QueryRowContext(ctx, `SELECT name, email FROM principals WHERE id = ?`, id).Scan(&name, &email)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("principal %s identity: %w", id, err)
	}
	return name, email, nil
}

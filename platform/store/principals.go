package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// PrincipalRow is a console user as stored.
type PrincipalRow struct {
	ID, Issuer, Subject, Email, Name string
	Roles, Tenants                   []string
	FirstSeenAt, LastLoginAt         string
}

// UpsertPrincipal records a login of (issuer, subject): it creates the
// principal on first sight, otherwise refreshes name, e-mail, roles and
// tenant scope. It returns the principal's id.
func UpsertPrincipal(ctx context.Context, tx *Tx, p PrincipalRow) (string, error) {
	roles, _ := json.Marshal(p.Roles)
	tenants, _ := json.Marshal(p.Tenants)
	now := Now()
	var id string
	err := tx.QueryRowContext(ctx, `
		INSERT INTO principals (id, issuer, subject, email, name, roles, tenants, first_seen_at, last_login_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (issuer, subject) DO UPDATE SET
			email = excluded.email, name = excluded.name, roles = excluded.roles,
			tenants = excluded.tenants, last_login_at = excluded.last_login_at
		RETURNING id`,
		NewID(), p.Issuer, p.Subject, p.Email, p.Name, string(roles), string(tenants), now, now).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("upsert principal: %w", err)
	}
	return id, nil
}

// PrincipalByID loads one principal, or ErrNotFound.
func (db *DB) PrincipalByID(ctx context.Context, id string) (PrincipalRow, error) {
	var p PrincipalRow
	var roles, tenants string
	err := db.read.QueryRowContext(ctx, `
		SELECT id, issuer, subject, email, name, roles, tenants, first_seen_at, last_login_at
		FROM principals WHERE id = ?`, id).
		Scan(&p.ID, &p.Issuer, &p.Subject, &p.Email, &p.Name, &roles, &tenants, &p.FirstSeenAt, &p.LastLoginAt)
	if errors.Is(err, sql.ErrNoRows) {
		return PrincipalRow{}, ErrNotFound
	}
	if err != nil {
		return PrincipalRow{}, fmt.Errorf("load principal %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(roles), &p.Roles); err != nil {
		return PrincipalRow{}, fmt.Errorf("principal %s roles: %w", id, err)
	}
	if err := json.Unmarshal([]byte(tenants), &p.Tenants); err != nil {
		return PrincipalRow{}, fmt.Errorf("principal %s tenants: %w", id, err)
	}
	return p, nil
}

// PrincipalNames maps principal ids to display names (name, else e-mail,
// else subject); unknown ids are left out.
func (db *DB) PrincipalNames(ctx context.Context, ids []string) (Names, error) {
	out := make(Names, len(ids))
	for _, id := range ids {
		if _, seen := out[id]; seen || id == "" {
			continue
		}
		var name, email, subject string
		err := db.read.QueryRowContext(ctx, `SELECT name, email, subject FROM principals WHERE id = ?`, id).Scan(&name, &email, &subject)
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

// PrincipalName is the name to show for one principal id (see Names.Of).
func (db *DB) PrincipalName(ctx context.Context, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	names, err := db.PrincipalNames(ctx, []string{id})
	if err != nil {
		return "", err
	}
	return names.Of(id), nil
}

// Package signin records console sign-ins: the principal a verified ID
// token names (created or refreshed, with its roles and tenants), refused
// sign-ins and sign-outs, each in one transaction with its audit event.
// The web package verifies the token and keeps the session; it calls
//
//	id, err := signin.Login(ctx, db, principal)   // the principal's Warden id
//	err = signin.Refused(ctx, db, reason, details) // details already redacted
//	err = signin.Logout(ctx, db, id)
package signin

import (
	"context"
	"database/sql"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/identity"
	"github.com/wardenhq/warden/store"
)

// Login records a sign-in: the principal (issuer and subject from the
// verified token) is created or refreshed with the roles and tenants its
// groups grant now, and "auth.login" is audited. It returns the
// principal's Warden id.
func Login(ctx context.Context, db *store.DB, p identity.Principal) (string, error) {
	var id string
	err := db.Transact(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = store.UpsertPrincipal(ctx, tx, store.PrincipalRow{
			Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name, Roles: p.Roles, Tenants: p.Tenants,
		})
		if err != nil {
			return err
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: id},
			Verb:    "auth.login",
			Subject: audit.Subject{Type: "principal", ID: id},
			Details: map[string]any{"roles": p.Roles, "tenants": p.Tenants},
		})
		return err
	})
	return id, err
}

// Refused audits a sign-in that was refused, by reason. details must
// already be redacted: nobody signed in, so they may hold what an
// attacker typed.
func Refused(ctx context.Context, db *store.DB, reason string, details map[string]any) error {
	return db.Transact(ctx, func(tx *sql.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorAnonymous, ID: "-"},
			Verb:    "auth.login_failed",
			Subject: audit.Subject{Type: "login", ID: reason},
			Details: details,
		})
		return err
	})
}

// Logout audits a principal's sign-out.
func Logout(ctx context.Context, db *store.DB, principalID string) error {
	return db.Transact(ctx, func(tx *sql.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: principalID},
			Verb:    "auth.logout",
			Subject: audit.Subject{Type: "principal", ID: principalID},
			Details: map[string]any{},
		})
		return err
	})
}

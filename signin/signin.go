// Package signin records console sign-ins: the principal a verified ID
// token names (created or refreshed, with its roles and tenants), refused
// sign-ins and sign-outs, each in one transaction with its audit event.
// The web package verifies the token and keeps the cookie; it calls
//
//	in, err := signin.Login(ctx, db, signin.Attempt{...}, now, policy) // in.Token goes into the cookie
//	err = signin.Refused(ctx, db, reason, details)                      // details already redacted
//	err = signin.RefusedSuppressed(ctx, db, n)                          // n refusals not written one by one
//	idToken, err := signin.Logout(ctx, db, principalID, sessionID, now)
package signin

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/sessions"
)

// Attempt is a verified sign-in: the principal the ID token names, the
// raw ID token (kept with the session for RP-initiated logout), where it
// came from, and the session the browser held before, if any.
type Attempt struct {
	Principal  identity.Principal
	IDToken    string
	ClientAddr string
	// Replaces is the id of the session the browser signed in with
	// before; it ends, so a session id never outlives a sign-in.
	Replaces string
}

// SignedIn is the outcome of a sign-in.
type SignedIn struct {
	PrincipalID string
	SessionID   string
	Token       string // for the cookie only
}

// Login records a sign-in in one transaction: the principal (issuer and
// subject from the verified token) is created or refreshed with the roles
// and tenants its groups grant now, the browser's previous session ends, a
// new session starts, and "auth.login" is audited.
func Login(ctx context.Context, db *store.DB, a Attempt, now time.Time, policy sessions.Policy) (SignedIn, error) {
	var in SignedIn
	p := a.Principal
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		in.PrincipalID, err = principals.Upsert(ctx, tx, principals.Principal{
			Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name, Roles: p.Roles, Tenants: p.Tenants, Groups: p.Groups,
		})
		if err != nil {
			return err
		}
		if a.Replaces != "" {
			if _, err := sessions.End(ctx, tx, a.Replaces, sessions.EndedReplaced, now); err != nil && !errors.Is(err, sessions.ErrNotFound) {
				return err
			}
		}
		in.Token, in.SessionID, err = sessions.Start(ctx, tx, sessions.New{Principal: in.PrincipalID, ClientAddr: a.ClientAddr, IDToken: a.IDToken}, now, policy)
		if err != nil {
			return err
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: in.PrincipalID},
			Verb:    "auth.login",
			Subject: audit.Subject{Type: "principal", ID: in.PrincipalID},
			Details: map[string]any{"roles": p.Roles, "tenants": p.Tenants, "session": in.SessionID},
		})
		return err
	})
	return in, err
}

// Refused audits a sign-in that was refused, by reason. details must
// already be redacted: nobody signed in, so they may hold what an
// attacker typed.
func Refused(ctx context.Context, db *store.DB, reason string, details map[string]any) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorAnonymous, ID: "-"},
			Verb:    "auth.login_failed",
			Subject: audit.Subject{Type: "login", ID: reason},
			Details: details,
		})
		return err
	})
}

// RefusedSuppressed audits, in one event, n refused sign-ins from one
// client address that were logged but not written one by one: past a
// burst, an address's refusals are summed up once a minute, so nobody can
// grow the audit chain at will.
func RefusedSuppressed(ctx context.Context, db *store.DB, n int) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorAnonymous, ID: "-"},
			Verb:    "auth.login_failed_suppressed",
			Subject: audit.Subject{Type: "login", ID: "rate_limited"},
			Details: map[string]any{"count": n},
		})
		return err
	})
}

// Logout ends a principal's session and audits the sign-out, in one
// transaction. It returns the session's ID token, the id_token_hint of
// the provider's end-session endpoint ("" when the session had already
// ended: then nothing is recorded).
func Logout(ctx context.Context, db *store.DB, principalID, sessionID string, now time.Time) (idToken string, err error) {
	err = db.Transact(ctx, func(tx *store.Tx) error {
		idToken, err = sessions.End(ctx, tx, sessionID, sessions.EndedLogout, now)
		if errors.Is(err, sessions.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorPrincipal, ID: principalID},
			Verb:    "auth.logout",
			Subject: audit.Subject{Type: "principal", ID: principalID},
			Details: map[string]any{"session": sessionID},
		})
		return err
	})
	return idToken, err
}

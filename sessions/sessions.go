// Package sessions keeps console sessions on the server. The browser's
// cookie holds only a random token; the sessions table (migration 0015)
// says whose it is, since when and until when, so that signing out or an
// admin's revocation ends a session at once, wherever its cookie was
// copied to.
//
// The sign-in transaction (signin.Login) calls Start and hands the token to
// the browser; every request then calls Lookup with it, and Touch when
// Lookup says the last-seen time is due for a write; sign-out (signin.Logout)
// calls End. Admins list sessions with Active and end them with Revoke or
// RevokeAll, each one transaction with its audit event:
//
//	token, id, err := sessions.Start(ctx, tx, sessions.New{Principal: pid, ...}, now, policy)
//	s, err := sessions.Lookup(ctx, db.Read(), token, now, policy) // ErrNotFound once it ended
//	if s.TouchDue(now) { _ = sessions.Touch(ctx, db, s.ID, now) }
//	changed, err := sessions.Revoke(ctx, db, actor, s.ID, now)
//
// A session is live while it has not ended, now is before its expiry
// (sign-in + Policy.Max) and it was seen within Policy.Idle. Roles are
// read from the principal's row, which every sign-in refreshes from the ID
// token: a role removed at the provider stops working at that user's next
// sign-in, and revoking the user's sessions makes that sign-in now.
package sessions

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Policy is how long sessions live (config WARDEN_SESSION_IDLE and
// WARDEN_SESSION_MAX).
type Policy struct {
	Idle time.Duration // a session unused this long has ended
	Max  time.Duration // a session ends this long after its sign-in
}

// TouchEvery is how stale the stored last-seen time may get before a
// request writes it again: at most one write a minute per session, not
// one per request. Idle expiry is therefore exact to within a minute.
const TouchEvery = time.Minute

// Why a session ended.
const (
	EndedLogout   = "logout"   // its user signed out
	EndedRevoked  = "revoked"  // an admin revoked it
	EndedReplaced = "replaced" // its browser signed in again
)

// ErrNotFound is a token that names no live session: unknown, ended,
// idle too long or past its lifetime.
var ErrNotFound = errors.New("no live session")

// Session is one live session and the principal it signs in.
type Session struct {
	ID         string
	Principal  identity.Principal
	ClientAddr string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// TouchDue reports whether the stored last-seen time is stale enough to
// write it again.
func (s Session) TouchDue(now time.Time) bool { return now.Sub(s.LastSeenAt) >= TouchEvery }

// New is what a sign-in knows about the session it starts.
type New struct {
	Principal  string // the principal's Warden id
	ClientAddr string
	IDToken    string // the raw ID token, kept for RP-initiated logout
}

// Start creates a session in the sign-in's transaction and returns the
// token for the cookie (shown nowhere else, stored only as its hash) and
// the session's id.
func Start(ctx context.Context, tx *store.Tx, n New, now time.Time, p Policy) (token, id string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("session token: %w", err)
	}
	token = hex.EncodeToString(b)
	id = store.NewID()
	_, err = tx.ExecContext(ctx, `
		INSERT INTO sessions (id, token_hash, principal, client_addr, id_token, created_at, last_seen_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		id, hashToken(token), n.Principal, clip(n.ClientAddr, 64), n.IDToken,
		store.FormatTime(now), store.FormatTime(now), store.FormatTime(now.Add(p.Max)))
	if err != nil {
		return "", "", fmt.Errorf("start session: %w", err)
	}
	return token, id, nil
}

// Lookup returns the live session a cookie's token names, with its
// principal as stored now, or ErrNotFound.
func Lookup(ctx context.Context, q store.Querier, token string, now time.Time, p Policy) (Session, error) {
	if len(token) != 64 {
		return Session{}, ErrNotFound
	}
	var s Session
	var created, seen, expires, roles, tenants string
	err := q.QueryRowContext(ctx, `
		SELECT s.id, s.client_addr, s.created_at, s.last_seen_at, s.expires_at,
		       p.id, p.issuer, p.subject, p.email, p.name, p.roles, p.tenants
		FROM sessions s JOIN principals p ON p.id = s.principal
		WHERE s.token_hash = ? AND s.ended_at IS NULL`, hashToken(token)).
		Scan(&s.ID, &s.ClientAddr, &created, &seen, &expires,
			&s.Principal.ID, &s.Principal.Issuer, &s.Principal.Subject, &s.Principal.Email, &s.Principal.Name, &roles, &tenants)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("look up session: %w", err)
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = parseTime(created), parseTime(seen), parseTime(expires)
	if !s.live(now, p) {
		return Session{}, ErrNotFound
	}
	if err := json.Unmarshal([]byte(roles), &s.Principal.Roles); err != nil {
		return Session{}, fmt.Errorf("session %s: principal roles: %w", s.ID, err)
	}
	if err := json.Unmarshal([]byte(tenants), &s.Principal.Tenants); err != nil {
		return Session{}, fmt.Errorf("session %s: principal tenants: %w", s.ID, err)
	}
	return s, nil
}

func (s Session) live(now time.Time, p Policy) bool {
	return now.Before(s.ExpiresAt) && now.Sub(s.LastSeenAt) < p.Idle
}

// Touch records that the session was used at now. It writes only when the
// stored time is older than TouchEvery, so concurrent requests of one
// session do not each write.
func Touch(ctx context.Context, db *store.DB, id string, now time.Time) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `
			UPDATE sessions SET last_seen_at = ?
			WHERE id = ? AND ended_at IS NULL AND last_seen_at < ?`,
			store.FormatTime(now), id, store.FormatTime(now.Add(-TouchEvery)))
		if err != nil {
			return fmt.Errorf("touch session %s: %w", id, err)
		}
		return nil
	})
}

// End ends a session in the caller's transaction (sign-out, a new
// sign-in in the same browser) and returns its ID token, for the
// provider's end-session endpoint. Ending an ended session changes
// nothing and returns ErrNotFound.
func End(ctx context.Context, tx *store.Tx, id, why string, now time.Time) (idToken string, err error) {
	err = tx.QueryRowContext(ctx, `
		UPDATE sessions SET ended_at = ?, ended_by = ?
		WHERE id = ? AND ended_at IS NULL
		RETURNING id_token`, store.FormatTime(now), why, id).Scan(&idToken)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("end session %s: %w", id, err)
	}
	return idToken, nil
}

// Revoke ends one session for an admin, with its "session.revoke" audit
// event. Revoking an ended session changes and records nothing (changed
// is false); an unknown id is a 404.
func Revoke(ctx context.Context, db *store.DB, actor audit.Actor, id string, now time.Time) (changed bool, err error) {
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		var principal string
		err := tx.QueryRowContext(ctx, `SELECT principal FROM sessions WHERE id = ?`, id).Scan(&principal)
		if errors.Is(err, sql.ErrNoRows) {
			return problem.NotFound("not_found", "There is no such session.")
		}
		if err != nil {
			return fmt.Errorf("revoke session %s: %w", id, err)
		}
		if _, err := End(ctx, tx, id, EndedRevoked, now); errors.Is(err, ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Verb:    "session.revoke",
			Subject: audit.Subject{Type: "session", ID: id},
			Details: map[string]any{"principal": principal},
		})
		return err
	})
	return changed, err
}

// RevokeAll ends every session of one principal, with one
// "session.revoke_all" audit event naming how many. It returns that
// number; when there was none, nothing is recorded.
func RevokeAll(ctx context.Context, db *store.DB, actor audit.Actor, principal string, now time.Time) (int, error) {
	var n int
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var exists int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM principals WHERE id = ?`, principal).Scan(&exists)
		if err != nil {
			return fmt.Errorf("revoke sessions of %s: %w", principal, err)
		}
		if exists == 0 {
			return problem.NotFound("not_found", "There is no such user.")
		}
		res, err := tx.ExecContext(ctx, `
			UPDATE sessions SET ended_at = ?, ended_by = ?
			WHERE principal = ? AND ended_at IS NULL`, store.FormatTime(now), EndedRevoked, principal)
		if err != nil {
			return fmt.Errorf("revoke sessions of %s: %w", principal, err)
		}
		changed, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n = int(changed); n == 0 {
			return nil
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Verb:    "session.revoke_all",
			Subject: audit.Subject{Type: "principal", ID: principal},
			Details: map[string]any{"count": n},
		})
		return err
	})
	return n, err
}

// Row is one live session in the admin's list.
type Row struct {
	ID          string
	PrincipalID string
	Name        string // the principal's display name
	ClientAddr  string
	CreatedAt   time.Time
	LastSeenAt  time.Time
	ExpiresAt   time.Time
}

var listOrder = store.Order{Key: "s.created_at", KeyDesc: true, ID: "s.id", IDDesc: true}

// liveWhere selects live sessions at now; its arguments follow.
const liveWhere = `s.ended_at IS NULL AND s.expires_at > ? AND s.last_seen_at > ?`

func liveArgs(now time.Time, p Policy) []any {
	return []any{store.FormatTime(now), store.FormatTime(now.Add(-p.Idle))}
}

// Active lists the live sessions, newest sign-in first, a page at a time,
// with how many there are; principal, when not empty, keeps one user's.
func Active(ctx context.Context, q store.Querier, principal string, now time.Time, p Policy, page store.Page) (store.Paged[Row], int, error) {
	where, args := liveWhere, liveArgs(now, p)
	if principal != "" {
		where += " AND s.principal = ?"
		args = append(args, principal)
	}
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions s WHERE `+where, args...).Scan(&total); err != nil {
		return store.Paged[Row]{}, 0, fmt.Errorf("count sessions: %w", err)
	}
	if cond, cargs := page.Where(listOrder); cond != "" {
		where, args = where+" AND "+cond, append(args, cargs...)
	}
	out, err := store.Query(ctx, q, func(s store.Scanner) (Row, error) {
		var r Row
		var name, email, subject, created, seen, expires string
		if err := s.Scan(&r.ID, &r.PrincipalID, &name, &email, &subject, &r.ClientAddr, &created, &seen, &expires); err != nil {
			return Row{}, err
		}
		r.Name = identity.Principal{Name: name, Email: email, Subject: subject}.DisplayName()
		r.CreatedAt, r.LastSeenAt, r.ExpiresAt = parseTime(created), parseTime(seen), parseTime(expires)
		return r, nil
	}, `
		SELECT s.id, s.principal, p.name, p.email, p.subject, s.client_addr, s.created_at, s.last_seen_at, s.expires_at
		FROM sessions s JOIN principals p ON p.id = s.principal
		WHERE `+where+` ORDER BY `+page.OrderBy(listOrder)+` LIMIT ?`, append(args, page.Fetch())...)
	if err != nil {
		return store.Paged[Row]{}, 0, fmt.Errorf("list sessions: %w", err)
	}
	return store.Paginate(page, out, func(r Row) store.Cursor {
		return store.Cursor{Key: store.FormatTime(r.CreatedAt), ID: r.ID}
	}), total, nil
}

// ByID loads one session, live or not, for the revoke confirmation; Live
// says whether it still is.
func ByID(ctx context.Context, q store.Querier, id string, now time.Time, p Policy) (Row, bool, error) {
	var r Row
	var name, email, subject, created, seen, expires string
	var ended sql.NullString
	err := q.QueryRowContext(ctx, `
		SELECT s.id, s.principal, p.name, p.email, p.subject, s.client_addr, s.created_at, s.last_seen_at, s.expires_at, s.ended_at
		FROM sessions s JOIN principals p ON p.id = s.principal
		WHERE s.id = ?`, id).
		Scan(&r.ID, &r.PrincipalID, &name, &email, &subject, &r.ClientAddr, &created, &seen, &expires, &ended)
	if errors.Is(err, sql.ErrNoRows) {
		return Row{}, false, problem.NotFound("not_found", "There is no such session.")
	}
	if err != nil {
		return Row{}, false, fmt.Errorf("load session %s: %w", id, err)
	}
	r.Name = identity.Principal{Name: name, Email: email, Subject: subject}.DisplayName()
	r.CreatedAt, r.LastSeenAt, r.ExpiresAt = parseTime(created), parseTime(seen), parseTime(expires)
	live := !ended.Valid && Session{LastSeenAt: r.LastSeenAt, ExpiresAt: r.ExpiresAt}.live(now, p)
	return r, live, nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Purge deletes the rows of sessions that ended — signed out, revoked,
// replaced, idle or past their lifetime — before before, and says how
// many. Live sessions and recently ended ones (shown to admins, named in
// the audit trail by id) stay; the audit events stay whatever happens.
func Purge(ctx context.Context, db *store.DB, before time.Time, p Policy) (int64, error) {
	cut := store.FormatTime(before)
	var n int64
	err := db.Transact(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions
			WHERE (ended_at IS NOT NULL AND ended_at < ?) OR expires_at < ? OR last_seen_at < ?`,
			cut, cut, store.FormatTime(before.Add(-p.Idle)))
		if err != nil {
			return fmt.Errorf("purge sessions: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

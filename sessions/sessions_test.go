package sessions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/principals"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	return storetest.Open(t)
}

func principal(t *testing.T, db *store.DB, sub string, roles ...string) string {
	t.Helper()
	var id string
	err := db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		id, err = principals.Upsert(context.Background(), tx, principals.Principal{Issuer: "https://idp.test", Subject: sub, Name: sub, Roles: roles, Tenants: []string{"*"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func start(t *testing.T, db *store.DB, pid string, now time.Time, p Policy) (string, string) {
	t.Helper()
	var token, id string
	err := db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		token, id, err = Start(context.Background(), tx, New{Principal: pid, ClientAddr: "192.0.2.7", IDToken: "id.token.raw"}, now, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return token, id
}

func lastSeen(t *testing.T, db *store.DB, id string) string {
	t.Helper()
	var s string
	if err := db.Read().QueryRow(`SELECT last_seen_at FROM sessions WHERE id = ?`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLookupIdleLifetimeAndTouch(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	p := Policy{Idle: 30 * time.Minute, Max: 12 * time.Hour}
	pid := principal(t, db, "alice", "approver")
	t0 := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	token, id := start(t, db, pid, t0, p)

	// The token is what opens the session; only its hash is stored.
	var stored string
	if err := db.Read().QueryRow(`SELECT token_hash FROM sessions WHERE id = ?`, id).Scan(&stored); err != nil || stored == token {
		t.Fatalf("stored token = %q (%v), want its hash", stored, err)
	}
	s, err := Lookup(ctx, db.Read(), token, t0.Add(time.Minute), p)
	if err != nil || s.ID != id || s.Principal.ID != pid || s.Principal.Roles[0] != "approver" || s.ClientAddr != "192.0.2.7" {
		t.Fatalf("Lookup = %+v, %v", s, err)
	}
	// The last hex digit changed (never to itself: a token ending in "0"
	// once made this case a copy of the real token).
	flip := "0"
	if token[63] == '0' {
		flip = "1"
	}
	for _, bad := range []string{"", "x", token[:63] + flip} {
		if _, err := Lookup(ctx, db.Read(), bad, t0, p); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup(%q) = %v, want ErrNotFound", bad, err)
		}
	}

	// Touch writes at most once a minute.
	before := lastSeen(t, db, id)
	if err := Touch(ctx, db, id, t0.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := lastSeen(t, db, id); got != before {
		t.Errorf("Touch within a minute wrote last_seen_at %s (was %s)", got, before)
	}
	if err := Touch(ctx, db, id, t0.Add(20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, want := lastSeen(t, db, id), store.FormatTime(t0.Add(20*time.Minute)); got != want {
		t.Errorf("last_seen_at = %s, want %s", got, want)
	}
	// Idle is counted from the last seen time...
	if _, err := Lookup(ctx, db.Read(), token, t0.Add(49*time.Minute), p); err != nil {
		t.Errorf("29 minutes after last seen: %v, want live", err)
	}
	if _, err := Lookup(ctx, db.Read(), token, t0.Add(51*time.Minute), p); !errors.Is(err, ErrNotFound) {
		t.Errorf("31 minutes after last seen: %v, want ErrNotFound", err)
	}
	// ...the lifetime from the sign-in.
	long := Policy{Idle: 24 * time.Hour, Max: 12 * time.Hour}
	if _, err := Lookup(ctx, db.Read(), token, t0.Add(12*time.Hour+time.Second), long); !errors.Is(err, ErrNotFound) {
		t.Errorf("past the lifetime: %v, want ErrNotFound", err)
	}
}

func TestEndRevokeAndList(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	p := Policy{Idle: 30 * time.Minute, Max: 12 * time.Hour}
	now := time.Now()
	alice, erin := principal(t, db, "alice"), principal(t, db, "erin", "admin")
	a1, a1id := start(t, db, alice, now, p)
	a2, _ := start(t, db, alice, now.Add(time.Second), p)
	e1, e1id := start(t, db, erin, now.Add(2*time.Second), p)
	admin := audit.Actor{Type: audit.ActorPrincipal, ID: erin}

	all, total, err := Active(ctx, db.Read(), "", now.Add(3*time.Second), p, store.Page{Size: 2})
	if err != nil || total != 3 || len(all.Rows) != 2 || all.Rows[0].ID != e1id || all.Next == nil {
		t.Fatalf("Active page 1 = %+v total %d (%v), want erin's newest first, 3 in all, a next page", all.Rows, total, err)
	}
	rest, _, err := Active(ctx, db.Read(), "", now.Add(3*time.Second), p, store.Page{Size: 2, After: all.Next})
	if err != nil || len(rest.Rows) != 1 || rest.Rows[0].ID != a1id {
		t.Fatalf("Active page 2 = %+v (%v), want alice's first session", rest.Rows, err)
	}

	// Ending returns the ID token, once.
	err = db.Transact(ctx, func(tx *store.Tx) error {
		tok, err := End(ctx, tx, e1id, EndedLogout, now)
		if err != nil || tok != "id.token.raw" {
			t.Errorf("End = %q, %v; want the ID token", tok, err)
		}
		if _, err := End(ctx, tx, e1id, EndedLogout, now); !errors.Is(err, ErrNotFound) {
			t.Errorf("End again = %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup(ctx, db.Read(), e1, now, p); !errors.Is(err, ErrNotFound) {
		t.Errorf("ended session still live: %v", err)
	}

	before, _ := audit.Count(ctx, db.Read())
	if changed, err := Revoke(ctx, db, admin, a1id, now); err != nil || !changed {
		t.Fatalf("Revoke = %v, %v", changed, err)
	}
	if changed, err := Revoke(ctx, db, admin, a1id, now); err != nil || changed {
		t.Errorf("Revoke again = %v, %v; want no change", changed, err)
	}
	if _, err := Revoke(ctx, db, admin, "nope", now); err == nil {
		t.Error("revoking an unknown session succeeded")
	}
	if n, err := RevokeAll(ctx, db, admin, alice, now); err != nil || n != 1 {
		t.Errorf("RevokeAll = %d, %v; want 1 (the other one was revoked already)", n, err)
	}
	if n, err := RevokeAll(ctx, db, admin, alice, now); err != nil || n != 0 {
		t.Errorf("RevokeAll again = %d, %v; want 0", n, err)
	}
	if _, err := RevokeAll(ctx, db, admin, "nobody", now); err == nil {
		t.Error("revoking the sessions of an unknown user succeeded")
	}
	for _, tok := range []string{a1, a2} {
		if _, err := Lookup(ctx, db.Read(), tok, now, p); !errors.Is(err, ErrNotFound) {
			t.Errorf("revoked session still live: %v", err)
		}
	}
	if after, _ := audit.Count(ctx, db.Read()); after != before+2 {
		t.Errorf("audit events added = %d, want 2 (one revoke, one revoke_all)", after-before)
	}
}

// Purge deletes only sessions that ended (or expired, or went idle) before
// the cut; a live session stays.
func TestPurgeKeepsLiveSessions(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	p := Policy{Idle: 30 * time.Minute, Max: 12 * time.Hour}
	pid := principal(t, db, "u1", "admin")
	long := time.Now().Add(-30 * 24 * time.Hour)
	_, old := start(t, db, pid, long, p) // idle and expired for weeks
	_, ended := start(t, db, pid, time.Now().Add(-time.Hour), p)
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		_, err := End(ctx, tx, ended, "logout", time.Now().Add(-time.Hour))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, live := start(t, db, pid, time.Now(), p)
	n, err := Purge(ctx, db, time.Now().Add(-7*24*time.Hour), p)
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want the one weeks-old session", n, err)
	}
	for id, want := range map[string]bool{old: false, ended: true, live: true} {
		var c int
		db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE id = ?`, id).Scan(&c)
		if (c == 1) != want {
			t.Errorf("session %s kept = %v, want %v", id, c == 1, want)
		}
	}
}

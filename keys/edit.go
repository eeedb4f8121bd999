package keys

// Editing a key after it was made: its scopes, its request rate limit and
// its expiry. Widening any is a governed change (docs/changes.md:
// key.scopes, key.request_rate, key.expiry): the console asks Widening or
// compares the values, and writes through SetScopes, SetRate and
// SetExpiry only what applies now, at once or once a second admin
// approved it.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// ErrRevokedKey refuses an edit of a revoked key: it can do nothing, and
// it never will again.
var ErrRevokedKey = problem.Conflict("key_revoked", "The key is revoked, so its scopes, rate limit and expiry no longer change. Create a new key if one is needed.")

// Covers reports whether scopes allow everything scope allows: it is
// listed, it is a name a pattern of scopes matches (Allows), or it is a
// pattern whose every match a shorter pattern of scopes of its kind
// matches too (tool:re* is covered by tool:*, not the other way round).
func Covers(scopes []string, scope string) bool {
	if slices.Contains(scopes, scope) {
		return true
	}
	kind, name, ok := strings.Cut(scope, ":")
	if !ok {
		return false
	}
	if p, pattern := strings.CutSuffix(scope, "*"); pattern {
		for _, sc := range scopes {
			if q, ok := strings.CutSuffix(sc, "*"); ok && strings.HasPrefix(q, kind+":") && strings.HasPrefix(p, q) {
				return true
			}
		}
		return false
	}
	return Key{Scopes: scopes}.Allows(kind, name)
}

// Widening returns the scopes of after that before does not cover
// (Covers): what the key could do after that it could not before. None
// means going from before to after only narrows the key, or keeps it.
func Widening(before, after []string) []string {
	var out []string
	for _, sc := range after {
		if !Covers(before, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// NormalScopes is scopes as a key keeps them: sorted, each once.
func NormalScopes(scopes []string) []string {
	out := slices.Clone(scopes)
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckScopes returns why a key's new scopes are refused, or "": as when
// a key is created (at least one, well-formed kinds and patterns).
// UnknownScope checks the names against what Warden knows.
func CheckScopes(scopes []string) string { return checkScopes(scopes) }

// CheckRate returns why a request rate limit is refused, by field
// (rate_per_min, burst): as when a key is created.
func CheckRate(perMin, burst int) map[string]string { return checkRate(perMin, burst) }

// SetScopes replaces a key's scopes with their audit event (key.scopes:
// before, after, what was added and removed); false, and nothing
// recorded, when they are the same. A revoked key is ErrRevokedKey, bad
// scopes a *store.ValidationError. The caller has decided the change may
// apply (a narrowing, or an approved widening).
func SetScopes(ctx context.Context, db *store.DB, actor audit.Actor, keyID string, scopes []string) (bool, error) {
	if msg := checkScopes(scopes); msg != "" {
		return false, &store.ValidationError{Fields: map[string]string{"scopes": msg}}
	}
	scopes = NormalScopes(scopes)
	raw, err := json.Marshal(scopes)
	if err != nil {
		return false, err
	}
	changed := false
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		k, err := ByID(ctx, tx, keyID)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return ErrRevokedKey
		}
		if slices.Equal(k.Scopes, scopes) {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET scopes = ? WHERE id = ? AND revoked_at IS NULL`, string(raw), keyID); err != nil {
			return fmt.Errorf("set scopes of key %s: %w", keyID, err)
		}
		changed = true
		var removed []string
		for _, sc := range k.Scopes {
			if !slices.Contains(scopes, sc) {
				removed = append(removed, sc)
			}
		}
		var added []string
		for _, sc := range scopes {
			if !slices.Contains(k.Scopes, sc) {
				added = append(added, sc)
			}
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "key.scopes", Tenant: k.TenantSlug,
			Subject: audit.Subject{Type: "key", ID: k.ID}, Details: map[string]any{"name": k.Name, "prefix": k.Prefix,
				"before": k.Scopes, "scopes": scopes, "added": added, "removed": removed}})
		return err
	})
	return changed, err
}

// SetRate sets a key's request rate limit (requests a minute and burst)
// with its audit event (key.rate); false, and nothing recorded, when
// unchanged. The gateway's bucket for the key follows from its next
// request. A revoked key is ErrRevokedKey, a limit out of range a
// *store.ValidationError.
func SetRate(ctx context.Context, db *store.DB, actor audit.Actor, keyID string, perMin, burst int) (bool, error) {
	if errs := checkRate(perMin, burst); len(errs) > 0 {
		return false, &store.ValidationError{Fields: errs}
	}
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		changed = false
		k, err := ByID(ctx, tx, keyID)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return ErrRevokedKey
		}
		if k.RatePerMin == perMin && k.Burst == burst {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET rate_per_min = ?, burst = ? WHERE id = ? AND revoked_at IS NULL`,
			perMin, burst, keyID); err != nil {
			return fmt.Errorf("set rate limit of key %s: %w", keyID, err)
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "key.rate", Tenant: k.TenantSlug,
			Subject: audit.Subject{Type: "key", ID: k.ID}, Details: map[string]any{"name": k.Name, "prefix": k.Prefix,
				"rate_per_min": perMin, "burst": burst, "previous_rate_per_min": k.RatePerMin, "previous_burst": k.Burst}})
		return err
	})
	return changed, err
}

// SetExpiry sets when a key stops working (nil: never) with its audit
// event (key.expiry); false, and nothing recorded, when unchanged. The
// gateway refuses the key as expired from then on. An expiry not after
// now is a *store.ValidationError, also when an approved change waited
// past it; a revoked key is ErrRevokedKey.
func SetExpiry(ctx context.Context, db *store.DB, actor audit.Actor, keyID string, expiresAt *time.Time, now time.Time) (bool, error) {
	if msg := CheckExpiry(expiresAt, now); msg != "" {
		return false, &store.ValidationError{Fields: map[string]string{"expires_at": msg}}
	}
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		changed = false
		k, err := ByID(ctx, tx, keyID)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return ErrRevokedKey
		}
		if sameExpiry(k.ExpiresAt, expiresAt) {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET expires_at = ? WHERE id = ? AND revoked_at IS NULL`,
			optTime(expiresAt), keyID); err != nil {
			return fmt.Errorf("set expiry of key %s: %w", keyID, err)
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "key.expiry", Tenant: k.TenantSlug,
			Subject: audit.Subject{Type: "key", ID: k.ID}, Details: map[string]any{"name": k.Name, "prefix": k.Prefix,
				"expires_at": optTime(expiresAt), "previous_expires_at": optTime(k.ExpiresAt)}})
		return err
	})
	return changed, err
}

// CheckExpiry returns why a key's new expiry is refused, or "": as when
// a key is created, it must be in the future (none is fine).
func CheckExpiry(expiresAt *time.Time, now time.Time) string {
	if expiresAt != nil && !expiresAt.After(now) {
		return "The expiry must be in the future."
	}
	return ""
}

func sameExpiry(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

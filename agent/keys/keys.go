// Package keys manages virtual keys: the credentials agents call the API
// with. A key is "wk_" + an 8-character public prefix + "_" + a 32-character
// secret. It is shown once; Warden keeps only the SHA-256 of the whole key,
// found by its prefix and compared in constant time. A key maps server-side
// to a tenant, scopes, an expiry and a rate limit; nothing in a request
// says who the caller is.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/store"
)

const (
	keyPrefix    = "wk_"
	prefixLen    = 8
	secretLen    = 32
	alphabet     = "abcdefghijkmnpqrstuvwxyz23456789" // no look-alikes
	maxNameBytes = 100
)

// Errors a caller may want to tell apart. All of them mean 401 to an agent.
var (
	ErrMalformed = errors.New("malformed key")
	ErrUnknown   = errors.New("unknown key")
	ErrRevoked   = errors.New("revoked key")
	ErrExpired   = errors.New("expired key")
)

// Key is a stored virtual key (never its secret).
type Key struct {
	ID         string
	TenantID   string
	TenantSlug string
	Name       string
	Prefix     string
	Scopes     []string // "skill:NAME" and "tool:NAME"
	RatePerMin int
	Burst      int
	CreatedBy  string
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
}

// ScopeReadTenant lets a key read every action and journey of its tenant,
// not only those it created.
const ScopeReadTenant = "read:tenant"

// ReadTenant is ScopeReadTenant as Allows takes it.
func ReadTenant() (kind, name string) { return "read", "tenant" }

// Allows reports whether the key's scopes allow kind ("skill" or "tool")
// name. Deny by default: only what is listed.
func (k Key) Allows(kind, name string) bool {
	return slices.Contains(k.Scopes, kind+":"+name)
}

// Active reports whether the key may be used at now.
func (k Key) Active(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// NewSpec is what creating a key needs.
type NewSpec struct {
	TenantID   string
	Name       string
	Scopes     []string
	RatePerMin int
	Burst      int
	ExpiresAt  *time.Time
	CreatedBy  string // principal id, or "cli"
}

// Validate checks a spec and returns one message per problem, keyed by
// field, so a form can show them next to their inputs.
func (s NewSpec) Validate(now time.Time) map[string]string {
	errs := map[string]string{}
	name := strings.TrimSpace(s.Name)
	switch {
	case name == "":
		errs["name"] = "Give the key a name, such as the agent that will use it."
	case len(name) > maxNameBytes:
		errs["name"] = fmt.Sprintf("Keep the name under %d characters.", maxNameBytes)
	}
	if len(s.Scopes) == 0 {
		errs["scopes"] = "Choose at least one skill or tool: a key without scopes can do nothing."
	}
	for _, sc := range s.Scopes {
		kind, name, ok := strings.Cut(sc, ":")
		if sc == ScopeReadTenant {
			continue
		}
		if !ok || (kind != "skill" && kind != "tool") || name == "" {
			errs["scopes"] = fmt.Sprintf("%q is not a scope: write skill:NAME, tool:NAME or read:tenant.", sc)
			break
		}
	}
	if s.RatePerMin < 1 || s.RatePerMin > 600000 {
		errs["rate_per_min"] = "The rate limit must be between 1 and 600000 requests a minute."
	}
	if s.Burst < 1 || s.Burst > 10000 {
		errs["burst"] = "The burst must be between 1 and 10000."
	}
	if s.ExpiresAt != nil && !s.ExpiresAt.After(now) {
		errs["expires_at"] = "The expiry must be in the future."
	}
	return errs
}

// Generate returns a new secret key and its public prefix.
func Generate() (secret, prefix string) {
	prefix = randomString(prefixLen)
	return keyPrefix + prefix + "_" + randomString(secretLen), prefix
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// hashSecret is the stored form of a key.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// parse splits a presented key into its prefix, or fails without saying
// more than "malformed".
func parse(secret string) (prefix string, err error) {
	rest, ok := strings.CutPrefix(secret, keyPrefix)
	if !ok || len(rest) != prefixLen+1+secretLen || rest[prefixLen] != '_' {
		return "", ErrMalformed
	}
	return rest[:prefixLen], nil
}

// Create stores a new key inside tx and returns it with its secret, which
// is never stored and cannot be shown again.
func Create(ctx context.Context, tx *sql.Tx, s NewSpec) (Key, string, error) {
	now := time.Now().UTC()
	if errs := s.Validate(now); len(errs) > 0 {
		return Key{}, "", fmt.Errorf("invalid key: %v", errs)
	}
	secret, prefix := Generate()
	scopes := slices.Clone(s.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	raw, _ := json.Marshal(scopes)
	k := Key{
		ID: store.NewID(), TenantID: s.TenantID, Name: strings.TrimSpace(s.Name), Prefix: prefix, Scopes: scopes,
		RatePerMin: s.RatePerMin, Burst: s.Burst, CreatedBy: s.CreatedBy, CreatedAt: now, ExpiresAt: s.ExpiresAt,
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO virtual_keys (id, tenant_id, name, prefix, secret_hash, scopes, rate_per_min, burst, created_by, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.TenantID, k.Name, k.Prefix, hashSecret(secret), string(raw), k.RatePerMin, k.Burst, k.CreatedBy,
		store.FormatTime(now), optTime(k.ExpiresAt))
	if err != nil {
		return Key{}, "", fmt.Errorf("create key: %w", err)
	}
	return k, secret, nil
}

// Revoke marks a key revoked inside tx. Revoking a revoked key changes
// nothing and is not an error (the button is idempotent).
func Revoke(ctx context.Context, tx *sql.Tx, id string) (changed bool, err error) {
	res, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, store.Now(), id)
	if err != nil {
		return false, fmt.Errorf("revoke key %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

const selectKey = `SELECT k.id, k.tenant_id, t.slug, k.name, k.prefix, k.scopes, k.rate_per_min, k.burst, k.created_by,
	k.created_at, k.expires_at, k.revoked_at, k.last_used_at FROM virtual_keys k JOIN tenants t ON t.id = k.tenant_id`

// Authenticate finds the key a caller presented and checks it: known
// prefix, matching secret (constant-time), not revoked, not expired. The
// returned error says why for the audit trail; the caller answers 401 for
// all of them. For ErrRevoked and ErrExpired the key is returned too.
func Authenticate(ctx context.Context, q store.Querier, secret string, now time.Time) (Key, error) {
	prefix, err := parse(secret)
	if err != nil {
		return Key{}, err
	}
	var hash string
	k, err := scanKeyWithHash(q.QueryRowContext(ctx, `SELECT k.secret_hash, `+strings.TrimPrefix(selectKey, "SELECT ")+` WHERE k.prefix = ?`, prefix), &hash)
	if errors.Is(err, sql.ErrNoRows) {
		// Compare anyway, so an unknown prefix costs what a known one does.
		subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(hashSecret("")))
		return Key{}, ErrUnknown
	}
	if err != nil {
		return Key{}, fmt.Errorf("authenticate key: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(hash)) != 1 {
		return Key{}, ErrUnknown
	}
	if k.RevokedAt != nil {
		return k, ErrRevoked
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return k, ErrExpired
	}
	return k, nil
}

// List returns the keys of the given tenants (nil for all), newest first.
func List(ctx context.Context, q store.Querier, tenantIDs []string) ([]Key, error) {
	rows, err := q.QueryContext(ctx, selectKey+` ORDER BY k.created_at DESC`)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	defer rows.Close()
	var out []Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list keys: %w", err)
		}
		if tenantIDs == nil || slices.Contains(tenantIDs, k.TenantID) {
			out = append(out, k)
		}
	}
	return out, rows.Err()
}

// ByID loads one key, or store.ErrNotFound.
func ByID(ctx context.Context, q store.Querier, id string) (Key, error) {
	k, err := scanKey(q.QueryRowContext(ctx, selectKey+` WHERE k.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, store.ErrNotFound
	}
	return k, err
}

// Touch records that a key was used. It is called off the request path's
// critical section and may be coarse.
func Touch(ctx context.Context, tx *sql.Tx, id string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET last_used_at = ? WHERE id = ?`, store.FormatTime(now), id)
	return err
}

type scanner interface{ Scan(dest ...any) error }

func scanKey(s scanner) (Key, error) { return scanKeyWithHash(s, nil) }

func scanKeyWithHash(s scanner, hash *string) (Key, error) {
	var k Key
	var scopes, created string
	var expires, revoked, used sql.NullString
	dest := []any{&k.ID, &k.TenantID, &k.TenantSlug, &k.Name, &k.Prefix, &scopes, &k.RatePerMin, &k.Burst, &k.CreatedBy,
		&created, &expires, &revoked, &used}
	if hash != nil {
		dest = append([]any{hash}, dest...)
	}
	if err := s.Scan(dest...); err != nil {
		return Key{}, err
	}
	if err := json.Unmarshal([]byte(scopes), &k.Scopes); err != nil {
		return Key{}, fmt.Errorf("key %s scopes: %w", k.ID, err)
	}
	k.CreatedAt = parseTime(created)
	k.ExpiresAt = parseOptTime(expires)
	k.RevokedAt = parseOptTime(revoked)
	k.LastUsedAt = parseOptTime(used)
	return k, nil
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func parseOptTime(s sql.NullString) *time.Time {
	if !s.Valid || s.String == "" {
		return nil
	}
	t := parseTime(s.String)
	return &t
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return store.FormatTime(*t)
}

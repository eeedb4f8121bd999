// Package keys manages virtual keys: the credentials agents call the API
// with. A key is "wk_" + an 8-character public prefix + "_" + a 32-character
// secret. It is shown once; Warden keeps only the SHA-256 of the whole key,
// found by its prefix and compared in constant time. A key maps server-side
// to a tenant, scopes, an expiry and a rate limit; nothing in a request
// says who the caller is.
//
// Each key also has a callback secret, "whsec_" + 40 characters, with
// which Warden signs the callbacks it sends the key's agent. It is shown
// once with the key, and kept only sealed with the installation's key (see
// package seal), so that whoever reads the database cannot sign callbacks:
//
//	k, secrets, err := keys.CreateAudited(ctx, db, sealer, actor, spec) // show secrets.Key and secrets.Callback once
//	signWith, err := keys.CallbackSecrets(ctx, q, sealer, k.ID, now)    // current first, then the previous during its grace
//	k, fresh, err := keys.RotateCallbackSecret(ctx, db, sealer, k.ID, actor, now) // show fresh once
//	changed, err := keys.RevokeAudited(ctx, db, actor, k.ID)            // false when it was already revoked
//
// Create and Revoke are the same writes inside a caller's transaction,
// without the audit event.
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

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

const (
	keyPrefix    = "wk_"
	prefixLen    = 8
	secretLen    = 32
	alphabet     = "abcdefghijkmnpqrstuvwxyz23456789" // no look-alikes
	maxNameBytes = 100

	callbackPrefix = "whsec_"
	callbackLen    = 40 // 200 bits from the 32-letter alphabet
)

// CallbackGrace is how long the callback secret a rotation replaced keeps
// signing callbacks next to the new one, so that an agent can deploy the
// new secret without rejecting a callback in between.
const CallbackGrace = 24 * time.Hour

// Errors a caller may want to tell apart. All of them mean 401 to an agent.
var (
	ErrMalformed = errors.New("malformed key")
	ErrUnknown   = errors.New("unknown key")
	ErrRevoked   = errors.New("revoked key")
	ErrExpired   = errors.New("expired key")
)

// ErrNoCallbackSecret means the key has no callback secret: it was created
// before keys had one, and no admin has generated one since. Its agent gets
// no callbacks (they cannot be signed).
var ErrNoCallbackSecret = errors.New("the key has no callback secret")

// Key is a stored virtual key (never its secret).
type Key struct {
	ID         string
	TenantID   string
	TenantSlug string
	Name       string
	Prefix     string
	Scopes     []string // "skill:NAME", "tool:NAME", "model:ALIAS", "mcp:SERVER/TOOL", "read:tenant"; a name may end in * (IsPattern)
	RatePerMin int
	Burst      int
	CreatedBy  string
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time

	// Callback signing. The secrets themselves are never loaded with a
	// key: only whether there is one, when it was set, and until when the
	// one it replaced still signs.
	HasCallbackSecret     bool
	CallbackSecretSetAt   *time.Time
	PreviousCallbackUntil *time.Time
}

// PreviousCallbackValid reports whether the callback secret the last
// rotation replaced still signs callbacks at now.
func (k Key) PreviousCallbackValid(now time.Time) bool {
	return k.PreviousCallbackUntil != nil && now.Before(*k.PreviousCallbackUntil)
}

// Secrets are what creating a key returns: shown once, never stored in
// the clear.
type Secrets struct {
	Key      string // "wk_…", the agent's credential
	Callback string // "whsec_…", with which the agent verifies Warden's callbacks
}

// ScopeReadTenant lets a key read every action and journey of its tenant,
// not only those it created.
const ScopeReadTenant = "read:tenant"

// ReadTenant is ScopeReadTenant as Allows takes it.
func ReadTenant() (kind, name string) { return "read", "tenant" }

// Allows reports whether the key's scopes allow kind ("skill", "tool",
// "model", a model alias of the chat gateway, or "mcp", SERVER/TOOL of an
// upstream MCP server: "mcp:crm/*" allows every tool of crm) name. Deny by default: only
// what is listed, or matched by a pattern (a scope whose name ends in *:
// "model:gpt-*" allows every alias that starts with "gpt-", "model:*"
// every alias). A pattern matches names of its own kind only, whatever
// the kind.
func (k Key) Allows(kind, name string) bool {
	want := kind + ":" + name
	for _, sc := range k.Scopes {
		if sc == want {
			return true
		}
		if prefix, ok := strings.CutSuffix(sc, "*"); ok && name != "" && strings.HasPrefix(want, prefix) &&
			strings.HasPrefix(prefix, kind+":") {
			return true
		}
	}
	return false
}

// patternKinds are the kinds whose scopes may be patterns (IsPattern).
var patternKinds = []string{"skill", "tool", "model", "mcp"}

// IsPattern reports whether a scope is a pattern: its name ends in *.
func IsPattern(scope string) bool {
	_, name, ok := strings.Cut(scope, ":")
	return ok && strings.HasSuffix(name, "*")
}

// checkPattern returns why a pattern scope is refused, or "": its kind is
// one of patternKinds and its only * is its last character.
func checkPattern(scope string) string {
	kind, name, _ := strings.Cut(scope, ":")
	switch {
	case !slices.Contains(patternKinds, kind):
		return fmt.Sprintf("%q is not a scope: a pattern is skill:PREFIX*, tool:PREFIX*, model:PREFIX* or mcp:SERVER/*.", scope)
	case strings.Count(name, "*") != 1 || !strings.HasSuffix(name, "*") || strings.ContainsAny(name, " \t"):
		return fmt.Sprintf("%q is not a scope: a pattern has one *, at its end (such as %s:gpt-*).", scope, kind)
	}
	return ""
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

// Offered is every scope a key can be given in the console: read:tenant,
// skill:NAME for each skill, tool:NAME for each catalog tool and
// model:ALIAS for each model alias (the model door, /v1/chat/completions),
// in that order.
func Offered(skills, tools, models []string) []string {
	out := make([]string, 0, len(skills)+len(tools)+len(models)+1)
	out = append(out, ScopeReadTenant)
	for _, s := range skills {
		out = append(out, "skill:"+s)
	}
	for _, t := range tools {
		out = append(out, "tool:"+t)
	}
	for _, m := range models {
		out = append(out, "model:"+m)
	}
	return out
}

// UnknownScope returns the message for the first of scopes that is not
// offered (a skill, tool or model alias Warden does not know), or "". A
// scope with a * is a pattern, which need not match anything yet (it also
// allows what is added later): NewSpec.Validate checks its form.
func UnknownScope(scopes, offered []string) string {
	for _, sc := range scopes {
		if slices.Contains(offered, sc) || strings.Contains(sc, "*") {
			continue
		}
		if strings.HasPrefix(sc, "model:") {
			return fmt.Sprintf("%q is not a model alias Warden knows: add a deployment with that alias on the Models page first.", sc)
		}
		if strings.HasPrefix(sc, "mcp:") {
			return fmt.Sprintf("%q is not an MCP tool Warden knows: discover the server's tools on the MCP servers page first, or give a pattern such as mcp:SERVER/*.", sc)
		}
		return fmt.Sprintf("%q is not a skill or tool Warden knows.", sc)
	}
	return ""
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
	if msg := checkScopes(s.Scopes); msg != "" {
		errs["scopes"] = msg
	}
	for field, msg := range checkRate(s.RatePerMin, s.Burst) {
		errs[field] = msg
	}
	if msg := CheckExpiry(s.ExpiresAt, now); msg != "" {
		errs["expires_at"] = msg
	}
	return errs
}

// checkScopes returns why scopes are refused, or "": at least one, each
// of a kind Warden knows, patterns well formed. UnknownScope checks the
// names against what exists.
func checkScopes(scopes []string) string {
	if len(scopes) == 0 {
		return "Choose at least one skill or tool: a key without scopes can do nothing."
	}
	for _, sc := range scopes {
		kind, name, ok := strings.Cut(sc, ":")
		if sc == ScopeReadTenant {
			continue
		}
		if !ok || (kind != "skill" && kind != "tool" && kind != "model" && kind != "mcp") || name == "" {
			return fmt.Sprintf("%q is not a scope: write skill:NAME, tool:NAME, model:NAME, mcp:SERVER/TOOL or read:tenant.", sc)
		}
		if server, tool, ok := strings.Cut(name, "/"); kind == "mcp" && (!ok || server == "" || tool == "") && name != "*" {
			return fmt.Sprintf("%q is not a scope: an MCP scope is mcp:SERVER/TOOL or mcp:SERVER/* (a tool of an upstream MCP server).", sc)
		}
		if strings.Contains(name, "*") {
			if msg := checkPattern(sc); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// checkRate returns why a request rate limit is refused, by field.
func checkRate(perMin, burst int) map[string]string {
	errs := map[string]string{}
	if perMin < 1 || perMin > 600000 {
		errs["rate_per_min"] = "The rate limit must be between 1 and 600000 requests a minute."
	}
	if burst < 1 || burst > 10000 {
		errs["burst"] = "The burst must be between 1 and 10000."
	}
	return errs
}

// Generate returns a new secret key and its public prefix.
func Generate() (secret, prefix string) {
	prefix = randomString(prefixLen)
	return keyPrefix + prefix + "_" + randomString(secretLen), prefix
}

// GenerateCallbackSecret returns a new callback secret.
func GenerateCallbackSecret() string { return callbackPrefix + randomString(callbackLen) }

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

// Create stores a new key inside tx and returns it with its secrets: the
// key itself, of which only a hash is stored, and its callback secret,
// stored sealed by sealer. Neither can be shown again. An invalid spec is
// a *store.ValidationError. CreateAudited is the same with its audit
// event, for keys a person creates.
func Create(ctx context.Context, tx *store.Tx, sealer *seal.Sealer, s NewSpec) (Key, Secrets, error) {
	now := time.Now().UTC()
	if errs := s.Validate(now); len(errs) > 0 {
		return Key{}, Secrets{}, fmt.Errorf("create key: %w", &store.ValidationError{Fields: errs})
	}
	if sealer == nil {
		return Key{}, Secrets{}, errors.New("create key: no sealer to keep its callback secret")
	}
	secret, prefix := Generate()
	callback := GenerateCallbackSecret()
	scopes := slices.Clone(s.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	raw, _ := json.Marshal(scopes)
	k := Key{
		ID: store.NewID(), TenantID: s.TenantID, Name: strings.TrimSpace(s.Name), Prefix: prefix, Scopes: scopes,
		RatePerMin: s.RatePerMin, Burst: s.Burst, CreatedBy: s.CreatedBy, CreatedAt: now, ExpiresAt: s.ExpiresAt,
		HasCallbackSecret: true, CallbackSecretSetAt: &now,
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO virtual_keys (id, tenant_id, name, prefix, secret_hash, scopes, rate_per_min, burst, created_by, created_at, expires_at,
			callback_secret_sealed, callback_secret_set_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.TenantID, k.Name, k.Prefix, hashSecret(secret), string(raw), k.RatePerMin, k.Burst, k.CreatedBy,
		store.FormatTime(now), optTime(k.ExpiresAt), sealer.Seal([]byte(callback), k.ID), store.FormatTime(now))
	if err != nil {
		return Key{}, Secrets{}, fmt.Errorf("create key: %w", err)
	}
	return k, Secrets{Key: secret, Callback: callback}, nil
}

// CreateAudited creates a key as Create does and records who created it,
// in one transaction: a credential that can call the API never exists
// without the event that says who made it and with which scopes. The
// event names the key's prefix, never a secret. The returned key carries
// its tenant's slug.
func CreateAudited(ctx context.Context, db *store.DB, sealer *seal.Sealer, actor audit.Actor, s NewSpec) (Key, Secrets, error) {
	var k Key
	var secrets Secrets
	err := db.Transact(ctx, func(tx *store.Tx) error {
		slug, err := tenants.SlugOf(ctx, tx, s.TenantID)
		if err != nil {
			return err
		}
		if k, secrets, err = Create(ctx, tx, sealer, s); err != nil {
			return err
		}
		k.TenantSlug = slug
		details := map[string]any{
			"prefix": k.Prefix, "name": k.Name, "scopes": k.Scopes,
			"rate_per_min": k.RatePerMin, "burst": k.Burst,
		}
		if k.ExpiresAt != nil {
			details["expires_at"] = store.FormatTime(*k.ExpiresAt)
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Tenant:  slug,
			Verb:    "key.create",
			Subject: audit.Subject{Type: "key", ID: k.ID},
			Details: details,
		})
		return err
	})
	if err != nil {
		return Key{}, Secrets{}, err
	}
	return k, secrets, nil
}

// RevokeAudited revokes a key as Revoke does and records who revoked it,
// in one transaction. Revoking is what on-call presses when a key leaks,
// perhaps twice: only a real change is recorded (changed true). An unknown
// key is store.ErrNotFound.
func RevokeAudited(ctx context.Context, db *store.DB, actor audit.Actor, id string) (changed bool, err error) {
	err = db.Transact(ctx, func(tx *store.Tx) error {
		k, err := ByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if changed, err = Revoke(ctx, tx, id); err != nil || !changed {
			return err
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Tenant:  k.TenantSlug,
			Verb:    "key.revoke",
			Subject: audit.Subject{Type: "key", ID: k.ID},
			Details: map[string]any{"prefix": k.Prefix, "name": k.Name},
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// RotateCallbackSecret gives a key a new callback secret and returns it,
// to be shown once. The secret it replaces keeps signing for
// CallbackGrace: until then every callback carries a signature by each, so
// the agent can switch over without rejecting one. Only one previous
// secret is kept: rotating again within the grace period ends the older
// one at once. A key without a callback secret (created before they
// existed) gets its first one and starts receiving callbacks. The change
// commits with its audit event, which names no secret.
func RotateCallbackSecret(ctx context.Context, db *store.DB, sealer *seal.Sealer, keyID string, actor audit.Actor, now time.Time) (Key, string, error) {
	if sealer == nil {
		return Key{}, "", errors.New("rotate callback secret: no sealer")
	}
	secret := GenerateCallbackSecret()
	var k Key
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var current sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT callback_secret_sealed FROM virtual_keys WHERE id = ?`, keyID).Scan(&current)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		var prevUntil any
		if current.Valid {
			prevUntil = store.FormatTime(now.Add(CallbackGrace))
		}
		if _, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET callback_secret_sealed = ?, callback_secret_set_at = ?,
			callback_secret_prev_sealed = ?, callback_secret_prev_until = ? WHERE id = ?`,
			sealer.Seal([]byte(secret), keyID), store.FormatTime(now), current, prevUntil, keyID); err != nil {
			return err
		}
		if k, err = ByID(ctx, tx, keyID); err != nil {
			return err
		}
		details := map[string]any{"prefix": k.Prefix, "name": k.Name}
		if k.PreviousCallbackUntil != nil {
			details["previous_valid_until"] = store.FormatTime(*k.PreviousCallbackUntil)
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Tenant:  k.TenantSlug,
			Verb:    "key.callback_secret_rotated",
			Subject: audit.Subject{Type: "key", ID: k.ID},
			Details: details,
		})
		return err
	})
	if err != nil {
		return Key{}, "", fmt.Errorf("rotate the callback secret of key %s: %w", keyID, err)
	}
	return k, secret, nil
}

// CallbackSecrets returns the secrets a callback for the key is signed
// with at now: the current one, then the previous one while its grace
// period lasts. It fails with ErrNoCallbackSecret for a key that has none,
// and store.ErrNotFound for an unknown key.
func CallbackSecrets(ctx context.Context, q store.Querier, sealer *seal.Sealer, keyID string, now time.Time) ([]string, error) {
	var current, prev, prevUntil sql.NullString
	err := q.QueryRowContext(ctx, `SELECT callback_secret_sealed, callback_secret_prev_sealed, callback_secret_prev_until
		FROM virtual_keys WHERE id = ?`, keyID).Scan(&current, &prev, &prevUntil)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("callback secrets of key %s: %w", keyID, err)
	}
	if !current.Valid {
		return nil, ErrNoCallbackSecret
	}
	sealed := []string{current.String}
	if until := parseOptTime(prevUntil); prev.Valid && until != nil && now.Before(*until) {
		sealed = append(sealed, prev.String)
	}
	out := make([]string, 0, len(sealed))
	for _, v := range sealed {
		pt, err := sealer.Open(v, keyID)
		if err != nil {
			return nil, fmt.Errorf("callback secret of key %s: %w", keyID, err)
		}
		out = append(out, string(pt))
	}
	return out, nil
}

// Revoke marks a key revoked inside tx. Revoking a revoked key changes
// nothing and is not an error (the button is idempotent). RevokeAudited
// is the same with its audit event.
func Revoke(ctx context.Context, tx *store.Tx, id string) (changed bool, err error) {
	res, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, store.Now(), id)
	if err != nil {
		return false, fmt.Errorf("revoke key %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

const selectKey = `SELECT k.id, k.tenant_id, t.slug, k.name, k.prefix, k.scopes, k.rate_per_min, k.burst, k.created_by,
	k.created_at, k.expires_at, k.revoked_at, k.last_used_at,
	k.callback_secret_sealed IS NOT NULL, k.callback_secret_set_at, k.callback_secret_prev_until
	FROM virtual_keys k JOIN tenants t ON t.id = k.tenant_id`

// Authenticate finds the key a caller presented and checks it: known
// prefix, matching secret (constant-time), not revoked, not expired. The
// returned error says why for the audit trail; the caller answers 401 for
// all of them. For ErrRevoked and ErrExpired the key is returned too.
func Authenticate(ctx context.Context, q store.Querier, secret string, now time.Time) (Key, error) {
	return authenticate(ctx, q, secret, now, authenticateQuery, nil)
}

// AuthenticateWithTenant is Authenticate returning also the key's tenant,
// read in the same statement: the gateway needs both on every request,
// and on SQLite each read is a read transaction of its own. The tenant is
// set when the key is (also for ErrRevoked and ErrExpired).
func AuthenticateWithTenant(ctx context.Context, q store.Querier, secret string, now time.Time) (Key, tenants.Tenant, error) {
	dest, tenant := tenants.ScanJoined()
	k, err := authenticate(ctx, q, secret, now, authenticateWithTenantQuery, dest)
	if k.ID == "" {
		return k, tenants.Tenant{}, err
	}
	return k, tenant(), err
}

var (
	authenticateQuery           = `SELECT k.secret_hash, ` + strings.TrimPrefix(selectKey, "SELECT ") + ` WHERE k.prefix = ?`
	authenticateWithTenantQuery = strings.Replace(authenticateQuery, "\n\tFROM virtual_keys k", ",\n\t"+tenants.JoinedColumns+"\n\tFROM virtual_keys k", 1)
)

// authenticate runs query (authenticateQuery, with more columns read
// into more after the key's own), then checks the key.
func authenticate(ctx context.Context, q store.Querier, secret string, now time.Time, query string, more []any) (Key, error) {
	prefix, err := parse(secret)
	if err != nil {
		return Key{}, err
	}
	var hash string
	k, err := store.Get(ctx, q, func(s store.Scanner) (Key, error) { return scanKeyWithHash(moreScanner{s, more}, &hash) },
		query, prefix)
	if errors.Is(err, store.ErrNotFound) {
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
	all, err := store.Query(ctx, q, scanKey, selectKey+` ORDER BY k.created_at DESC, k.id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	var out []Key
	for _, k := range all {
		if tenantIDs == nil || slices.Contains(tenantIDs, k.TenantID) {
			out = append(out, k)
		}
	}
	return out, nil
}

// ErrNotFound is a key that does not exist (or that the caller may not
// see); errors.Is matches it against store.ErrNotFound.
var ErrNotFound = problem.NotFound("not_found", "There is no such key.")

// ByID loads one key, or ErrNotFound.
func ByID(ctx context.Context, q store.Querier, id string) (Key, error) {
	k, err := store.Get(ctx, q, scanKey, selectKey+` WHERE k.id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Key{}, ErrNotFound
	}
	return k, err
}

// Names loads the names of the keys in ids, keyed by id (unknown ids
// left out), in one query per 500 ids: what the audit trail shows for an
// agent's key in each sentence, for a page of events at once rather than
// a lookup per key.
func Names(ctx context.Context, q store.Querier, ids []string) (map[string]string, error) {
	type named struct{ id, name string }
	scan := func(s scanner) (named, error) {
		var n named
		err := s.Scan(&n.id, &n.name)
		return n, err
	}
	out := make(map[string]string, len(ids))
	err := store.InChunks(ids, func(in string, args []any) error {
		got, err := store.Query(ctx, q, scan, `SELECT id, name FROM virtual_keys WHERE id IN (`+in+`)`, args...)
		for _, n := range got {
			out[n.id] = n.name
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("key names: %w", err)
	}
	return out, nil
}

// Touch records that a key was used, in tx. The request path does not
// call it: the gateway notes uses in a Usage, which writes them in
// batches.
func Touch(ctx context.Context, tx *store.Tx, id string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE virtual_keys SET last_used_at = ? WHERE id = ?`, store.FormatTime(now), id)
	return err
}

type scanner = store.Scanner

func scanKey(s scanner) (Key, error) { return scanKeyWithHash(s, nil) }

// moreScanner scans a row's columns into the destinations it is given,
// then the rest into more.
type moreScanner struct {
	s    scanner
	more []any
}

func (m moreScanner) Scan(dest ...any) error {
	if len(m.more) == 0 {
		return m.s.Scan(dest...)
	}
	return m.s.Scan(append(dest, m.more...)...)
}

func scanKeyWithHash(s scanner, hash *string) (Key, error) {
	var k Key
	var scopes, created string
	var expires, revoked, used, callbackSet, prevUntil sql.NullString
	dest := []any{&k.ID, &k.TenantID, &k.TenantSlug, &k.Name, &k.Prefix, &scopes, &k.RatePerMin, &k.Burst, &k.CreatedBy,
		&created, &expires, &revoked, &used, &k.HasCallbackSecret, &callbackSet, &prevUntil}
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
	k.CallbackSecretSetAt = parseOptTime(callbackSet)
	k.PreviousCallbackUntil = parseOptTime(prevUntil)
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

// listOrder is the key list's order: newest first.
var listOrder = store.Order{Key: "k.created_at", KeyDesc: true, ID: "k.id", IDDesc: true}

// Page returns one page of the keys of tenantIDs (nil: every tenant),
// newest first, and how many there are in all.
func Page(ctx context.Context, q store.Querier, tenantIDs []string, page store.Page) (store.Paged[Key], int, error) {
	var where []string
	var args []any
	if tenantIDs != nil {
		if len(tenantIDs) == 0 {
			return store.Paged[Key]{}, 0, nil
		}
		where = append(where, "k.tenant_id IN (?"+strings.Repeat(",?", len(tenantIDs)-1)+")")
		for _, id := range tenantIDs {
			args = append(args, id)
		}
	}
	var total int
	countWhere := ""
	if len(where) > 0 {
		countWhere = " WHERE " + strings.Join(where, " AND ")
	}
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM virtual_keys k`+countWhere, args...).Scan(&total); err != nil {
		return store.Paged[Key]{}, 0, fmt.Errorf("count keys: %w", err)
	}
	if cond, cargs := page.Where(listOrder); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	query := selectKey
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	out, err := store.Query(ctx, q, scanKey, query+" ORDER BY "+page.OrderBy(listOrder)+" LIMIT ?", append(args, page.Fetch())...)
	if err != nil {
		return store.Paged[Key]{}, 0, fmt.Errorf("list keys: %w", err)
	}
	return store.Paginate(page, out, func(k Key) store.Cursor {
		return store.Cursor{Key: store.FormatTime(k.CreatedAt), ID: k.ID}
	}), total, nil
}

// Find returns up to n keys of the given tenants (nil for all) whose name
// starts with prefix, in any case, by name; read from the lower-case name
// index.
func Find(ctx context.Context, q store.Querier, prefix string, tenantIDs []string, n int) ([]Key, error) {
	prefix = strings.ToLower(prefix)
	lo, hi := store.PrefixRange(prefix)
	if lo == "" || n <= 0 || (tenantIDs != nil && len(tenantIDs) == 0) {
		return nil, nil
	}
	where, args := "lower(k.name) >= ?", []any{lo}
	if hi != "" {
		where, args = where+" AND lower(k.name) < ?", append(args, hi)
	}
	if tenantIDs != nil {
		where += " AND k.tenant_id IN (?" + strings.Repeat(",?", len(tenantIDs)-1) + ")"
		for _, t := range tenantIDs {
			args = append(args, t)
		}
	}
	found, err := store.Query(ctx, q, scanKey, selectKey+` WHERE `+where+` ORDER BY lower(k.name), k.id LIMIT ?`, append(args, n)...)
	if err != nil {
		return nil, fmt.Errorf("find keys %q: %w", prefix, err)
	}
	out := found[:0]
	for _, k := range found {
		if strings.HasPrefix(strings.ToLower(k.Name), prefix) {
			out = append(out, k)
		}
	}
	return out, nil
}

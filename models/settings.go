package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/egress"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// What of a call's content a tenant's trace keeps.
const (
	ContentRedacted = "redacted" // prompt and completion, after the redactor
	ContentNone     = "none"     // metadata only: no prompt, no completion
)

// TenantSettings are a tenant's model settings.
type TenantSettings struct {
	Content string // ContentRedacted (the default) or ContentNone
	// OutboundRedaction replaces PII in the prompt's messages with keyed
	// tokens before the request leaves Warden.
	OutboundRedaction bool
}

// TenantSettingsOf returns a tenant's model settings (the defaults when it
// has none stored).
func TenantSettingsOf(ctx context.Context, q store.Querier, tenantID string) (TenantSettings, error) {
	s := TenantSettings{Content: ContentRedacted}
	var out int
	err := q.QueryRowContext(ctx, `SELECT content, outbound_redaction FROM model_tenant_settings WHERE tenant_id = ?`, tenantID).Scan(&s.Content, &out)
	if errors.Is(err, sql.ErrNoRows) {
		return TenantSettings{Content: ContentRedacted}, nil
	}
	if err != nil {
		return TenantSettings{}, fmt.Errorf("model settings of tenant %s: %w", tenantID, err)
	}
	s.OutboundRedaction = out == 1
	return s, nil
}

// SetTenantSettings saves a tenant's model settings with their audit event
// (model.tenant_settings), in one transaction; it reports false, and
// records nothing, when they were already so. A content setting other
// than redacted or none is a *store.ValidationError.
func SetTenantSettings(ctx context.Context, db *store.DB, actor audit.Actor, t tenants.Tenant, s TenantSettings) (bool, error) {
	tenantID := t.ID
	if s.Content != ContentRedacted && s.Content != ContentNone {
		return false, &store.ValidationError{Fields: map[string]string{"model_content": "Choose redacted or none."}}
	}
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		old, err := TenantSettingsOf(ctx, tx, tenantID)
		if err != nil {
			return err
		}
		if old == s {
			return nil
		}
		changed = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO model_tenant_settings (tenant_id, content, outbound_redaction, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (tenant_id) DO UPDATE SET content = excluded.content, outbound_redaction = excluded.outbound_redaction, updated_at = excluded.updated_at`,
			tenantID, s.Content, boolInt(s.OutboundRedaction), store.Now()); err != nil {
			return fmt.Errorf("set model settings of tenant %s: %w", tenantID, err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "model.tenant_settings", Tenant: t.Slug,
			Subject: audit.Subject{Type: "tenant", ID: tenantID},
			Details: map[string]any{"model_content": s.Content, "outbound_redaction": s.OutboundRedaction}})
		return err
	})
	return changed, err
}

// KeyLimits are a virtual key's limits on model calls; 0 is no limit.
type KeyLimits struct {
	RPM int // requests a minute
	TPM int // tokens a minute: estimated at admission, corrected when settled
}

// MaxPerMinute bounds both limits.
const MaxPerMinute = 100_000_000

// Validate returns a message per bad field.
func (l KeyLimits) Validate() map[string]string {
	errs := map[string]string{}
	if l.RPM < 0 || l.RPM > MaxPerMinute {
		errs["model_rpm"] = "Enter 0 (no limit) or a whole number of requests a minute, up to 100000000."
	}
	if l.TPM < 0 || l.TPM > MaxPerMinute {
		errs["model_tpm"] = "Enter 0 (no limit) or a whole number of tokens a minute, up to 100000000."
	}
	return errs
}

// KeyLimitsOf returns a key's model limits (none when it has none stored).
func KeyLimitsOf(ctx context.Context, q store.Querier, keyID string) (KeyLimits, error) {
	var l KeyLimits
	err := q.QueryRowContext(ctx, `SELECT rpm, tpm FROM model_key_limits WHERE key_id = ?`, keyID).Scan(&l.RPM, &l.TPM)
	if errors.Is(err, sql.ErrNoRows) {
		return KeyLimits{}, nil
	}
	if err != nil {
		return KeyLimits{}, fmt.Errorf("model limits of key %s: %w", keyID, err)
	}
	return l, nil
}

// SetKeyLimits saves a key's model limits with their audit event
// (model.key_limits); false, and nothing recorded, when unchanged.
func SetKeyLimits(ctx context.Context, db *store.DB, actor audit.Actor, k keys.Key, l KeyLimits) (bool, error) {
	keyID := k.ID
	if errs := l.Validate(); len(errs) > 0 {
		return false, &store.ValidationError{Fields: errs}
	}
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		old, err := KeyLimitsOf(ctx, tx, keyID)
		if err != nil {
			return err
		}
		if old == l {
			return nil
		}
		changed = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO model_key_limits (key_id, tenant_id, rpm, tpm, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (key_id) DO UPDATE SET rpm = excluded.rpm, tpm = excluded.tpm, updated_at = excluded.updated_at`,
			keyID, k.TenantID, l.RPM, l.TPM, store.Now()); err != nil {
			return fmt.Errorf("set model limits of key %s: %w", keyID, err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "model.key_limits", Tenant: k.TenantSlug,
			Subject: audit.Subject{Type: "key", ID: keyID}, Details: map[string]any{"name": k.Name, "prefix": k.Prefix, "rpm": l.RPM, "tpm": l.TPM}})
		return err
	})
	return changed, err
}

// AliasSettings are an alias's routing options.
type AliasSettings struct {
	Alias string
	// Cascade tries the alias's cheapest deployment first and escalates to
	// the next dearer one when the answer fails the call's check (the JSON
	// schema of response_format; otherwise an empty or refused answer).
	// Streams are never cascaded.
	Cascade bool
	// CacheTTL (seconds; 0 is off) keeps answers to deterministic calls
	// (temperature 0, not streamed), per tenant.
	CacheTTL int
}

// MaxCacheTTL bounds an alias's cache TTL (seconds): a day.
const MaxCacheTTL = 86400

// AliasSettingsOf returns an alias's options (off when none are stored).
func AliasSettingsOf(ctx context.Context, q store.Querier, alias string) (AliasSettings, error) {
	s := AliasSettings{Alias: alias}
	var cascade int
	err := q.QueryRowContext(ctx, `SELECT cascade, cache_ttl_s FROM model_aliases WHERE alias = ?`, alias).Scan(&cascade, &s.CacheTTL)
	if errors.Is(err, sql.ErrNoRows) {
		return AliasSettings{Alias: alias}, nil
	}
	if err != nil {
		return AliasSettings{}, fmt.Errorf("settings of alias %s: %w", alias, err)
	}
	s.Cascade = cascade == 1
	return s, nil
}

// AllAliasSettings returns the stored options of every alias by name.
func AllAliasSettings(ctx context.Context, q store.Querier) (map[string]AliasSettings, error) {
	all, err := store.Query(ctx, q, func(r store.Scanner) (AliasSettings, error) {
		var s AliasSettings
		var cascade int
		if err := r.Scan(&s.Alias, &cascade, &s.CacheTTL); err != nil {
			return AliasSettings{}, err
		}
		s.Cascade = cascade == 1
		return s, nil
	}, `SELECT alias, cascade, cache_ttl_s FROM model_aliases`)
	if err != nil {
		return nil, fmt.Errorf("alias settings: %w", err)
	}
	out := make(map[string]AliasSettings, len(all))
	for _, s := range all {
		out[s.Alias] = s
	}
	return out, nil
}

// SetAliasSettings saves an alias's options with their audit event
// (model.alias); false, and nothing recorded, when unchanged. The alias
// must have a deployment.
func SetAliasSettings(ctx context.Context, db *store.DB, actor audit.Actor, s AliasSettings) (bool, error) {
	if !nameRe.MatchString(s.Alias) {
		return false, &store.ValidationError{Fields: map[string]string{"alias": "Choose an alias."}}
	}
	if s.CacheTTL < 0 || s.CacheTTL > MaxCacheTTL {
		return false, &store.ValidationError{Fields: map[string]string{"cache_ttl": "Enter 0 (off) or a whole number of seconds up to 86400 (a day)."}}
	}
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM model_deployments WHERE alias = ?`, s.Alias).Scan(&n); err != nil {
			return fmt.Errorf("set alias settings: %w", err)
		}
		if n == 0 {
			return &store.ValidationError{Fields: map[string]string{"alias": "No deployment has the alias " + s.Alias + "."}}
		}
		old, err := AliasSettingsOf(ctx, tx, s.Alias)
		if err != nil {
			return err
		}
		if old == s {
			return nil
		}
		changed = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO model_aliases (alias, cascade, cache_ttl_s, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (alias) DO UPDATE SET cascade = excluded.cascade, cache_ttl_s = excluded.cache_ttl_s, updated_at = excluded.updated_at`,
			s.Alias, boolInt(s.Cascade), s.CacheTTL, store.Now()); err != nil {
			return fmt.Errorf("set alias settings: %w", err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "model.alias", Subject: audit.Subject{Type: "model_alias", ID: s.Alias},
			Details: map[string]any{"cascade": s.Cascade, "cache_ttl_s": s.CacheTTL}})
		return err
	})
	return changed, err
}

// callOptions reads, in one query, what a call needs besides its
// deployments: the alias's options, the tenant's settings, the key's
// limits (each its default when none is stored) and the allowed hosts
// (one per line).
func callOptions(ctx context.Context, q store.Querier, alias, tenantID, keyID string) (AliasSettings, TenantSettings, KeyLimits, string, error) {
	var o callOpts
	err := q.QueryRowContext(ctx, `SELECT `+callOptionsColumns, o.args(alias, tenantID, keyID)...).Scan(o.dest()...)
	if err != nil {
		return AliasSettings{}, TenantSettings{}, KeyLimits{}, "", fmt.Errorf("model call options: %w", err)
	}
	a, s, l, hosts := o.values(alias)
	return a, s, l, hosts, nil
}

// callOptionsColumns are callOptions' values as columns of a select,
// with the parameters callOpts.args gives, scanned into callOpts.dest
// (forCall reads them with the deployments, in one statement).
const callOptionsColumns = `
		(SELECT cascade FROM model_aliases WHERE alias = ?), (SELECT cache_ttl_s FROM model_aliases WHERE alias = ?),
		(SELECT content FROM model_tenant_settings WHERE tenant_id = ?), (SELECT outbound_redaction FROM model_tenant_settings WHERE tenant_id = ?),
		(SELECT rpm FROM model_key_limits WHERE key_id = ?), (SELECT tpm FROM model_key_limits WHERE key_id = ?),
		(SELECT allowed_hosts FROM model_gateway_settings WHERE id = 1)`

// callOpts is a row of callOptionsColumns.
type callOpts struct {
	cascade, ttl, outbound, rpm, tpm sql.NullInt64
	content, hosts                   sql.NullString
}

func (o *callOpts) args(alias, tenantID, keyID string) []any {
	return []any{alias, alias, tenantID, tenantID, keyID, keyID}
}

func (o *callOpts) dest() []any {
	return []any{&o.cascade, &o.ttl, &o.content, &o.outbound, &o.rpm, &o.tpm, &o.hosts}
}

// values are the alias's options, the tenant's settings, the key's
// limits (each its default when none is stored) and the allowed hosts.
func (o *callOpts) values(alias string) (AliasSettings, TenantSettings, KeyLimits, string) {
	s := TenantSettings{Content: ContentRedacted, OutboundRedaction: o.outbound.Int64 == 1}
	if o.content.Valid {
		s.Content = o.content.String
	}
	return AliasSettings{Alias: alias, Cascade: o.cascade.Int64 == 1, CacheTTL: int(o.ttl.Int64)}, s,
		KeyLimits{RPM: int(o.rpm.Int64), TPM: int(o.tpm.Int64)}, o.hosts.String
}

// MaxAllowedHosts bounds the allowed hosts list.
const MaxAllowedHosts = 100

var hostRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// AllowedHosts returns the hosts model deployments may reach although
// they are, or resolve to, loopback, private, link-local or other
// internal addresses (on-premises model servers), sorted. Every other
// host is refused at connect time when its address is internal (package
// egress).
func AllowedHosts(ctx context.Context, q store.Querier) ([]string, error) {
	var hosts string
	err := q.QueryRowContext(ctx, `SELECT allowed_hosts FROM model_gateway_settings WHERE id = 1`).Scan(&hosts)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("allowed model hosts: %w", err)
	}
	return strings.Fields(hosts), nil
}

// ParseHosts reads a list of hosts (separated by spaces, commas or lines)
// as SetAllowedHosts stores them: lower-case, without brackets or a
// trailing dot, sorted, each once. A host with a scheme, port, path or
// wildcard, or that is no DNS name or IP address, is a
// *store.ValidationError naming it.
func ParseHosts(text string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
		h := egress.NormalHost(f)
		if _, err := netip.ParseAddr(h); err != nil && (len(h) > 253 || !hostRe.MatchString(h)) {
			shown := f
			if len(shown) > 80 {
				shown = shown[:80] + "…"
			}
			return nil, &store.ValidationError{Fields: map[string]string{"allowed_hosts": fmt.Sprintf("%q is not a host: enter names such as llm.corp.internal or addresses such as 10.0.0.5, without scheme, port or path.", shown)}}
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	if len(out) > MaxAllowedHosts {
		return nil, &store.ValidationError{Fields: map[string]string{"allowed_hosts": fmt.Sprintf("List at most %d hosts.", MaxAllowedHosts)}}
	}
	slices.Sort(out)
	return out, nil
}

// SetAllowedHosts replaces the allowed hosts (AllowedHosts) with hosts,
// with its audit event (model.allowed_hosts: the list, and what was added
// and removed), in one transaction; false, and nothing recorded, when the
// list is unchanged. A bad host is a *store.ValidationError and changes
// nothing. Every replica's gateway uses the new list from its next call.
func SetAllowedHosts(ctx context.Context, db *store.DB, actor audit.Actor, hosts []string) (bool, error) {
	return changeAllowedHosts(ctx, db, actor, func([]string) []string { return hosts })
}

// AllowHosts adds hosts to the allowed hosts, as SetAllowedHosts does.
func AllowHosts(ctx context.Context, db *store.DB, actor audit.Actor, hosts ...string) (bool, error) {
	return changeAllowedHosts(ctx, db, actor, func(old []string) []string { return append(slices.Clone(old), hosts...) })
}

// changeAllowedHosts stores next(the list as stored) in one transaction,
// so that changes made at once all count.
func changeAllowedHosts(ctx context.Context, db *store.DB, actor audit.Actor, next func(old []string) []string) (bool, error) {
	if _, err := ParseHosts(strings.Join(next(nil), "\n")); err != nil {
		return false, err
	}
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		changed = false
		// One change at a time on PostgreSQL too: two added at once both
		// stay.
		if err := store.Serialize(ctx, tx, "model_gateway_settings"); err != nil {
			return err
		}
		old, err := AllowedHosts(ctx, tx)
		if err != nil {
			return err
		}
		list, err := ParseHosts(strings.Join(next(old), "\n"))
		if err != nil {
			return err
		}
		if slices.Equal(old, list) {
			return nil
		}
		changed = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO model_gateway_settings (id, allowed_hosts, updated_at) VALUES (1, ?, ?)
			ON CONFLICT (id) DO UPDATE SET allowed_hosts = excluded.allowed_hosts, updated_at = excluded.updated_at`,
			strings.Join(list, "\n"), store.Now()); err != nil {
			return fmt.Errorf("set allowed model hosts: %w", err)
		}
		var added, removed []string
		for _, h := range list {
			if !slices.Contains(old, h) {
				added = append(added, h)
			}
		}
		for _, h := range old {
			if !slices.Contains(list, h) {
				removed = append(removed, h)
			}
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "model.allowed_hosts", Subject: audit.Subject{Type: "model_gateway", ID: "allowed_hosts"},
			Details: map[string]any{"hosts": list, "added": added, "removed": removed}})
		return err
	})
	return changed, err
}

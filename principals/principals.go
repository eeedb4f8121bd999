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
	"slices"
	"strings"

	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Principal is a console user as stored.
type Principal struct {
	ID, Issuer, Subject, Email, Name string
	Roles, Tenants                   []string
	Groups                           []string // the identity provider's groups claim at the last sign-in
	FirstSeenAt, LastLoginAt         string
}

// Upsert records a login of (issuer, subject): it creates the
// principal on first sight, otherwise refreshes name, e-mail, roles and
// tenant scope. It returns the principal's id.
func Upsert(ctx context.Context, tx *store.Tx, p Principal) (string, error) {
	roles, _ := json.Marshal(p.Roles)
	tenants, _ := json.Marshal(p.Tenants)
	groups, _ := json.Marshal(p.Groups)
	if p.Groups == nil {
		groups = []byte("[]")
	}
	now := store.Now()
	var id string
	err := tx.QueryRowContext(ctx, `
		INSERT INTO principals (id, issuer, subject, email, name, roles, tenants, idp_groups, first_seen_at, last_login_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (issuer, subject) DO UPDATE SET
			email = excluded.email, name = excluded.name, roles = excluded.roles,
			tenants = excluded.tenants, idp_groups = excluded.idp_groups, last_login_at = excluded.last_login_at
		RETURNING id`,
		store.NewID(), p.Issuer, p.Subject, p.Email, p.Name, string(roles), string(tenants), string(groups), now, now).Scan(&id)
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

// Find returns up to n people whose name or e-mail starts with prefix, in
// any case ("ali" finds Alice Approver and alice@example.com), by name.
// Both are read from their lower-case indexes: the search costs the same
// however many people have signed in.
func Find(ctx context.Context, q store.Querier, prefix string, n int) ([]Principal, error) {
	prefix = strings.ToLower(prefix)
	lo, hi := store.PrefixRange(prefix)
	if lo == "" || n <= 0 {
		return nil, nil
	}
	var out []Principal
	seen := map[string]bool{}
	for _, col := range []string{"lower(name)", "lower(email)"} {
		cond, args := col+" >= ?", []any{lo}
		if hi != "" {
			cond, args = cond+" AND "+col+" < ?", append(args, hi)
		}
		rows, err := store.Query(ctx, q, func(s store.Scanner) (Principal, error) {
			var p Principal
			err := s.Scan(&p.ID, &p.Email, &p.Name)
			return p, err
		}, `SELECT id, email, name FROM principals WHERE `+cond+` ORDER BY `+col+` LIMIT ?`, append(args, n)...)
		if err != nil {
			return nil, fmt.Errorf("find people %q: %w", prefix, err)
		}
		for _, p := range rows {
			match := strings.HasPrefix(strings.ToLower(p.Name), prefix) || strings.HasPrefix(strings.ToLower(p.Email), prefix)
			if match && !seen[p.ID] && len(out) < n {
				seen[p.ID] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Audience names people to reach: principals by e-mail or subject
// (People), by id (IDs), and the members of identity-provider groups as
// their last sign-in reported them (Groups).
type Audience struct {
	People []string
	IDs    []string
	Groups []string
}

// Addresses are the e-mail addresses of the principals aud names whose
// tenant scope covers tenantSlug ("" for any tenant: an alert of the
// whole installation), sorted and without repeats. A person without an
// e-mail address, or who cannot see the tenant, is left out: a message
// about a tenant reaches only people who may open its page.
func Addresses(ctx context.Context, q store.Querier, aud Audience, tenantSlug string) ([]string, error) {
	var conds []string
	var args []any
	for _, p := range aud.People {
		conds = append(conds, "lower(email) = ?", "subject = ?")
		args = append(args, strings.ToLower(p), p)
	}
	for _, id := range aud.IDs {
		conds = append(conds, "id = ?")
		args = append(args, id)
	}
	for _, g := range aud.Groups {
		// Narrowed by the index-free LIKE, then checked exactly below.
		conds = append(conds, `idp_groups LIKE ? ESCAPE '\'`)
		args = append(args, "%"+likeEscape(g)+"%")
	}
	if len(conds) == 0 {
		return nil, nil
	}
	type row struct {
		id, subject, email, tenants, groups string
	}
	rows, err := store.Query(ctx, q, func(s store.Scanner) (row, error) {
		var r row
		err := s.Scan(&r.id, &r.subject, &r.email, &r.tenants, &r.groups)
		return r, err
	}, `SELECT id, subject, email, tenants, idp_groups FROM principals WHERE email <> '' AND (`+strings.Join(conds, " OR ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("addresses: %w", err)
	}
	var out []string
	for _, r := range rows {
		var tenants, groups []string
		_ = json.Unmarshal([]byte(r.tenants), &tenants)
		_ = json.Unmarshal([]byte(r.groups), &groups)
		named := slices.Contains(aud.IDs, r.id) || slices.Contains(aud.People, r.subject) ||
			slices.ContainsFunc(aud.People, func(p string) bool { return strings.EqualFold(p, r.email) })
		for _, g := range aud.Groups {
			named = named || slices.Contains(groups, g)
		}
		if !named || (tenantSlug != "" && !slices.Contains(tenants, identity.AllTenants) && !slices.Contains(tenants, tenantSlug)) {
			continue
		}
		if !slices.Contains(out, r.email) {
			out = append(out, r.email)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Known reports whether someone with this e-mail address or subject has
// signed in.
func Known(ctx context.Context, q store.Querier, person string) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM principals WHERE lower(email) = ? OR subject = ?`,
		strings.ToLower(person), person).Scan(&n); err != nil {
		return false, fmt.Errorf("find %q: %w", person, err)
	}
	return n > 0, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// GroupsOf is the identity provider's groups claim at id's last sign-in
// (none for a principal never seen).
func GroupsOf(ctx context.Context, q store.Querier, id string) ([]string, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT idp_groups FROM principals WHERE id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("groups of principal %s: %w", id, err)
	}
	var groups []string
	if err := json.Unmarshal([]byte(raw), &groups); err != nil {
		return nil, fmt.Errorf("groups of principal %s: %w", id, err)
	}
	return groups, nil
}

// Package mcpservers makes Warden an MCP gateway: agents reach the tools of
// upstream MCP servers through Warden's /mcp door, and every call passes
// Warden's scopes, classification, kill switch, argument schema,
// redaction and audit before it reaches the upstream.
//
// An admin registers an upstream (Create: name, Streamable HTTP URL,
// bearer token sealed at rest, timeout, owner), and Warden discovers its
// tools (Gateway.Discover: tools/list, every page). A discovered tool is
// unclassified, and refused, until an admin classifies it (Classify:
// impact low or high, reversible or not); a tool whose name, description
// or input schema changes (its digest) returns to unclassified, and the
// change is audited, because a description is prompt surface. A server
// switched off (SetEnabled) refuses every call to its tools.
//
// Agents then call /mcp with a virtual key: the handler authenticates
// the key, puts the caller in the request's context (WithCaller) and
// serves Gateway.Handler, which offers the tools the key's scopes allow
// (mcp:SERVER/TOOL, or mcp:SERVER/*) as SERVER__TOOL. A call
// (Gateway.call) checks everything again, forwards low-impact calls with
// the Go SDK's client and records each in the audit chain, its
// arguments and result redacted.
package mcpservers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
)

// Server is one upstream MCP server.
type Server struct {
	ID        string
	Name      string // [a-z0-9_-], unique: the SERVER of scopes and tool names
	URL       string // the Streamable HTTP endpoint, such as https://mcp.example.com/mcp
	HasToken  bool   // a bearer token is sealed; it is never shown again
	Timeout   time.Duration
	Owner     string // who answers for it (free text: a team, an e-mail)
	Enabled   bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// DiscoveredAt is the last successful discovery (zero: never);
	// DiscoveryError the last discovery's failure, "" when it succeeded.
	DiscoveredAt   time.Time
	DiscoveryError string
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,47}$`)

// Validate returns one message per bad field, keyed by form field.
func (s Server) Validate() map[string]string {
	errs := map[string]string{}
	if !nameRe.MatchString(s.Name) || strings.Contains(s.Name, "__") {
		errs["name"] = "Use 1–48 lower-case letters, digits, dashes or underscores (not two underscores in a row), starting with a letter or digit."
	}
	if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		errs["url"] = "Enter the server's Streamable HTTP URL, such as https://mcp.example.com/mcp."
	}
	if s.Timeout < 100*time.Millisecond || s.Timeout > 10*time.Minute {
		errs["timeout"] = "The timeout must be between 100 ms and 10 minutes."
	}
	if len(s.Owner) > 200 {
		errs["owner"] = "Keep the owner under 200 characters."
	}
	return errs
}

// ErrExists means a server of that name exists.
var ErrExists = problem.Conflict("mcp_server_exists", "There is already an MCP server of that name.")

// ErrNotFound means no server has that name.
var ErrNotFound = problem.NotFound("mcp_server_not_found", "There is no such MCP server.")

const columns = `id, name, url, token_sealed, timeout_ms, owner, enabled, created_at, updated_at, discovered_at, discovery_error`

func scan(row store.Scanner) (Server, string, error) {
	var s Server
	var sealed, created, updated, discovered string
	var timeoutMS int64
	var enabled int
	if err := row.Scan(&s.ID, &s.Name, &s.URL, &sealed, &timeoutMS, &s.Owner, &enabled, &created, &updated, &discovered, &s.DiscoveryError); err != nil {
		return Server{}, "", err
	}
	s.HasToken, s.Enabled, s.Timeout = sealed != "", enabled == 1, time.Duration(timeoutMS)*time.Millisecond
	s.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	s.UpdatedAt, _ = time.Parse(time.RFC3339Nano, updated)
	s.DiscoveredAt, _ = time.Parse(time.RFC3339Nano, discovered)
	return s, sealed, nil
}

func scanServer(row store.Scanner) (Server, error) {
	s, _, err := scan(row)
	return s, err
}

// List returns every server by name, without tokens.
func List(ctx context.Context, q store.Querier) ([]Server, error) {
	out, err := store.Query(ctx, q, scanServer, `SELECT `+columns+` FROM mcp_servers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list MCP servers: %w", err)
	}
	return out, nil
}

// Get loads one server by name, without its token.
func Get(ctx context.Context, q store.Querier, name string) (Server, error) {
	s, err := store.Get(ctx, q, scanServer, `SELECT `+columns+` FROM mcp_servers WHERE name = ?`, name)
	if errors.Is(err, store.ErrNotFound) {
		return Server{}, ErrNotFound
	}
	return s, err
}

// withToken loads one server by name with its bearer token opened ("" when
// it has none).
func withToken(ctx context.Context, q store.Querier, sealer *seal.Sealer, name string) (Server, string, error) {
	type sealedServer struct {
		s      Server
		sealed string
	}
	got, err := store.Get(ctx, q, func(r store.Scanner) (sealedServer, error) {
		s, sealed, err := scan(r)
		return sealedServer{s, sealed}, err
	}, `SELECT `+columns+` FROM mcp_servers WHERE name = ?`, name)
	if errors.Is(err, store.ErrNotFound) {
		return Server{}, "", ErrNotFound
	}
	if err != nil {
		return Server{}, "", err
	}
	if got.sealed == "" {
		return got.s, "", nil
	}
	if sealer == nil {
		return Server{}, "", errors.New("no sealer to open an MCP server's token")
	}
	tok, err := sealer.Open(got.sealed, got.s.ID)
	if err != nil {
		return Server{}, "", fmt.Errorf("open the token of MCP server %s: %w", name, err)
	}
	return got.s, string(tok), nil
}

func details(s Server) map[string]any {
	return map[string]any{"url": s.URL, "timeout_ms": s.Timeout.Milliseconds(), "owner": s.Owner, "enabled": s.Enabled}
}

// Create adds a server with its bearer token (may be "") sealed, and
// records who added it (never the token), in one transaction. An invalid
// server is a *store.ValidationError. Its tools are discovered separately
// (Gateway.Discover).
func Create(ctx context.Context, db *store.DB, sealer *seal.Sealer, actor audit.Actor, s Server, token string) (Server, error) {
	if errs := s.Validate(); len(errs) > 0 {
		return Server{}, &store.ValidationError{Fields: errs}
	}
	if sealer == nil {
		return Server{}, errors.New("create MCP server: no sealer for its token")
	}
	now := time.Now().UTC()
	s.ID, s.CreatedAt, s.UpdatedAt, s.HasToken = store.NewID(), now, now, token != ""
	sealed := ""
	if token != "" {
		sealed = sealer.Seal([]byte(token), s.ID)
	}
	err := db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := Get(ctx, tx, s.Name); err == nil {
			return ErrExists
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO mcp_servers (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', '')`,
			s.ID, s.Name, s.URL, sealed, s.Timeout.Milliseconds(), s.Owner, boolInt(s.Enabled), store.FormatTime(now), store.FormatTime(now)); err != nil {
			return fmt.Errorf("create MCP server: %w", err)
		}
		det := details(s)
		det["token_set"] = s.HasToken
		_, err := audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "mcp.server_create", Subject: audit.Subject{Type: "mcp_server", ID: s.Name}, Details: det})
		return err
	})
	return s, err
}

// Update saves a server's URL, timeout and owner (not its switch:
// SetEnabled) and returns what changed; a new token replaces the sealed
// one, "" keeps it. Saving the same settings changes and records nothing.
func Update(ctx context.Context, db *store.DB, sealer *seal.Sealer, actor audit.Actor, s Server, token string) (changed []string, err error) {
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = nil // a retried run starts afresh (store.Transact)
		old, err := Get(ctx, tx, s.Name)
		if err != nil {
			return err
		}
		s.ID, s.Enabled = old.ID, old.Enabled
		if errs := s.Validate(); len(errs) > 0 {
			return &store.ValidationError{Fields: errs}
		}
		was, now := details(old), details(s)
		for _, f := range []string{"url", "timeout_ms", "owner"} {
			if fmt.Sprint(was[f]) != fmt.Sprint(now[f]) {
				changed = append(changed, f)
			}
		}
		if token != "" {
			if sealer == nil {
				return errors.New("update MCP server: no sealer for its token")
			}
			changed = append(changed, "token")
			if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET token_sealed = ? WHERE id = ?`, sealer.Seal([]byte(token), s.ID), s.ID); err != nil {
				return fmt.Errorf("update MCP server: %w", err)
			}
		}
		if len(changed) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET url = ?, timeout_ms = ?, owner = ?, updated_at = ? WHERE id = ?`,
			s.URL, s.Timeout.Milliseconds(), s.Owner, store.Now(), s.ID); err != nil {
			return fmt.Errorf("update MCP server: %w", err)
		}
		now["changed"] = changed
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "mcp.server_update", Subject: audit.Subject{Type: "mcp_server", ID: s.Name}, Details: now})
		return err
	})
	return changed, err
}

// SetEnabled is a server's kill switch, with its audit event: a server
// switched off refuses every call to its tools (a tool error naming the
// switch) from the next call on. Setting the state it already has records
// nothing.
func SetEnabled(ctx context.Context, db *store.DB, actor audit.Actor, name string, enabled bool) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		s, err := Get(ctx, tx, name)
		if err != nil {
			return err
		}
		if s.Enabled == enabled {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET enabled = ?, updated_at = ? WHERE id = ?`, boolInt(enabled), store.Now(), s.ID); err != nil {
			return fmt.Errorf("switch MCP server: %w", err)
		}
		verb := "mcp.server_disable"
		if enabled {
			verb = "mcp.server_enable"
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: verb, Subject: audit.Subject{Type: "mcp_server", ID: name},
			Details: map[string]any{"enabled": enabled}})
		return err
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullString(s sql.NullString) string {
	if s.Valid {
		return s.String
	}
	return ""
}

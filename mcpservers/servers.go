// Package mcpservers makes Warden an MCP gateway: agents reach the tools of
// upstream MCP servers through Warden's /mcp door, and every call passes
// Warden's scopes, classification, kill switch, argument schema,
// redaction and audit before it reaches the upstream.
//
// An admin registers an upstream (Create: name, Streamable HTTP URL,
// bearer token sealed at rest, timeout, owner; Edit changes them and
// replaces the token or the extra headers, sealed too), and Warden
// discovers its tools (Gateway.Discover: tools/list, every page). A
// discovered tool is unclassified, and refused, until an admin classifies
// it (Classify: impact low or high, reversible or not, the arguments its
// money is in, its cost a call); a tool whose name, description or input
// schema changes (its digest) returns to unclassified, and the change is
// audited, because a description is prompt surface. A server switched off
// (SwitchServer) refuses every call to its tools, a tool switched off
// (SetToolEnabled) every call to it; both ask for a reason.
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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

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
// it has none). withCredentials also opens its extra headers.
func withToken(ctx context.Context, q store.Querier, sealer *seal.Sealer, name string) (Server, string, error) {
	s, cred, err := withCredentials(ctx, q, sealer, name)
	return s, cred.Token, err
}

// credentials are what Warden sends an upstream besides the request: the
// bearer token ("" for none) and the extra headers (nil for none), both
// opened from their seals. They are never logged, shown or audited.
type credentials struct {
	Token   string
	Headers map[string]string
}

// headersAAD binds a server's sealed headers to the server and to their
// column, so neither another server's seal nor its token's can stand in.
func headersAAD(id string) string { return id + "/headers" }

// withCredentials loads one server by name with its token and extra
// headers opened: what a connection to the upstream needs.
func withCredentials(ctx context.Context, q store.Querier, sealer *seal.Sealer, name string) (Server, credentials, error) {
	type sealedServer struct {
		s              Server
		token, headers string
	}
	got, err := store.Get(ctx, q, func(r store.Scanner) (sealedServer, error) {
		s, sealed, err := scan(r)
		return sealedServer{s: s, token: sealed}, err
	}, `SELECT `+columns+` FROM mcp_servers WHERE name = ?`, name)
	if errors.Is(err, store.ErrNotFound) {
		return Server{}, credentials{}, ErrNotFound
	}
	if err != nil {
		return Server{}, credentials{}, err
	}
	if err := q.QueryRowContext(ctx, `SELECT headers_sealed FROM mcp_servers WHERE id = ?`, got.s.ID).Scan(&got.headers); err != nil {
		return Server{}, credentials{}, fmt.Errorf("read the headers of MCP server %s: %w", name, err)
	}
	var cred credentials
	if got.token == "" && got.headers == "" {
		return got.s, cred, nil
	}
	if sealer == nil {
		return Server{}, credentials{}, errors.New("no sealer to open an MCP server's credentials")
	}
	if got.token != "" {
		tok, err := sealer.Open(got.token, got.s.ID)
		if err != nil {
			return Server{}, credentials{}, fmt.Errorf("open the token of MCP server %s: %w", name, err)
		}
		cred.Token = string(tok)
	}
	if got.headers != "" {
		b, err := sealer.Open(got.headers, headersAAD(got.s.ID))
		if err != nil {
			return Server{}, credentials{}, fmt.Errorf("open the headers of MCP server %s: %w", name, err)
		}
		if err := json.Unmarshal(b, &cred.Headers); err != nil {
			return Server{}, credentials{}, fmt.Errorf("the headers of MCP server %s: %w", name, err)
		}
	}
	return got.s, cred, nil
}

// HeaderNames returns the names of a server's extra headers, sorted: what
// the console shows of them (their values are never shown again).
func HeaderNames(ctx context.Context, q store.Querier, sealer *seal.Sealer, name string) ([]string, error) {
	_, cred, err := withCredentials(ctx, q, sealer, name)
	if err != nil {
		return nil, err
	}
	return sortedNames(cred.Headers), nil
}

func sortedNames(h map[string]string) []string {
	out := make([]string, 0, len(h))
	for k := range h {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reservedHeaders are the headers Warden or the MCP transport sets on
// every request to an upstream: an extra header may not replace them (the
// token has its own field).
var reservedHeaders = []string{"Authorization", "Host", "Content-Type", "Content-Length", "Content-Encoding", "Accept", "Accept-Encoding",
	"Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Cookie",
	"Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"}

// Limits of a server's extra headers.
const (
	maxHeaders     = 20
	maxHeaderValue = 4096
)

// ParseHeaders reads extra request headers typed one a line as
// "Name: value" (blank lines skipped), names in their canonical form. It
// refuses a malformed line, a name given twice, a header Warden or the
// transport sets itself (Authorization: use the token), a value with
// control characters, and more than 20 headers; the message says which
// line and why, without repeating a value.
func ParseHeaders(text string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		n := i + 1
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || name == "":
			return nil, fmt.Errorf("line %d: write each header as Name: value", n)
		case !validHeaderName(name):
			return nil, fmt.Errorf("line %d: %q is not a header name (letters, digits and - only)", n, name)
		}
		name = http.CanonicalHeaderKey(name)
		switch {
		case slices.Contains(reservedHeaders, name):
			if name == "Authorization" {
				return nil, fmt.Errorf("line %d: Authorization is set by Warden from the bearer token; put the token in its own field", n)
			}
			return nil, fmt.Errorf("line %d: %s is set by Warden or the MCP transport and cannot be replaced", n, name)
		case value == "":
			return nil, fmt.Errorf("line %d: %s has no value", n, name)
		case !validHeaderValue(value):
			return nil, fmt.Errorf("line %d: the value of %s has control characters", n, name)
		case len(value) > maxHeaderValue:
			return nil, fmt.Errorf("line %d: the value of %s is longer than %d bytes", n, name, maxHeaderValue)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("line %d: %s is given twice", n, name)
		}
		out[name] = value
		if len(out) > maxHeaders {
			return nil, fmt.Errorf("at most %d extra headers", maxHeaders)
		}
	}
	return out, nil
}

func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return s != ""
}

func validHeaderValue(s string) bool {
	for _, r := range s {
		if r < ' ' && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
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
	return Edit(ctx, db, sealer, actor, s, Secrets{Token: token})
}

// Secrets are the sealed parts of an edit: what is given replaces what is
// sealed, what is not given is kept.
type Secrets struct {
	Token       string // a new bearer token; "" keeps the sealed one
	RemoveToken bool   // forget the token (when Token is "")
	// Headers, when not nil, replace the extra headers (ParseHeaders);
	// an empty map removes them. nil keeps them.
	Headers map[string]string
}

// Edit saves a server's URL, timeout and owner and replaces the secrets
// given (sealed, bound to the server), in one transaction with its audit
// event (mcp.server_update: the settings, what changed, and the extra
// headers' names — never a token or a header's value). It returns what
// changed; saving the same settings changes and records nothing.
func Edit(ctx context.Context, db *store.DB, sealer *seal.Sealer, actor audit.Actor, s Server, sec Secrets) (changed []string, err error) {
	for name := range sec.Headers {
		if _, err := ParseHeaders(name + ": " + sec.Headers[name]); err != nil {
			return nil, &store.ValidationError{Fields: map[string]string{"headers": err.Error()}}
		}
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = nil // a retried run starts afresh (store.Transact)
		old, err := Get(ctx, tx, s.Name)
		if err != nil {
			return err
		}
		_, cred, err := withCredentials(ctx, tx, sealer, s.Name)
		if err != nil && sec.Headers == nil {
			return err // the headers are kept, but cannot be opened to name them
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
		if (sec.Token != "" || sec.Headers != nil) && sealer == nil {
			return errors.New("update MCP server: no sealer for its credentials")
		}
		switch {
		case sec.Token != "":
			changed = append(changed, "token")
			if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET token_sealed = ? WHERE id = ?`, sealer.Seal([]byte(sec.Token), s.ID), s.ID); err != nil {
				return fmt.Errorf("update MCP server: %w", err)
			}
		case sec.RemoveToken && old.HasToken:
			changed = append(changed, "token")
			if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET token_sealed = '' WHERE id = ?`, s.ID); err != nil {
				return fmt.Errorf("update MCP server: %w", err)
			}
		}
		names := sortedNames(cred.Headers)
		if sec.Headers != nil && (len(sec.Headers) > 0 || len(cred.Headers) > 0) {
			changed = append(changed, "headers")
			names = sortedNames(sec.Headers)
			sealed := ""
			if len(sec.Headers) > 0 {
				b, err := json.Marshal(sec.Headers)
				if err != nil {
					return err
				}
				sealed = sealer.Seal(b, headersAAD(s.ID))
			}
			if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET headers_sealed = ? WHERE id = ?`, sealed, s.ID); err != nil {
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
		now["token_set"] = sec.Token != "" || (old.HasToken && !sec.RemoveToken)
		now["header_names"] = names
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "mcp.server_update", Subject: audit.Subject{Type: "mcp_server", ID: s.Name}, Details: now})
		return err
	})
	return changed, err
}

// ErrSwitchReasonRequired refuses switching an MCP server or tool off
// without saying why.
var ErrSwitchReasonRequired = problem.Unprocessable("reason_required", "Say why it is switched off: the reason goes into the audit trail and tells whoever switches it back on.")

// MaxSwitchReason bounds the reason kept for a switch.
const MaxSwitchReason = 500

func checkReason(enabled bool, reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if !enabled && reason == "" {
		return "", ErrSwitchReasonRequired
	}
	if utf8.RuneCountInString(reason) > MaxSwitchReason {
		return "", problem.Unprocessable("reason_too_long", fmt.Sprintf("Keep the reason to %d characters.", MaxSwitchReason))
	}
	if enabled {
		reason = ""
	}
	return reason, nil
}

// SetEnabled is a server's kill switch without a reason (tests and
// programs; people use SwitchServer, which asks for one).
func SetEnabled(ctx context.Context, db *store.DB, actor audit.Actor, name string, enabled bool) error {
	_, err := switchServer(ctx, db, actor, name, enabled, "")
	return err
}

// SwitchServer is a server's kill switch, the one on-call presses: a
// server switched off refuses every call to its tools (a tool error naming
// the switch) from the next call on. Switching off needs a reason, kept
// in the audit event (mcp.server_disable; mcp.server_enable switching on).
// It reports whether anything changed: setting the state it already has
// records nothing, so a second press is harmless.
func SwitchServer(ctx context.Context, db *store.DB, actor audit.Actor, name string, enabled bool, reason string) (changed bool, err error) {
	if reason, err = checkReason(enabled, reason); err != nil {
		return false, err
	}
	return switchServer(ctx, db, actor, name, enabled, reason)
}

func switchServer(ctx context.Context, db *store.DB, actor audit.Actor, name string, enabled bool, reason string) (changed bool, err error) {
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false
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
		det := map[string]any{"enabled": enabled}
		if reason != "" {
			det["reason"] = reason
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: verb, Subject: audit.Subject{Type: "mcp_server", ID: name}, Details: det})
		return err
	})
	return changed, err
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

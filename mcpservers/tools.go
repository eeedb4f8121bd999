package mcpservers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// Impact classes of an upstream tool. "" is unclassified: refused.
const (
	ImpactLow  = "low"  // forwarded at once
	ImpactHigh = "high" // needs an approval (not yet through /mcp: refused)
)

// Tool is one tool an upstream server listed.
type Tool struct {
	ServerID    string
	Server      string // the server's name
	Name        string // as the upstream names it
	Description string
	InputSchema json.RawMessage
	// Digest is the sha256 (hex) of the canonical JSON of name,
	// description and input schema: a classification holds for one digest.
	Digest string
	// Impact is ImpactLow, ImpactHigh or "" (unclassified); Reversible is
	// meaningful only when Impact is set.
	Impact     string
	Reversible bool
	Gone       bool // the last discovery no longer listed it
	// Enabled is the tool's own kill switch (the server has one too).
	Enabled bool
	// The arguments people decide on, where the tool moves money (as the
	// tool catalog names them): AmountArg holds an amount in minor units,
	// CurrencyArg its ISO 4217 code, TargetArg what the call acts on.
	AmountArg, CurrencyArg, TargetArg string
	// UnitCostMicros is what one call costs the tenant's budget.
	UnitCostMicros int64
	DiscoveredAt   time.Time
	UpdatedAt      time.Time
}

// Classified reports whether an admin has classified the tool.
func (t Tool) Classified() bool { return t.Impact != "" }

// ExposedName is the tool's name at Warden's /mcp door: SERVER__TOOL.
func (t Tool) ExposedName() string { return t.Server + "__" + t.Name }

// Scope is the key scope that allows the tool: mcp:SERVER/TOOL.
func (t Tool) Scope() string { return "mcp:" + t.Server + "/" + t.Name }

// ErrToolNotFound means the server has no tool of that name.
var ErrToolNotFound = problem.NotFound("mcp_tool_not_found", "The MCP server has no tool of that name.")

const toolColumns = `t.server_id, s.name, t.name, t.description, t.input_schema, t.digest, t.impact, t.reversible, t.gone, t.enabled, t.amount_arg, t.currency_arg, t.target_arg, t.unit_cost_micros, t.discovered_at, t.updated_at`

func scanTool(r store.Scanner) (Tool, error) {
	var t Tool
	var schema, discovered, updated string
	var impact sql.NullString
	var reversible sql.NullInt64
	var gone, enabled int
	if err := r.Scan(&t.ServerID, &t.Server, &t.Name, &t.Description, &schema, &t.Digest, &impact, &reversible, &gone, &enabled,
		&t.AmountArg, &t.CurrencyArg, &t.TargetArg, &t.UnitCostMicros, &discovered, &updated); err != nil {
		return Tool{}, err
	}
	t.InputSchema, t.Impact, t.Reversible, t.Gone, t.Enabled = json.RawMessage(schema), nullString(impact), reversible.Int64 == 1, gone == 1, enabled == 1
	t.DiscoveredAt, _ = time.Parse(time.RFC3339Nano, discovered)
	t.UpdatedAt, _ = time.Parse(time.RFC3339Nano, updated)
	return t, nil
}

// Tools returns a server's tools by name, those gone included.
func Tools(ctx context.Context, q store.Querier, server string) ([]Tool, error) {
	out, err := store.Query(ctx, q, scanTool, `SELECT `+toolColumns+` FROM mcp_tools t JOIN mcp_servers s ON s.id = t.server_id
		WHERE s.name = ? ORDER BY t.name`, server)
	if err != nil {
		return nil, fmt.Errorf("tools of MCP server %s: %w", server, err)
	}
	return out, nil
}

// offered returns every tool still listed by its server, by server and
// name: what /mcp may offer, before the key's scopes.
func offered(ctx context.Context, q store.Querier) ([]Tool, error) {
	out, err := store.Query(ctx, q, scanTool, `SELECT `+toolColumns+` FROM mcp_tools t JOIN mcp_servers s ON s.id = t.server_id
		WHERE t.gone = 0 ORDER BY s.name, t.name`)
	if err != nil {
		return nil, fmt.Errorf("MCP tools: %w", err)
	}
	return out, nil
}

// GetTool loads one tool of a server.
func GetTool(ctx context.Context, q store.Querier, server, name string) (Tool, error) {
	t, err := store.Get(ctx, q, scanTool, `SELECT `+toolColumns+` FROM mcp_tools t JOIN mcp_servers s ON s.id = t.server_id
		WHERE s.name = ? AND t.name = ?`, server, name)
	if errors.Is(err, store.ErrNotFound) {
		return Tool{}, ErrToolNotFound
	}
	return t, err
}

// Class is an admin's classification of a tool.
type Class struct {
	Impact     string // ImpactLow or ImpactHigh
	Reversible bool
	// Digest, when set, is the digest the admin saw: a tool that changed
	// since is not classified (409), so a classification never applies to
	// a description or schema nobody read.
	Digest string
}

// Classify gives a tool an impact class and reversibility, with its audit
// event (mcp.tool_classify, naming the digest it holds for), in one
// transaction; the same class again records nothing. A gone tool can be
// classified too (it holds if the tool returns unchanged).
func Classify(ctx context.Context, db *store.DB, actor audit.Actor, server, tool string, c Class) error {
	if c.Impact != ImpactLow && c.Impact != ImpactHigh {
		return &store.ValidationError{Fields: map[string]string{"impact": "Choose low or high."}}
	}
	return db.Transact(ctx, func(tx *store.Tx) error {
		t, err := GetTool(ctx, tx, server, tool)
		if err != nil {
			return err
		}
		if c.Digest != "" && c.Digest != t.Digest {
			return problem.Conflict("mcp_tool_changed", "The tool changed since you read it: read its description and schema again.")
		}
		if t.Impact == c.Impact && t.Reversible == c.Reversible {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_tools SET impact = ?, reversible = ?, updated_at = ? WHERE server_id = ? AND name = ?`,
			c.Impact, boolInt(c.Reversible), store.Now(), t.ServerID, t.Name); err != nil {
			return fmt.Errorf("classify MCP tool %s: %w", t.ExposedName(), err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "mcp.tool_classify", Subject: audit.Subject{Type: "mcp_tool", ID: server + "/" + tool},
			Details: map[string]any{"impact": c.Impact, "reversible": c.Reversible, "digest": t.Digest, "was_impact": t.Impact}})
		return err
	})
}

// Digest is the sha256 (hex) of the canonical JSON of a tool's name,
// description and input schema: object keys sorted, no insignificant
// space, numbers as written. Two listings of the same tool have the same
// digest whatever the order of their keys.
func Digest(name, description string, schema json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var s any
	if err := dec.Decode(&s); err != nil {
		return "", fmt.Errorf("the input schema of %s is not JSON: %w", name, err)
	}
	// encoding/json writes map keys sorted: the canonical form.
	b, err := json.Marshal(map[string]any{"name": name, "description": description, "input_schema": s})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Scopes returns the key scopes of every tool still listed by its server
// (mcp:SERVER/TOOL), by server and name: what the key form accepts besides
// patterns.
func Scopes(ctx context.Context, q store.Querier) ([]string, error) {
	tools, err := offered(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Scope())
	}
	return out, nil
}

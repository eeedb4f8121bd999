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
	"regexp"
	"strings"
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
	// The arguments people decide on where the tool moves money, as the
	// tool catalog names them ("" for none): AmountArg an integer amount in
	// minor units, CurrencyArg its ISO 4217 code, TargetArg what the call
	// acts on. Each must be a property of the tool's input schema.
	AmountArg, CurrencyArg, TargetArg string
	// UnitCostMicros is what one call costs the tenant's budget.
	UnitCostMicros int64
}

var argNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Validate returns one message per bad field (keyed by form field) of c
// for a tool with the input schema: the impact is chosen, each money
// argument is a top-level property of the schema (the amount one of type
// integer: minor units, never a float), an amount comes with its
// currency, and the unit cost is not negative.
func (c Class) Validate(schema json.RawMessage) map[string]string {
	errs := map[string]string{}
	if c.Impact != ImpactLow && c.Impact != ImpactHigh {
		errs["impact"] = "Choose low or high."
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	for field, name := range map[string]string{"amount_arg": c.AmountArg, "currency_arg": c.CurrencyArg, "target_arg": c.TargetArg} {
		if name == "" {
			continue
		}
		if !argNameRe.MatchString(name) {
			errs[field] = "Name one top-level argument: letters, digits and underscores."
			continue
		}
		if _, ok := s.Properties[name]; !ok {
			errs[field] = fmt.Sprintf("The tool's input schema has no property %q.", name)
		}
	}
	if p, ok := s.Properties[c.AmountArg]; ok && c.AmountArg != "" && p.Type != "integer" {
		errs["amount_arg"] = fmt.Sprintf("The amount argument %q must be of type integer in the input schema (an amount in minor units, such as cents).", c.AmountArg)
	}
	if _, bad := errs["currency_arg"]; !bad {
		switch {
		case c.AmountArg != "" && c.CurrencyArg == "":
			errs["currency_arg"] = "A tool with an amount names the argument that holds its currency."
		case c.AmountArg == "" && c.CurrencyArg != "":
			errs["amount_arg"] = "Name the amount argument too, or leave the currency argument empty."
		case c.AmountArg != "" && c.AmountArg == c.CurrencyArg:
			errs["currency_arg"] = "The currency is another argument than the amount."
		}
	}
	if c.UnitCostMicros < 0 {
		errs["unit_cost"] = "The unit cost cannot be negative."
	}
	return errs
}

// Classify gives a tool an impact class and reversibility, its money
// arguments and its unit cost, with its audit event (mcp.tool_classify,
// naming the digest it holds for), in one transaction; the same class
// again records nothing. A class that does not fit the tool's input
// schema is a *store.ValidationError. A gone tool can be classified too
// (it holds if the tool returns unchanged).
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
		// Checked against the schema the digest names: the one the admin read.
		if errs := c.Validate(t.InputSchema); len(errs) > 0 {
			return &store.ValidationError{Fields: errs}
		}
		if t.Impact == c.Impact && t.Reversible == c.Reversible && t.AmountArg == c.AmountArg && t.CurrencyArg == c.CurrencyArg &&
			t.TargetArg == c.TargetArg && t.UnitCostMicros == c.UnitCostMicros {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_tools SET impact = ?, reversible = ?, amount_arg = ?, currency_arg = ?, target_arg = ?,
			unit_cost_micros = ?, updated_at = ? WHERE server_id = ? AND name = ?`,
			c.Impact, boolInt(c.Reversible), c.AmountArg, c.CurrencyArg, c.TargetArg, c.UnitCostMicros, store.Now(), t.ServerID, t.Name); err != nil {
			return fmt.Errorf("classify MCP tool %s: %w", t.ExposedName(), err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "mcp.tool_classify", Subject: audit.Subject{Type: "mcp_tool", ID: server + "/" + tool},
			Details: map[string]any{"impact": c.Impact, "reversible": c.Reversible, "digest": t.Digest, "was_impact": t.Impact,
				"amount_arg": c.AmountArg, "currency_arg": c.CurrencyArg, "target_arg": c.TargetArg, "unit_cost_micros": c.UnitCostMicros}})
		return err
	})
}

// SetToolEnabled is one tool's own kill switch (the server has one too:
// SwitchServer): a tool switched off is refused at /mcp from the next
// call on, for every tenant, whatever its class. Switching off needs a
// reason, kept in the audit event (mcp.tool_disable; mcp.tool_enable
// switching on). It reports whether anything changed: setting the state
// the tool already has records nothing, so a second press is harmless.
// A gone tool can be switched too (the switch holds if it returns).
func SetToolEnabled(ctx context.Context, db *store.DB, actor audit.Actor, server, tool string, enabled bool, reason string) (changed bool, err error) {
	if reason, err = checkReason(enabled, reason); err != nil {
		return false, err
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false
		t, err := GetTool(ctx, tx, server, tool)
		if err != nil {
			return err
		}
		if t.Enabled == enabled {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_tools SET enabled = ?, updated_at = ? WHERE server_id = ? AND name = ?`,
			boolInt(enabled), store.Now(), t.ServerID, t.Name); err != nil {
			return fmt.Errorf("switch MCP tool %s: %w", t.ExposedName(), err)
		}
		verb := "mcp.tool_disable"
		if enabled {
			verb = "mcp.tool_enable"
		}
		det := map[string]any{"enabled": enabled, "server": server, "tool": tool}
		if reason != "" {
			det["reason"] = reason
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: verb, Subject: audit.Subject{Type: "mcp_tool", ID: server + "/" + tool}, Details: det})
		return err
	})
	return changed, err
}

// ParseExposedName splits SERVER__TOOL at the first "__" (a server's name
// has none); ok is false when name is not of that form.
func ParseExposedName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, "__")
	return server, tool, ok && server != "" && tool != ""
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

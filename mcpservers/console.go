package mcpservers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// What the console shows of servers and tools in operation: every tool
// with its switch, why a switch is off, and the calls of the last hour.

// AllTools returns every tool still listed by its server, by server and
// name, whatever its class or switch: the Kill switches page's rows.
func AllTools(ctx context.Context, q store.Querier) ([]Tool, error) { return offered(ctx, q) }

// OffReason is the reason given when a server (tool "") or one tool was
// last switched off, read from its newest audit event of that verb (the
// audit_events_subject index finds it); "" when none was given.
func OffReason(ctx context.Context, q store.Querier, server, tool string) (string, error) {
	typ, id, verb := "mcp_server", server, "mcp.server_disable"
	if tool != "" {
		typ, id, verb = "mcp_tool", server+"/"+tool, "mcp.tool_disable"
	}
	var details string
	err := q.QueryRowContext(ctx, `SELECT details FROM audit_events WHERE subject_type = ? AND subject_id = ? AND verb = ?
		ORDER BY seq DESC LIMIT 1`, typ, id, verb).Scan(&details)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		return "", fmt.Errorf("why %s is off: %w", id, err)
	}
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal([]byte(details), &d)
	return d.Reason, nil
}

// Calls counts one server's calls through /mcp over a window.
type Calls struct {
	Calls   int // every tools/call, refused ones included
	Errors  int // the upstream failed or answered a tool error
	Refused int // Warden refused the call
}

// maxCountedCalls bounds what CallsSince reads: beyond it the counts are
// a lower bound (Capped), and the page says so.
const maxCountedCalls = 20000

// CallsSince counts the calls through /mcp since the given time, by
// server, from their audit events (mcp.call). It walks the verb's index
// (audit_events_verb_seq) from the newest event back and stops at the
// first older than since, reading at most maxCountedCalls events; capped
// reports that it stopped there.
func CallsSince(ctx context.Context, q store.Querier, since time.Time) (counts map[string]Calls, capped bool, err error) {
	rows, err := q.QueryContext(ctx, `SELECT time, details FROM audit_events WHERE verb = 'mcp.call' ORDER BY seq DESC LIMIT ?`, maxCountedCalls+1)
	if err != nil {
		return nil, false, fmt.Errorf("count MCP calls: %w", err)
	}
	defer rows.Close()
	from := since.UTC().Format(audit.TimeFormat)
	counts = map[string]Calls{}
	n := 0
	for rows.Next() {
		var at, details string
		if err := rows.Scan(&at, &details); err != nil {
			return nil, false, fmt.Errorf("count MCP calls: %w", err)
		}
		if at < from {
			break
		}
		if n++; n > maxCountedCalls {
			capped = true
			break
		}
		var d struct {
			Server  string `json:"server"`
			Outcome string `json:"outcome"`
			IsError bool   `json:"is_error"`
		}
		if json.Unmarshal([]byte(details), &d) != nil || d.Server == "" {
			continue
		}
		c := counts[d.Server]
		c.Calls++
		switch {
		case d.Outcome == "refused":
			c.Refused++
		case d.Outcome == "failed" || d.IsError:
			c.Errors++
		}
		counts[d.Server] = c
	}
	return counts, capped, rows.Err()
}

// Redact passes text a person typed (a switch's reason) through the
// gateway's redactor before it is kept for good in the audit trail; it
// is unchanged where there is no redactor.
func (g *Gateway) Redact(s string) string {
	if g == nil || g.redactor == nil {
		return s
	}
	return g.redactor.String(s)
}

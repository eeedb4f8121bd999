package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// TenantSwitch is a tool switched off for one tenant only.
type TenantSwitch struct {
	Tool       string
	TenantID   string
	TenantSlug string
	Reason     string
	By         string // "principal:<id>"
	At         time.Time
}

// OffForTenant reports whether the tool is switched off for the tenant
// alone (its own switch aside).
func OffForTenant(ctx context.Context, q store.Querier, tool, tenantID string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM tool_tenant_switches WHERE tool = ? AND tenant_id = ?`, tool, tenantID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("tenant switch of %s: %w", tool, err)
	}
	return n > 0, nil
}

// ForTenant is t as a call of tenantID sees it: switched off when it is
// switched off for every tenant or for this one. Every place that decides
// a tenant's call (policy for journeys and proposals, execution of an
// approved action) reads the tool through it, so the per-tenant switch
// holds wherever the global one does.
func ForTenant(ctx context.Context, q store.Querier, t *tools.Tool, tenantID string) error {
	if t == nil || !t.Enabled || tenantID == "" {
		return nil
	}
	off, err := OffForTenant(ctx, q, t.Name, tenantID)
	if err != nil {
		return err
	}
	if off {
		t.Enabled = false
	}
	return nil
}

// GetForTenant is Get then ForTenant in one statement: the tool as a call
// of tenantID sees it, switched off when it is switched off for every
// tenant or for this one. One read instead of two on a journey's hot path
// (each read on SQLite is a read transaction of its own).
func GetForTenant(ctx context.Context, q store.Querier, name, tenantID string) (tools.Tool, error) {
	var off bool
	t, err := store.Get(ctx, q, func(s store.Scanner) (tools.Tool, error) { return scan(withOff{s, &off}) },
		`SELECT `+toolColumns+`,
	EXISTS (SELECT 1 FROM tool_tenant_switches WHERE tool = ? AND tenant_id = ?)
	FROM tools WHERE name = ?`, name, tenantID, name)
	if errors.Is(err, store.ErrNotFound) {
		return tools.Tool{}, problem.NotFound("not_found", "There is no tool "+strconv.Quote(name)+" in the catalog.")
	}
	if err != nil {
		return tools.Tool{}, fmt.Errorf("load tool %s: %w", name, err)
	}
	if off && tenantID != "" {
		t.Enabled = false
	}
	return t, nil
}

// withOff scans a row of selectTool's columns followed by one more, the
// tenant's switch, into off.
type withOff struct {
	s   store.Scanner
	off *bool
}

func (w withOff) Scan(dest ...any) error { return w.s.Scan(append(dest, w.off)...) }

// TenantSwitches lists the tools switched off for single tenants, by tool
// then tenant.
func TenantSwitches(ctx context.Context, q store.Querier) ([]TenantSwitch, error) {
	out, err := store.Query(ctx, q, func(s store.Scanner) (TenantSwitch, error) {
		var ts TenantSwitch
		var at string
		if err := s.Scan(&ts.Tool, &ts.TenantID, &ts.TenantSlug, &ts.Reason, &ts.By, &at); err != nil {
			return ts, err
		}
		ts.At, _ = time.Parse(time.RFC3339Nano, at)
		return ts, nil
	}, `SELECT s.tool, s.tenant_id, t.slug, s.reason, s.switched_by, s.switched_at
		FROM tool_tenant_switches s JOIN tenants t ON t.id = s.tenant_id ORDER BY s.tool, t.slug`)
	if err != nil {
		return nil, fmt.Errorf("tenant tool switches: %w", err)
	}
	return out, nil
}

// SwitchForTenant turns a tool off (enabled false) or back on for one
// tenant: the runbook button on-call presses when one tenant's calls of a
// tool fail, without stopping that tool for everyone else. Switching off
// needs a reason. Only a real change is recorded: tool.disable or
// tool.enable with the tenant, in the same transaction. The tool is a
// catalog tool or an MCP server's tool (Switchable); any other name is
// store.ErrNotFound.
func SwitchForTenant(ctx context.Context, db *store.DB, actor audit.Actor, name, tenantID, tenantSlug string, enabled bool, reason string) (changed bool, err error) {
	reason = strings.TrimSpace(reason)
	if !enabled && reason == "" {
		return false, ErrSwitchReasonRequired
	}
	if utf8.RuneCountInString(reason) > MaxSwitchReason {
		return false, problem.Unprocessable("reason_too_long", fmt.Sprintf("Keep the reason to %d characters.", MaxSwitchReason))
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false
		if err := Switchable(ctx, tx, name); err != nil {
			return err
		}
		var res interface{ RowsAffected() (int64, error) }
		var err error
		verb := "tool.enable"
		if enabled {
			res, err = tx.ExecContext(ctx, `DELETE FROM tool_tenant_switches WHERE tool = ? AND tenant_id = ?`, name, tenantID)
		} else {
			verb = "tool.disable"
			res, err = tx.ExecContext(ctx, `INSERT INTO tool_tenant_switches (tool, tenant_id, reason, switched_by, switched_at)
				VALUES (?, ?, ?, ?, ?) ON CONFLICT (tool, tenant_id) DO NOTHING`,
				name, tenantID, reason, actor.Type+":"+actor.ID, store.Now())
		}
		if err != nil {
			return fmt.Errorf("switch tool %s for tenant %s: %w", name, tenantSlug, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = true
		details := map[string]any{"enabled": enabled, "tenant_only": true}
		if reason != "" {
			details["reason"] = reason
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: actor, Tenant: tenantSlug, Verb: verb,
			Subject: audit.Subject{Type: "tool", ID: name}, Details: details,
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// Switchable reports whether name is a tool that may be switched off for
// one tenant: a catalog tool, or a tool an MCP server still lists, named
// as the runtime names it (SERVER__TOOL; the MCP door refuses its calls
// for that tenant). Any other name is store.ErrNotFound.
func Switchable(ctx context.Context, q store.Querier, name string) error {
	_, err := Get(ctx, q, name)
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	server, tool, ok := strings.Cut(name, "__")
	if !ok || server == "" || tool == "" {
		return store.ErrNotFound
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM mcp_tools t JOIN mcp_servers s ON s.id = t.server_id
		WHERE s.name = ? AND t.name = ? AND t.gone = 0`, server, tool).Scan(&n); err != nil {
		return fmt.Errorf("MCP tool %s: %w", name, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// ErrExists means a tool of that name is already in the catalog.
var ErrExists = errors.New("tool exists")

// Create adds a tool to the catalog and records who added it, in one
// transaction: the name check and the insert share its write lock, so of
// two admins adding the same name one gets ErrExists instead of silently
// overwriting the other's definition. An invalid definition is a
// *store.ValidationError.
func Create(ctx context.Context, db *store.DB, actor audit.Actor, t tools.Tool) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := Get(ctx, tx, t.Name); err == nil {
			return ErrExists
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := Upsert(ctx, tx, t); err != nil {
			return err
		}
		details := auditDetails(t)
		details["enabled"] = t.Enabled
		_, err := audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Verb:    "tool.create",
			Subject: audit.Subject{Type: "tool", ID: t.Name},
			Details: details,
		})
		return err
	})
}

// Update saves a tool's definition and returns the names of the fields
// that changed; saving the same definition again changes and records
// nothing. The tool's switch is kept as stored, whatever t says: it has
// its own buttons and audit verbs (Switch), and an edit form must not turn
// a tool back on that on-call switched off meanwhile. An unknown tool is
// store.ErrNotFound; an invalid definition a *store.ValidationError.
func Update(ctx context.Context, db *store.DB, actor audit.Actor, t tools.Tool) (changed []string, err error) {
	err = db.Transact(ctx, func(tx *store.Tx) error {
		stored, err := Get(ctx, tx, t.Name)
		if err != nil {
			return err
		}
		t.Enabled = stored.Enabled
		if changed = changes(stored, t); len(changed) == 0 {
			return nil
		}
		if err := Upsert(ctx, tx, t); err != nil {
			return err
		}
		details := auditDetails(t)
		details["changed"] = changed
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Verb:    "tool.update",
			Subject: audit.Subject{Type: "tool", ID: t.Name},
			Details: details,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return changed, nil
}

// ErrSwitchReasonRequired refuses switching a tool off without saying why:
// the reason goes into the audit trail, onto the pages that show the
// switch, and onto every action whose execution it blocks.
var ErrSwitchReasonRequired = problem.Unprocessable("reason_required", "Say why the tool is switched off: the reason goes into the audit trail and tells whoever switches it back on.")

// MaxSwitchReason bounds the reason kept for a switch.
const MaxSwitchReason = 500

// Switch turns a tool on (enabled true) or off: the kill switch on-call
// presses in an incident, perhaps twice. Switching off requires a reason.
// It reports whether anything changed, and only a real change is recorded
// (tool.enable or tool.disable, with the reason), together with who
// switched it and when (SwitchOf). An unknown tool is store.ErrNotFound.
func Switch(ctx context.Context, db *store.DB, actor audit.Actor, name string, enabled bool, reason string) (changed bool, err error) {
	reason = strings.TrimSpace(reason)
	if !enabled && reason == "" {
		return false, ErrSwitchReasonRequired
	}
	if utf8.RuneCountInString(reason) > MaxSwitchReason {
		return false, problem.Unprocessable("reason_too_long", fmt.Sprintf("Keep the reason to %d characters.", MaxSwitchReason))
	}
	verb := "tool.disable"
	if enabled {
		verb = "tool.enable"
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		if changed, err = SetEnabled(ctx, tx, name, enabled); err != nil || !changed {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tools SET switch_reason = ?, switched_by = ?, switched_at = ? WHERE name = ?`,
			reason, actor.Type+":"+actor.ID, store.Now(), name); err != nil {
			return fmt.Errorf("switch tool %s: %w", name, err)
		}
		details := map[string]any{"enabled": enabled}
		if reason != "" {
			details["reason"] = reason
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   actor,
			Verb:    verb,
			Subject: audit.Subject{Type: "tool", ID: name},
			Details: details,
		})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// changes names the fields that differ between two definitions of a tool
// (the switch aside: it has its own buttons and audit verbs).
func changes(old, new tools.Tool) []string {
	var out []string
	add := func(field string, differ bool) {
		if differ {
			out = append(out, field)
		}
	}
	add("description", old.Description != new.Description)
	add("impact", old.Impact != new.Impact)
	add("reversibility", old.Reversibility != new.Reversibility)
	add("compensating_tool", old.CompensatingTool != new.CompensatingTool)
	add("provider", old.Provider != new.Provider)
	add("webhook_url", old.WebhookURL != new.WebhookURL)
	add("timeout", old.Timeout != new.Timeout)
	add("max_attempts", old.MaxAttempts != new.MaxAttempts)
	add("args_schema", compactJSON(old.ArgsSchema) != compactJSON(new.ArgsSchema))
	add("approval_ttl", old.ApprovalTTL != new.ApprovalTTL)
	add("unit_cost", old.UnitCostMicros != new.UnitCostMicros)
	add("amount_arg", old.AmountArg != new.AmountArg)
	add("currency_arg", old.CurrencyArg != new.CurrencyArg)
	add("target_arg", old.TargetArg != new.TargetArg)
	add("total_arg", old.TotalArg != new.TotalArg)
	add("total_result", old.TotalResult != new.TotalResult)
	add("total_currency_result", old.TotalCurrencyResult != new.TotalCurrencyResult)
	return out
}

// auditDetails describes a tool for the audit trail. The webhook URL is
// reduced to its host (its path or query may carry a credential) and the
// schema to its digest.
func auditDetails(t tools.Tool) map[string]any {
	sum := sha256.Sum256([]byte(compactJSON(t.ArgsSchema)))
	d := map[string]any{
		"impact":             string(t.Impact),
		"reversibility":      string(t.Reversibility),
		"provider":           t.Provider,
		"timeout_ms":         t.Timeout.Milliseconds(),
		"max_attempts":       t.MaxAttempts,
		"approval_ttl_s":     int64(t.ApprovalTTL / time.Second),
		"unit_cost_micros":   t.UnitCostMicros,
		"args_schema_sha256": hex.EncodeToString(sum[:]),
	}
	if t.CompensatingTool != "" {
		d["compensating_tool"] = t.CompensatingTool
	}
	for k, v := range map[string]string{"amount_arg": t.AmountArg, "currency_arg": t.CurrencyArg, "target_arg": t.TargetArg,
		"total_arg": t.TotalArg, "total_result": t.TotalResult, "total_currency_result": t.TotalCurrencyResult} {
		if v != "" {
			d[k] = v
		}
	}
	if u, err := url.Parse(t.WebhookURL); err == nil && u.Host != "" {
		d["webhook_host"] = u.Host
	}
	return d
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

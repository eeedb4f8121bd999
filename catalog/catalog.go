// Package catalog stores the tool catalog: each tool's impact class,
// reversibility, provider, timeout, retry policy, argument schema and its
// enabled switch. Reads go to the database every time, so a switch turned
// off takes effect on the next call.
//
// The console changes the catalog through Create, Update and Switch, each
// one transaction with its audit event:
//
//	err := catalog.Create(ctx, db, actor, t)                   // ErrExists
//	changed, err := catalog.Update(ctx, db, actor, t)          // the fields that changed, nil for none
//	switched, err := catalog.Switch(ctx, db, actor, name, false, reason) // the kill switch
//
// Skills are defined in code, but their kill switches are stored here too
// (skills.go): SwitchSkill turns one off or on with its audit event, and
// the runtime asks SkillEnabled before running a routed journey.
//
// Invalid definitions come back as *store.ValidationError, field by field.
// Upsert and SetEnabled are the same writes without the audit event, for
// seeding and tests.
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/tools"
)

var (
	nameRe    = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)
	argNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// schemaProperties returns the names of a schema's top-level properties,
// or nil when it does not list them (then any name is accepted).
func schemaProperties(schema json.RawMessage) map[string]bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || s.Properties == nil {
		return nil
	}
	out := make(map[string]bool, len(s.Properties))
	for name := range s.Properties {
		out[name] = true
	}
	return out
}

// Validate checks a tool definition and returns one message per bad field.
// exists tells whether another tool of that name is in the catalog (for
// the compensating tool).
func Validate(t tools.Tool, exists func(name string) bool) map[string]string {
	errs := map[string]string{}
	switch {
	case !nameRe.MatchString(t.Name):
		errs["name"] = "Use 2–64 lower-case letters, digits and underscores, starting with a letter."
	case strings.Contains(t.Name, "__"):
		// SERVER__TOOL names the tools of upstream MCP servers.
		errs["name"] = "Two underscores in a row are kept for the tools of MCP servers (SERVER__TOOL); use one."
	}
	switch t.Impact {
	case risk.ImpactLow, risk.ImpactMedium, risk.ImpactHigh:
	default:
		errs["impact"] = "Choose low, medium or high."
	}
	switch t.Reversibility {
	case risk.Reversible, risk.Irreversible:
		if t.CompensatingTool != "" {
			errs["compensating_tool"] = "Only a compensatable tool has a compensating tool."
		}
	case risk.Compensatable:
		switch {
		case t.CompensatingTool == "":
			errs["compensating_tool"] = "A compensatable tool names the tool that undoes it."
		case t.CompensatingTool == t.Name:
			errs["compensating_tool"] = "A tool cannot compensate itself."
		case exists != nil && !exists(t.CompensatingTool):
			errs["compensating_tool"] = fmt.Sprintf("There is no tool %q in the catalog.", t.CompensatingTool)
		}
	default:
		errs["reversibility"] = "Choose reversible, compensatable or irreversible."
	}
	switch t.Provider {
	case tools.ProviderBuiltin, tools.ProviderExternal:
	case tools.ProviderHTTP:
		u, err := url.Parse(t.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs["webhook_url"] = "An http tool needs an absolute http(s) webhook URL."
		}
	default:
		errs["provider"] = "Choose builtin, http or external."
	}
	if t.Timeout < 10*time.Millisecond || t.Timeout > 5*time.Minute {
		errs["timeout"] = "The timeout must be between 10 ms and 5 minutes."
	}
	if t.MaxAttempts < 1 || t.MaxAttempts > 10 {
		errs["max_attempts"] = "Attempts must be between 1 and 10."
	}
	if t.ApprovalTTL < time.Minute || t.ApprovalTTL > 30*24*time.Hour {
		errs["approval_ttl"] = "Approvals may stay pending between 1 minute and 30 days."
	}
	if t.UnitCostMicros < 0 {
		errs["unit_cost"] = "The unit cost cannot be negative."
	}
	if err := policy.CompileSchema(t.ArgsSchema); err != nil {
		errs["args_schema"] = "The argument schema is not a valid JSON Schema: " + err.Error()
	} else if _, err := redact.DeclaredIn(t.ArgsSchema); err != nil {
		errs["args_schema"] = "The argument schema marks a field personal with an unknown kind: " + err.Error() + "."
	}
	props := schemaProperties(t.ArgsSchema)
	for field, name := range map[string]string{"amount_arg": t.AmountArg, "currency_arg": t.CurrencyArg, "target_arg": t.TargetArg, "total_arg": t.TotalArg} {
		switch {
		case name == "":
		case !argNameRe.MatchString(name):
			errs[field] = "Name one top-level argument: letters, digits and underscores."
		case props != nil && !props[name]:
			errs[field] = fmt.Sprintf("The argument schema has no property %q.", name)
		}
	}
	switch {
	case t.AmountArg != "" && t.CurrencyArg == "":
		errs["currency_arg"] = "A tool with an amount names the argument that holds its currency."
	case t.AmountArg == "" && t.CurrencyArg != "":
		errs["amount_arg"] = "Name the amount argument too, or leave the currency argument empty."
	case t.AmountArg != "" && t.AmountArg == t.CurrencyArg:
		errs["currency_arg"] = "The currency is another argument than the amount."
	}
	switch {
	case t.TotalArg != "" && t.AmountArg == "":
		errs["total_arg"] = "A total is weighed against an amount: name the amount argument too, or leave the total empty."
	case t.TotalArg != "" && (t.TotalArg == t.AmountArg || t.TotalArg == t.CurrencyArg):
		errs["total_arg"] = "The total is another argument than the amount and the currency."
	case t.TotalArg != "" && t.TargetArg == "":
		errs["target_arg"] = "A total is the total of a target: name the target argument too."
	}
	for field, name := range map[string]string{"total_result": t.TotalResult, "total_currency_result": t.TotalCurrencyResult} {
		if name != "" && !argNameRe.MatchString(name) {
			errs[field] = "Name one top-level member of the tool's result: letters, digits and underscores."
		}
	}
	switch {
	case (t.TotalResult == "") != (t.TotalCurrencyResult == ""):
		errs["total_currency_result"] = "A total in a result names both its amount member and its currency member, or neither."
	case t.TotalResult != "" && t.TargetArg == "":
		errs["target_arg"] = "A lookup's total is the total of its target: name the target argument too."
	case t.TotalResult != "" && t.TotalResult == t.TotalCurrencyResult:
		errs["total_currency_result"] = "The total's currency is another member than the total."
	}
	return errs
}

// Upsert writes a tool inside tx after validating it; an invalid
// definition is a *store.ValidationError.
func Upsert(ctx context.Context, tx *store.Tx, t tools.Tool) error {
	exists := func(name string) bool {
		var n int
		tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tools WHERE name = ?`, name).Scan(&n)
		return n > 0 || name == t.Name
	}
	if errs := Validate(t, exists); len(errs) > 0 {
		return fmt.Errorf("save tool %s: %w", t.Name, &store.ValidationError{Fields: errs})
	}
	schema := string(t.ArgsSchema)
	if schema == "" {
		schema = "{}"
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO tools (name, description, impact, reversibility, compensating_tool, provider, webhook_url,
			timeout_ms, max_attempts, args_schema, enabled, approval_ttl_s, unit_cost_micros, amount_arg, currency_arg,
			target_arg, total_arg, total_result, total_currency_result, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET description = excluded.description, impact = excluded.impact,
			reversibility = excluded.reversibility, compensating_tool = excluded.compensating_tool,
			provider = excluded.provider, webhook_url = excluded.webhook_url, timeout_ms = excluded.timeout_ms,
			max_attempts = excluded.max_attempts, args_schema = excluded.args_schema, enabled = excluded.enabled,
			approval_ttl_s = excluded.approval_ttl_s, unit_cost_micros = excluded.unit_cost_micros,
			amount_arg = excluded.amount_arg, currency_arg = excluded.currency_arg, target_arg = excluded.target_arg,
			total_arg = excluded.total_arg, total_result = excluded.total_result,
			total_currency_result = excluded.total_currency_result, updated_at = excluded.updated_at`,
		t.Name, t.Description, string(t.Impact), string(t.Reversibility), t.CompensatingTool, t.Provider, t.WebhookURL,
		t.Timeout.Milliseconds(), t.MaxAttempts, schema, t.Enabled, int64(t.ApprovalTTL.Seconds()), t.UnitCostMicros,
		t.AmountArg, t.CurrencyArg, t.TargetArg, t.TotalArg, t.TotalResult, t.TotalCurrencyResult, store.Now())
	if err != nil {
		return fmt.Errorf("save tool %s: %w", t.Name, err)
	}
	return nil
}

// SetEnabled flips a tool's switch inside tx; it reports whether anything
// changed (pressing the same switch twice is harmless).
func SetEnabled(ctx context.Context, tx *store.Tx, name string, enabled bool) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE tools SET enabled = ?, updated_at = ? WHERE name = ? AND enabled != ?`, enabled, store.Now(), name, enabled)
	if err != nil {
		return false, fmt.Errorf("switch tool %s: %w", name, err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		if _, err := Get(ctx, tx, name); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

const toolColumns = `name, description, impact, reversibility, compensating_tool, provider, webhook_url,
	timeout_ms, max_attempts, args_schema, enabled, approval_ttl_s, unit_cost_micros, amount_arg, currency_arg, target_arg,
	total_arg, total_result, total_currency_result`

const selectTool = `SELECT ` + toolColumns + `
	FROM tools`

// Get loads one tool, or a not-found problem naming it (errors.Is matches
// it against store.ErrNotFound).
func Get(ctx context.Context, q store.Querier, name string) (tools.Tool, error) {
	t, err := store.Get(ctx, q, scan, selectTool+` WHERE name = ?`, name)
	if errors.Is(err, store.ErrNotFound) {
		return tools.Tool{}, problem.NotFound("not_found", "There is no tool "+strconv.Quote(name)+" in the catalog.")
	}
	if err != nil {
		return tools.Tool{}, fmt.Errorf("load tool %s: %w", name, err)
	}
	return t, nil
}

// List returns every tool by name.
func List(ctx context.Context, q store.Querier) ([]tools.Tool, error) {
	out, err := store.Query(ctx, q, scan, selectTool+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	return out, nil
}

type scanner = store.Scanner

func scan(s scanner) (tools.Tool, error) {
	var t tools.Tool
	var impact, rev, schema string
	var timeoutMS, ttlS int64
	err := s.Scan(&t.Name, &t.Description, &impact, &rev, &t.CompensatingTool, &t.Provider, &t.WebhookURL,
		&timeoutMS, &t.MaxAttempts, &schema, &t.Enabled, &ttlS, &t.UnitCostMicros, &t.AmountArg, &t.CurrencyArg, &t.TargetArg,
		&t.TotalArg, &t.TotalResult, &t.TotalCurrencyResult)
	if err != nil {
		return tools.Tool{}, err
	}
	t.Impact, t.Reversibility = risk.Impact(impact), risk.Reversibility(rev)
	t.Timeout = time.Duration(timeoutMS) * time.Millisecond
	t.ApprovalTTL = time.Duration(ttlS) * time.Second
	t.ArgsSchema = json.RawMessage(schema)
	return t, nil
}

// ForApproval is what an approval request needs to know of the tool.
func ForApproval(t tools.Tool) approvals.Tool {
	return approvals.Tool{Name: t.Name, Impact: t.Impact, Reversibility: t.Reversibility, ApprovalTTL: t.ApprovalTTL,
		Personal: t.Personal(), TargetArg: t.TargetArg, DeclaresAmount: t.AmountArg != ""}
}

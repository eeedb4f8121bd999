package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/catalog"
	"github.com/wardenhq/warden/agent/tools"
	"github.com/wardenhq/warden/views"
)

const maxToolDescription = 500

// parseToolForm reads the tool form. The returned tool carries every value
// that parsed; errs holds a message per field that did not, followed by
// the catalog's own validation.
func parseToolForm(ctx context.Context, c echo.Context, st AdminStore, name string) (views.ToolForm, tools.Tool, views.FieldErrors) {
	form := views.ToolForm{
		Name:             name,
		Description:      c.FormValue("description"),
		Impact:           c.FormValue("impact"),
		Reversibility:    c.FormValue("reversibility"),
		CompensatingTool: strings.TrimSpace(c.FormValue("compensating_tool")),
		Provider:         c.FormValue("provider"),
		WebhookURL:       strings.TrimSpace(c.FormValue("webhook_url")),
		Timeout:          c.FormValue("timeout"),
		MaxAttempts:      c.FormValue("max_attempts"),
		ArgsSchema:       c.FormValue("args_schema"),
		ApprovalTTL:      c.FormValue("approval_ttl"),
		UnitCost:         c.FormValue("unit_cost"),
		AmountArg:        strings.TrimSpace(c.FormValue("amount_arg")),
		CurrencyArg:      strings.TrimSpace(c.FormValue("currency_arg")),
		TargetArg:        strings.TrimSpace(c.FormValue("target_arg")),
		Enabled:          c.FormValue("enabled") != "",
	}
	t := tools.Tool{
		Name:             name,
		Description:      strings.TrimSpace(form.Description),
		Impact:           tools.Impact(form.Impact),
		Reversibility:    tools.Reversibility(form.Reversibility),
		CompensatingTool: form.CompensatingTool,
		Provider:         form.Provider,
		WebhookURL:       form.WebhookURL,
		ArgsSchema:       json.RawMessage(strings.TrimSpace(form.ArgsSchema)),
		AmountArg:        form.AmountArg,
		CurrencyArg:      form.CurrencyArg,
		TargetArg:        form.TargetArg,
		Enabled:          form.Enabled,
	}
	errs := views.FieldErrors{}
	if utf8.RuneCountInString(t.Description) > maxToolDescription {
		errs["description"] = fmt.Sprintf("Keep the description to %d characters or fewer.", maxToolDescription)
	}
	if ms, msg := formInt(form.Timeout, "Enter the timeout as a whole number of milliseconds."); msg != "" {
		errs["timeout"] = msg
	} else {
		t.Timeout = time.Duration(ms) * time.Millisecond
	}
	if n, msg := formInt(form.MaxAttempts, "Enter a whole number of attempts."); msg != "" {
		errs["max_attempts"] = msg
	} else {
		t.MaxAttempts = n
	}
	if s, msg := formInt(form.ApprovalTTL, "Enter a whole number of seconds."); msg != "" {
		errs["approval_ttl"] = msg
	} else {
		t.ApprovalTTL = time.Duration(s) * time.Second
	}
	if micros, msg := parseMicros(form.UnitCost); msg != "" {
		errs["unit_cost"] = msg
	} else {
		t.UnitCostMicros = micros
	}
	if len(t.ArgsSchema) == 0 {
		errs["args_schema"] = `Enter a JSON Schema for the arguments; {"type":"object"} accepts any object.`
	}
	exists := func(n string) bool {
		if n == name {
			return true
		}
		_, err := catalog.Get(ctx, st.Read(), n)
		return err == nil
	}
	for field, msg := range catalog.Validate(t, exists) {
		if _, seen := errs[field]; !seen {
			errs[field] = msg
		}
	}
	return form, t, errs
}

// toolForm is the form showing a stored tool.
func toolForm(t tools.Tool) views.ToolForm {
	return views.ToolForm{
		Name:             t.Name,
		Description:      t.Description,
		Impact:           string(t.Impact),
		Reversibility:    string(t.Reversibility),
		CompensatingTool: t.CompensatingTool,
		Provider:         t.Provider,
		WebhookURL:       t.WebhookURL,
		Timeout:          strconv.FormatInt(t.Timeout.Milliseconds(), 10),
		MaxAttempts:      strconv.Itoa(t.MaxAttempts),
		ArgsSchema:       indentJSON(t.ArgsSchema),
		ApprovalTTL:      strconv.FormatInt(int64(t.ApprovalTTL/time.Second), 10),
		UnitCost:         views.MoneyInput(t.UnitCostMicros),
		AmountArg:        t.AmountArg,
		CurrencyArg:      t.CurrencyArg,
		TargetArg:        t.TargetArg,
		Enabled:          t.Enabled,
	}
}

// toolChanges names the fields that differ between two definitions of a
// tool (the switch aside: it has its own buttons and audit verbs).
func toolChanges(old, new tools.Tool) []string {
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
	return out
}

// indentJSON lays a stored schema out for editing; text that is not JSON
// is shown as it is.
func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// toolAuditDetails describes a tool for the audit trail. The webhook URL
// is reduced to its host (its path or query may carry a credential) and
// the schema to its digest.
func toolAuditDetails(t tools.Tool) map[string]any {
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
	for k, v := range map[string]string{"amount_arg": t.AmountArg, "currency_arg": t.CurrencyArg, "target_arg": t.TargetArg} {
		if v != "" {
			d[k] = v
		}
	}
	if u, err := url.Parse(t.WebhookURL); err == nil && u.Host != "" {
		d["webhook_host"] = u.Host
	}
	return d
}

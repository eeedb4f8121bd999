package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/platform/money"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/views"
)

const maxToolDescription = 500

// parseToolForm reads the tool form. The returned tool carries every value
// that parsed; errs holds a message per field that did not, followed by
// the catalog's own validation.
func parseToolForm(ctx context.Context, c echo.Context, st *store.DB, name string) (views.ToolForm, tools.Tool, views.FieldErrors) {
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
		TotalArg:         strings.TrimSpace(c.FormValue("total_arg")),
		TotalResult:      strings.TrimSpace(c.FormValue("total_result")),
		TotalCurrency:    strings.TrimSpace(c.FormValue("total_currency_result")),
		Enabled:          c.FormValue("enabled") != "",
	}
	t := tools.Tool{
		Name:             name,
		Description:      strings.TrimSpace(form.Description),
		Impact:           risk.Impact(form.Impact),
		Reversibility:    risk.Reversibility(form.Reversibility),
		CompensatingTool: form.CompensatingTool,
		Provider:         form.Provider,
		WebhookURL:       form.WebhookURL,
		ArgsSchema:       json.RawMessage(strings.TrimSpace(form.ArgsSchema)),
		AmountArg:        form.AmountArg,
		CurrencyArg:      form.CurrencyArg,
		TargetArg:        form.TargetArg,
		TotalArg:         form.TotalArg,
		TotalResult:      form.TotalResult,
		// A lookup's total and its currency are named together.
		TotalCurrencyResult: form.TotalCurrency,
		Enabled:             form.Enabled,
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
	if micros, msg := money.ParseMicros(form.UnitCost); msg != "" {
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
		TotalArg:         t.TotalArg,
		TotalResult:      t.TotalResult,
		TotalCurrency:    t.TotalCurrencyResult,
		Enabled:          t.Enabled,
	}
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

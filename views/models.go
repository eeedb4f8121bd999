package views

import (
	"encoding/json"
	"fmt"
	"github.com/wardenhq/warden/changes"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/money"
)

// MicrosInput is a dollar amount as a form field takes it back.
func MicrosInput(micros int64) string { return money.MicrosInput(micros, usd) }

// ModelsView is the model deployments page: the deployments, the form
// that adds or edits one, and the newest calls through the gateway.
type ModelsView struct {
	Pending     []changes.Change // upstream and allowed-host changes waiting for a second admin
	Deployments []models.Deployment
	Calls       []models.Call
	Tenants     map[string]string // tenant id → slug, for the calls
	CanEdit     bool              // all-tenant admins change deployments
	Form        ModelForm
	Editing     bool // the form edits Form.Name instead of adding
	// Owner is who owns the deployment being edited; OwnerPending the
	// owner changes waiting for a second admin.
	Owner        string
	OwnerPending []changes.Change
	// Owners are every deployment's owner by name (owners.Of), for the
	// list; a deployment without one is absent.
	Owners    map[string]string
	OwnerForm OwnerForm // the owner form as typed, when it was refused
	Errors    FieldErrors
	Notice    string
	// Aliases are the aliases' options (cascade, cache), one per alias
	// with a deployment; AliasForm is the options form as typed.
	Aliases     []models.AliasSettings
	AliasForm   AliasForm
	AliasErrors FieldErrors
	// AllowedHosts are the hosts deployments may reach although their
	// addresses are internal; HostsForm is the form's text (as typed when
	// HostsTyped, after a refusal).
	AllowedHosts []string
	HostsForm    string
	HostsTyped   bool
	HostsErrors  FieldErrors
	// CallTag filters the calls listed to those the agent tagged so
	// (x-warden-metadata); CallTagText is the filter as typed, and
	// CallTagError why it was refused.
	CallTag      models.Tag
	CallTagText  string
	CallTagError string
}

// ModelForm is what the deployment form posts, as typed.
type ModelForm struct {
	Name, Alias, Priority, Weight, BaseURL, UpstreamModel, InputPrice, OutputPrice string
	ContextWindow, MaxOutputTokens, Timeout, Concurrency                           string
	HasAPIKey                                                                      bool
	ResponsesAPI                                                                   bool // the upstream serves /responses natively
}

func modelFormAction(v ModelsView) templ.SafeURL {
	if v.Editing {
		return templ.SafeURL("/models/" + v.Form.Name)
	}
	return "/models"
}

// PerMillion is a price per million tokens for people.
func PerMillion(micros int64) string { return Money(micros) + " / 1M" }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// modelDisableURL is the confirmation that switches a deployment off;
// modelEnableURL switches it on in one press.
func modelDisableURL(name string) templ.SafeURL {
	return templ.SafeURL("/models/" + url.PathEscape(name) + "/disable")
}

func modelEnableURL(name string) templ.SafeURL {
	return templ.SafeURL("/models/" + url.PathEscape(name) + "/enable")
}

// ModelSwitchView asks before switching a deployment off.
type ModelSwitchView struct {
	Deployment models.Deployment
	Others     []string    // the alias's other deployments that are on
	Reason     string      // what was typed, when the page comes back with an error
	Errors     FieldErrors // the reason's error
}

func (v ModelSwitchView) confirm() ConfirmView {
	d := v.Deployment
	c := ConfirmView{
		Back:      "/models",
		BackLabel: "← Models",
		Title:     modelDisableTitle(d.Name),
		Effect:    modelDisableEffect(v),
		Action:    modelDisableURL(d.Name),
		Submit:    "Switch off " + d.Name,
		SubmitID:  "model-disable-submit",
		Danger:    true,
		Cancel:    "/models",
		Fields:    reasonField("model-off-reason", "Say why, e.g. the provider's incident: it is kept in the audit trail and tells whoever switches it back on.", v.Reason, v.Errors),
	}
	if !d.Enabled {
		c.Warning = text(d.Name + " is already off. Confirming changes nothing.")
		c.WarningID = "model-already-off"
	}
	return c
}

func apiKeyHelp(has bool) string {
	if has {
		return "Stored sealed; leave empty to keep it."
	}
	return "Stored sealed, never shown again."
}

func attemptLine(a models.Attempt) string {
	s := a.Deployment
	if a.Status != 0 {
		s += " " + strconv.Itoa(a.Status)
	}
	if a.Error != "" {
		s += " " + a.Error
	}
	s += " (" + itoa(a.LatencyMS) + " ms"
	if a.CostMicros > 0 {
		s += ", " + Money(a.CostMicros)
	}
	return s + ")"
}

// callStatus is a call's status, with a cache hit said so.
func callStatus(c models.Call) string {
	if c.CacheHit {
		return stepWord(c.Status) + " (cache hit)"
	}
	return stepWord(c.Status)
}

func cacheTTLText(s int) string {
	if s == 0 {
		return "off"
	}
	return itoa(int64(s)) + " s"
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := n
	// Never inside a redaction token ("[name:3f9a1c2b]"): half a token
	// reads as data.
	if open := lastIndexRune(r[:cut], '['); open >= 0 && lastIndexRune(r[:cut], ']') < open {
		cut = open
	}
	return string(r[:cut]) + "…"
}

// promptText is a chat call's stored prompt (the redacted JSON of its
// messages) as a person reads it in a table: how many messages, and what
// the last one said, with its role. A prompt that is not such a list is
// shown as it is.
func promptText(prompt string) string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal([]byte(prompt), &msgs) != nil || len(msgs) == 0 {
		return prompt
	}
	last := msgs[len(msgs)-1]
	var text string
	if json.Unmarshal(last.Content, &text) != nil {
		// Content parts: the text ones, joined.
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(last.Content, &parts) != nil {
			return prompt
		}
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		text = strings.Join(texts, " ")
	}
	role := last.Role
	if role == "" {
		role = "message"
	}
	if len(msgs) == 1 {
		return role + ": " + text
	}
	return fmt.Sprintf("%d messages; last, %s: %s", len(msgs), role, text)
}

// usageText is a call's reported (or estimated) usage for people.
func usageText(c models.Call) string {
	if c.Usage == "" {
		return "—"
	}
	s := itoa(c.InputTokens) + " in / " + itoa(c.OutputTokens) + " out"
	switch c.Usage {
	case models.UsageEstimated:
		s += " (estimated: none reported)"
	case models.UsageInvalid:
		s += " (invalid usage reported: the reservation is charged)"
	}
	return s
}

// tagsText shows a call's stored tags as key=value pairs, in order.
func tagsText(metadata string) string {
	var tags map[string]string
	if metadata == "" || json.Unmarshal([]byte(metadata), &tags) != nil || len(tags) == 0 {
		return ""
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + tags[k]
	}
	return clip(strings.Join(parts, ", "), 300)
}

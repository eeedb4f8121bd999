// Package models keeps the model deployments the chat gateway routes to and
// the record of every call it made.
//
// An admin adds a deployment (Create), changes it (Update) or switches it
// off and on (Switch); each is one transaction with its audit event.
// The upstream API key is sealed with platform/seal, bound to the
// deployment's id, and never shown again. Agents then call
// POST /v1/chat/completions with "model": ALIAS and a key holding the
// scope model:ALIAS; Gateway.Chat admits the call under the key's model
// limits (KeyLimits), picks the alias's enabled deployments in priority
// order (For; weighted among equal priorities, or cheapest first when the
// alias cascades: AliasSettings), answers from the cache when the alias
// has one and the call is deterministic, reserves the worst case against
// the tenant's budget, calls the deployments until one answers (and
// passes the cascade's check), settles to actual usage and records the
// call with prompt and completion redacted, or without them when the
// tenant's TenantSettings say so. A tenant may also have its prompts
// redacted before they leave Warden.
package models

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
)

// ProviderOpenAI is the one provider kind: an OpenAI-compatible
// /v1/chat/completions endpoint.
const ProviderOpenAI = "openai-compatible"

// Deployment is one upstream model Warden may call for an alias.
type Deployment struct {
	ID       string
	Name     string // unique; names the deployment on pages and in traces
	Alias    string // what agents ask for ("model": ALIAS)
	Priority int    // lower is tried first among one alias's deployments
	// Weight spreads calls among deployments of equal priority: each is
	// tried first in proportion to its weight (1 to 1000).
	Weight        int
	Provider      string
	BaseURL       string // such as https://api.openai.com/v1
	APIKey        string // in the clear only when loaded by For; never listed
	HasAPIKey     bool
	UpstreamModel string
	// Prices in micro-units of the budget's currency per million tokens.
	InputMicrosPerM  int64
	OutputMicrosPerM int64
	ContextWindow    int
	MaxOutputTokens  int // the cap a call may ask for; the default when it asks for none
	Timeout          time.Duration
	Concurrency      int // calls in flight to this deployment at most
	// ResponsesAPI: the upstream serves POST {BaseURL}/responses natively.
	// An alias whose every enabled deployment has it is forwarded as
	// Responses by the Responses door; otherwise that door translates to
	// Chat Completions (responses.go).
	ResponsesAPI bool
	Enabled      bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Validate returns one message per bad field, keyed by form field.
func (d Deployment) Validate() map[string]string {
	errs := map[string]string{}
	if !nameRe.MatchString(d.Name) {
		errs["name"] = "Use 1–64 lower-case letters, digits, dots, dashes or underscores."
	}
	if !nameRe.MatchString(d.Alias) {
		errs["alias"] = "Use 1–64 lower-case letters, digits, dots, dashes or underscores."
	}
	if d.Provider != ProviderOpenAI {
		errs["provider"] = "The provider must be " + ProviderOpenAI + "."
	}
	if u, err := url.Parse(d.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs["base_url"] = "Enter the base URL, such as https://api.openai.com/v1."
	}
	if m := strings.TrimSpace(d.UpstreamModel); m == "" || len(m) > 200 {
		errs["upstream_model"] = "Enter the upstream model id, such as gpt-4o-mini."
	}
	if d.InputMicrosPerM < 0 || d.OutputMicrosPerM < 0 {
		errs["prices"] = "Prices cannot be negative."
	}
	if d.ContextWindow < 1 || d.ContextWindow > 10_000_000 {
		errs["context_window"] = "The context window must be between 1 and 10000000 tokens."
	}
	if d.MaxOutputTokens < 1 || (d.ContextWindow >= 1 && d.MaxOutputTokens > d.ContextWindow) {
		errs["max_output_tokens"] = "The output cap must be at least 1 and within the context window."
	}
	if d.Timeout < 100*time.Millisecond || d.Timeout > 10*time.Minute {
		errs["timeout"] = "The timeout must be between 100 ms and 10 minutes."
	}
	if d.Concurrency < 1 || d.Concurrency > 10000 {
		errs["concurrency"] = "The concurrency limit must be between 1 and 10000."
	}
	if d.Weight < 1 || d.Weight > 1000 {
		errs["weight"] = "The weight must be between 1 and 1000."
	}
	if d.Priority < 0 || d.Priority > 1000 {
		errs["priority"] = "The priority must be between 0 and 1000."
	}
	return errs
}

// ErrExists means a deployment of that name exists.
var ErrExists = problem.Conflict("model_exists", "There is already a deployment of that name.")

// ErrNotFound means no deployment has that name.
var ErrNotFound = problem.NotFound("model_not_found", "There is no such model deployment.")

const columns = `id, name, alias, priority, provider, base_url, api_key_sealed, upstream_model, input_micros_per_m, output_micros_per_m,
	context_window, max_output_tokens, timeout_ms, concurrency, enabled, created_at, updated_at, weight, responses_api`

func scan(row interface{ Scan(...any) error }) (Deployment, string, error) {
	var d Deployment
	var sealed, created, updated string
	var timeoutMS int64
	var enabled, responsesAPI int
	err := row.Scan(&d.ID, &d.Name, &d.Alias, &d.Priority, &d.Provider, &d.BaseURL, &sealed, &d.UpstreamModel, &d.InputMicrosPerM,
		&d.OutputMicrosPerM, &d.ContextWindow, &d.MaxOutputTokens, &timeoutMS, &d.Concurrency, &enabled, &created, &updated, &d.Weight, &responsesAPI)
	if err != nil {
		return Deployment{}, "", err
	}
	d.HasAPIKey, d.Enabled, d.ResponsesAPI, d.Timeout = sealed != "", enabled == 1, responsesAPI == 1, time.Duration(timeoutMS)*time.Millisecond
	d.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	d.UpdatedAt, _ = time.Parse(time.RFC3339Nano, updated)
	return d, sealed, nil
}

// scanDeployment reads a deployment without its sealed API key.
func scanDeployment(row store.Scanner) (Deployment, error) {
	d, _, err := scan(row)
	return d, err
}

// List returns every deployment by alias and priority, without API keys.
func List(ctx context.Context, q store.Querier) ([]Deployment, error) {
	out, err := store.Query(ctx, q, scanDeployment, `SELECT `+columns+` FROM model_deployments ORDER BY alias, priority, name`)
	if err != nil {
		return nil, fmt.Errorf("list model deployments: %w", err)
	}
	return out, nil
}

// Get loads one deployment by name, without its API key.
func Get(ctx context.Context, q store.Querier, name string) (Deployment, error) {
	d, err := store.Get(ctx, q, scanDeployment, `SELECT `+columns+` FROM model_deployments WHERE name = ?`, name)
	if errors.Is(err, store.ErrNotFound) {
		return Deployment{}, ErrNotFound
	}
	return d, err
}

// For returns the enabled deployments of alias in the order they are
// tried, with their API keys opened.
func For(ctx context.Context, q store.Querier, sealer *seal.Sealer, alias string) ([]Deployment, error) {
	all, err := store.Query(ctx, q, func(row store.Scanner) (sealedDeployment, error) {
		d, sealed, err := scan(row)
		return sealedDeployment{d, sealed}, err
	}, `SELECT `+columns+` FROM model_deployments WHERE alias = ? AND enabled = 1 ORDER BY priority, name`, alias)
	if err != nil {
		return nil, fmt.Errorf("deployments of %s: %w", alias, err)
	}
	return openKeys(sealer, all)
}

// forCall is For and callOptions in one statement: the options are
// columns of every deployment's row. With no deployment there is no row,
// and the options are their defaults (the call is refused as an unknown
// model before they matter).
func forCall(ctx context.Context, q store.Querier, sealer *seal.Sealer, alias, tenantID, keyID string) ([]Deployment, AliasSettings, TenantSettings, KeyLimits, string, error) {
	var o callOpts
	all, err := store.Query(ctx, q, func(row store.Scanner) (sealedDeployment, error) {
		d, sealed, err := scan(withMore{row, o.dest()})
		return sealedDeployment{d, sealed}, err
	}, `SELECT `+columns+`,`+callOptionsColumns+`
	FROM model_deployments WHERE alias = ? AND enabled = 1 ORDER BY priority, name`, append(o.args(alias, tenantID, keyID), alias)...)
	if err != nil {
		return nil, AliasSettings{}, TenantSettings{}, KeyLimits{}, "", fmt.Errorf("deployments of %s: %w", alias, err)
	}
	deps, err := openKeys(sealer, all)
	if err != nil {
		return nil, AliasSettings{}, TenantSettings{}, KeyLimits{}, "", err
	}
	a, s, l, hosts := o.values(alias)
	return deps, a, s, l, hosts, nil
}

// withMore scans a row's columns into the destinations it is given, then
// the rest into more.
type withMore struct {
	row  store.Scanner
	more []any
}

func (w withMore) Scan(dest ...any) error { return w.row.Scan(append(dest, w.more...)...) }

type sealedDeployment struct {
	d      Deployment
	sealed string
}

// openKeys opens the deployments' sealed API keys.
func openKeys(sealer *seal.Sealer, all []sealedDeployment) ([]Deployment, error) {
	var out []Deployment
	for _, s := range all {
		d := s.d
		if s.sealed != "" {
			if sealer == nil {
				return nil, errors.New("no sealer to open a model API key")
			}
			k, err := sealer.Open(s.sealed, d.ID)
			if err != nil {
				return nil, fmt.Errorf("open API key of %s: %w", d.Name, err)
			}
			d.APIKey = string(k)
		}
		out = append(out, d)
	}
	return out, nil
}

// Aliases returns the aliases that have an enabled deployment.
func Aliases(ctx context.Context, q store.Querier) ([]string, error) {
	out, err := store.Strings(ctx, q, `SELECT DISTINCT alias FROM model_deployments WHERE enabled = 1 ORDER BY alias`)
	if err != nil {
		return nil, fmt.Errorf("model aliases: %w", err)
	}
	return out, nil
}

func details(d Deployment) map[string]any {
	return map[string]any{
		"alias": d.Alias, "priority": d.Priority, "base_url": d.BaseURL, "upstream_model": d.UpstreamModel,
		"input_micros_per_m": d.InputMicrosPerM, "output_micros_per_m": d.OutputMicrosPerM,
		"context_window": d.ContextWindow, "max_output_tokens": d.MaxOutputTokens,
		"timeout_ms": d.Timeout.Milliseconds(), "concurrency": d.Concurrency, "enabled": d.Enabled, "weight": d.Weight,
		"responses_api": d.ResponsesAPI,
	}
}

func validated(d Deployment) error {
	if errs := d.Validate(); len(errs) > 0 {
		return &store.ValidationError{Fields: errs}
	}
	return nil
}

// Create adds a deployment with its API key sealed, and records who added
// it (never the key), in one transaction: the name check and the insert
// share its write lock. An invalid deployment is a *store.ValidationError.
func Create(ctx context.Context, db *store.DB, sealer *seal.Sealer, actor audit.Actor, d Deployment, apiKey string) (Deployment, error) {
	d.Provider = ProviderOpenAI
	if d.Weight == 0 {
		d.Weight = 1 // unset: the default weight
	}
	if err := validated(d); err != nil {
		return Deployment{}, err
	}
	if sealer == nil {
		return Deployment{}, errors.New("create model deployment: no sealer for its API key")
	}
	now := time.Now().UTC()
	d.ID, d.CreatedAt, d.UpdatedAt, d.HasAPIKey = store.NewID(), now, now, apiKey != ""
	sealed := ""
	if apiKey != "" {
		sealed = sealer.Seal([]byte(apiKey), d.ID)
	}
	err := db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := Get(ctx, tx, d.Name); err == nil {
			return ErrExists
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO model_deployments (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.ID, d.Name, d.Alias, d.Priority, d.Provider, d.BaseURL, sealed, d.UpstreamModel, d.InputMicrosPerM, d.OutputMicrosPerM,
			d.ContextWindow, d.MaxOutputTokens, d.Timeout.Milliseconds(), d.Concurrency, boolInt(d.Enabled),
			store.FormatTime(now), store.FormatTime(now), d.Weight, boolInt(d.ResponsesAPI)); err != nil {
			return fmt.Errorf("create model deployment: %w", err)
		}
		det := details(d)
		det["api_key_set"] = d.HasAPIKey
		_, err := audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "model.create", Subject: audit.Subject{Type: "model", ID: d.Name}, Details: det})
		return err
	})
	return d, err
}

// Update saves a deployment's settings (not its switch: Switch) and
// returns what changed; a new API key replaces the sealed one, an empty
// one keeps it. Saving the same settings changes and records nothing.
func Update(ctx context.Context, db *store.DB, sealer *seal.Sealer, actor audit.Actor, d Deployment, apiKey string) (changed []string, err error) {
	d.Provider = ProviderOpenAI
	if d.Weight == 0 {
		d.Weight = 1
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = nil // a retried run starts afresh (store.Transact)
		old, err := Get(ctx, tx, d.Name)
		if err != nil {
			return err
		}
		d.ID, d.Enabled = old.ID, old.Enabled
		if err := validated(d); err != nil {
			return err
		}
		was, now := details(old), details(d)
		for _, f := range []string{"alias", "priority", "base_url", "upstream_model", "input_micros_per_m", "output_micros_per_m",
			"context_window", "max_output_tokens", "timeout_ms", "concurrency", "weight", "responses_api"} {
			if fmt.Sprint(was[f]) != fmt.Sprint(now[f]) {
				changed = append(changed, f)
			}
		}
		if apiKey != "" {
			if sealer == nil {
				return errors.New("update model deployment: no sealer for its API key")
			}
			changed = append(changed, "api_key")
			if _, err := tx.ExecContext(ctx, `UPDATE model_deployments SET api_key_sealed = ? WHERE id = ?`, sealer.Seal([]byte(apiKey), d.ID), d.ID); err != nil {
				return fmt.Errorf("update model deployment: %w", err)
			}
		}
		if len(changed) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE model_deployments SET alias = ?, priority = ?, base_url = ?, upstream_model = ?,
			input_micros_per_m = ?, output_micros_per_m = ?, context_window = ?, max_output_tokens = ?, timeout_ms = ?, concurrency = ?, weight = ?, responses_api = ?, updated_at = ?
			WHERE id = ?`, d.Alias, d.Priority, d.BaseURL, d.UpstreamModel, d.InputMicrosPerM, d.OutputMicrosPerM, d.ContextWindow,
			d.MaxOutputTokens, d.Timeout.Milliseconds(), d.Concurrency, d.Weight, boolInt(d.ResponsesAPI), store.Now(), d.ID); err != nil {
			return fmt.Errorf("update model deployment: %w", err)
		}
		now["changed"] = changed
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: "model.update", Subject: audit.Subject{Type: "model", ID: d.Name}, Details: now})
		return err
	})
	return changed, err
}

// ErrSwitchReasonRequired refuses switching a deployment off without
// saying why, as for every other switch: the reason goes into the audit
// trail and tells whoever switches it back on.
var ErrSwitchReasonRequired = problem.Unprocessable("reason_required", "Say why the deployment is switched off: the reason goes into the audit trail and tells whoever switches it back on.")

// MaxSwitchReason bounds the reason kept for switching a deployment off.
const MaxSwitchReason = 500

// Switch turns a deployment on (enabled true) or off with its audit event
// (model.enable, or model.disable with the reason): a deployment switched
// off is no longer tried, so its alias's calls go to its other enabled
// deployments, and an alias with none left is refused (404). Switching off
// requires a reason, which is kept in the audit chain for good, so the
// caller redacts it first. It reports whether anything changed; setting
// the state a deployment already has records nothing.
func Switch(ctx context.Context, db *store.DB, actor audit.Actor, name string, enabled bool, reason string) (changed bool, err error) {
	reason = strings.TrimSpace(reason)
	if enabled {
		reason = ""
	} else if reason == "" {
		return false, ErrSwitchReasonRequired
	}
	if utf8.RuneCountInString(reason) > MaxSwitchReason {
		return false, problem.Unprocessable("reason_too_long", fmt.Sprintf("Keep the reason to %d characters.", MaxSwitchReason))
	}
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		d, err := Get(ctx, tx, name)
		if err != nil {
			return err
		}
		if d.Enabled == enabled {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE model_deployments SET enabled = ?, updated_at = ? WHERE id = ?`, boolInt(enabled), store.Now(), d.ID); err != nil {
			return fmt.Errorf("switch model deployment %s: %w", name, err)
		}
		changed = true
		verb := "model.disable"
		if enabled {
			verb = "model.enable"
		}
		details := map[string]any{"alias": d.Alias, "enabled": enabled}
		if reason != "" {
			details["reason"] = reason
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: actor, Verb: verb, Subject: audit.Subject{Type: "model", ID: name}, Details: details})
		return err
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

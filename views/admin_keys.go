package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/tenants"
)

// Key states shown in the list.
const (
	KeyActive  = "active"
	KeyRevoked = "revoked"
	KeyExpired = "expired"
)

// KeyRow is one key in the list.
type KeyRow struct {
	Key       keys.Key
	State     string // KeyActive, KeyRevoked or KeyExpired
	CreatedBy string // display name of the creator
}

// KeysView is one page of the key list.
type KeysView struct {
	Rows     []KeyRow
	Tenants  []tenants.Tenant // for the filter: those in scope
	Tenant   string           // filter, empty for all in scope
	Total    int              // keys matching the filter
	PrevPage string
	NextPage string
	Notice   string
	Now      time.Time // for "how long ago"
}

// KeyForm is what the create form posts.
type KeyForm struct {
	Tenant     string
	Name       string
	Scopes     []string
	Patterns   string // pattern scopes as typed, such as "model:gpt-* tool:lookup_*"
	RatePerMin string
	Burst      string
	ExpiresAt  string // a date, YYYY-MM-DD
}

// KeyFormView is the create form with its choices.
type KeyFormView struct {
	Form    KeyForm
	Tenants []tenants.Tenant // in scope
	Skills  []string
	Tools   []string
	Models  []string // model aliases (enabled deployments)
	Errors  FieldErrors
}

// KeyCreatedView shows a new key and, once, its secrets.
type KeyCreatedView struct {
	Key            keys.Key
	Secret         string // the key, "wk_…"; empty after the first view
	CallbackSecret string // "whsec_…"; empty after the first view
}

// KeyShowView is a key's page.
type KeyShowView struct {
	Pending   []changes.Change // the key's changes waiting for a second admin
	Key       keys.Key
	State     string // KeyActive, KeyRevoked or KeyExpired
	CreatedBy string // display name of the creator
	// CallbackSecret is the secret a rotation just made, shown once.
	CallbackSecret string
	// PreviousCallbackValid: the secret the last rotation replaced still
	// signs, until Key.PreviousCallbackUntil.
	PreviousCallbackValid bool
	// ModelLimits is the key's model limits form (models.KeyLimits).
	ModelLimits KeyModelLimitsForm
	// ScopesForm, RateForm and ExpiryForm change the key's scopes,
	// request rate limit and expiry (not offered for a revoked key).
	ScopesForm KeyScopesForm
	RateForm   KeyRateForm
	ExpiryForm KeyExpiryForm
}

// ScopeChoices are the scopes offered as boxes: skill, tool and model
// alias names.
type ScopeChoices struct {
	Skills, Tools, Models []string
}

// KeyScopesForm is the key page's scopes form, as ticked and typed.
type KeyScopesForm struct {
	Choices  ScopeChoices
	Scopes   []string // ticked
	Patterns string   // typed: patterns, MCP tools, and scopes no box offers
	Errors   FieldErrors
	Notice   string
}

// KeyRateForm is the key page's request rate limit form, as typed.
type KeyRateForm struct {
	PerMinute, Burst string
	Errors           FieldErrors
	Notice           string
}

// KeyExpiryForm is the key page's expiry form, as typed.
type KeyExpiryForm struct {
	ExpiresAt string // a date, YYYY-MM-DD; empty: the key does not expire
	Errors    FieldErrors
	Notice    string
}

// KeyCallbackRotateView asks before rotating a key's callback secret.
type KeyCallbackRotateView struct {
	Key                   keys.Key
	PreviousCallbackValid bool
}

// callbackGrace says how long a replaced callback secret keeps signing.
func callbackGrace() string {
	return strconv.Itoa(int(keys.CallbackGrace/time.Hour)) + " hours"
}

// KeyRevokeView asks before revoking a key.
type KeyRevokeView struct {
	Key   keys.Key
	State string
}

func (v KeyCallbackRotateView) confirm() ConfirmView {
	k := v.Key
	c := ConfirmView{
		Title:  text("Generate a callback secret for " + k.Name + "?"),
		Effect: keyCallbackRotateEffect(k),
		Action: templ.SafeURL("/keys/" + k.ID + "/callback-secret/rotate"),
		Submit: "Generate callback secret",
		Cancel: templ.SafeURL("/keys/" + k.ID),
	}
	if k.HasCallbackSecret {
		c.Title = text("Rotate the callback secret of " + k.Name + "?")
		c.Submit = "Rotate callback secret"
	}
	if v.PreviousCallbackValid {
		c.More = keyCallbackEndsPrevious(k)
	}
	return c
}

func (v KeyRevokeView) confirm() ConfirmView {
	c := ConfirmView{
		Title:  text("Revoke " + v.Key.Name + "?"),
		Effect: keyRevokeEffect(v.Key),
		Action: templ.SafeURL("/keys/" + v.Key.ID + "/revoke"),
		Submit: "Revoke key",
		Danger: true,
		Cancel: "/keys",
	}
	if v.State == KeyRevoked {
		c.Warning = text("This key is already revoked. Confirming changes nothing.")
	}
	return c
}

// scopeTitle explains a pattern scope (keys.IsPattern) where it is shown;
// "" for a scope that names one thing.
func scopeTitle(scope string) string {
	if !keys.IsPattern(scope) {
		return ""
	}
	kind, name, _ := strings.Cut(scope, ":")
	words := map[string]string{"skill": "skill", "tool": "tool", "model": "model alias", "mcp": "MCP tool"}[kind]
	if words == "" {
		words = kind
	}
	if name == "*" {
		return "A pattern: every " + words + ", also those added later."
	}
	return "A pattern: every " + words + " whose name starts with " + strings.TrimSuffix(name, "*") + ", also those added later."
}

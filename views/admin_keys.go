package views

import (
	"strconv"
	"time"

	"github.com/wardenhq/warden/agent/keys"
	"github.com/wardenhq/warden/store"
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
	Tenants  []store.Tenant // for the filter: those in scope
	Tenant   string         // filter, empty for all in scope
	Total    int            // keys matching the filter
	PrevPage string
	NextPage string
	Notice   string
}

// KeyForm is what the create form posts.
type KeyForm struct {
	Tenant     string
	Name       string
	Scopes     []string
	RatePerMin string
	Burst      string
	ExpiresAt  string // a date, YYYY-MM-DD
}

// KeyFormView is the create form with its choices.
type KeyFormView struct {
	Form    KeyForm
	Tenants []store.Tenant // in scope
	Skills  []string
	Tools   []string
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
	Key       keys.Key
	State     string // KeyActive, KeyRevoked or KeyExpired
	CreatedBy string // display name of the creator
	// CallbackSecret is the secret a rotation just made, shown once.
	CallbackSecret string
	// PreviousCallbackValid: the secret the last rotation replaced still
	// signs, until Key.PreviousCallbackUntil.
	PreviousCallbackValid bool
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

package approvals

import (
	"time"

	"github.com/wardenhq/warden/platform/risk"
)

// Tool is what an action needs to know of the tool it calls; the tool
// catalog gives it with catalog.ForApproval.
type Tool struct {
	Name          string
	Impact        risk.Impact
	Reversibility risk.Reversibility
	ApprovalTTL   time.Duration // how long the request stays pending; 24 h when zero
}

// Sealer encrypts what an action keeps secret at rest (its arguments and
// callback URL), bound to aad, and opens it again for execution.
// platform/seal implements it.
type Sealer interface {
	Seal(plaintext []byte, aad string) string
	Open(sealed, aad string) ([]byte, error)
}

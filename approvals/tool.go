package approvals

import (
	"github.com/wardenhq/warden/platform/redact"
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
	// Personal is what the tool's argument schema declares personal
	// (x-warden-personal), TargetArg the argument that names its target:
	// Show tokenises them whole in everything people read of the call.
	Personal  *redact.Declared
	TargetArg string
	// DeclaresAmount: the catalog names the tool's amount argument, so an
	// action's amount is what the provider receives, and it is weighed
	// against what is left of its target's total (refundable.go). An
	// amount the agent merely states is not.
	DeclaresAmount bool
}

// Sealer encrypts what an action keeps secret at rest (its arguments and
// callback URL), bound to aad, and opens it again for execution.
// platform/seal implements it.
type Sealer interface {
	Seal(plaintext []byte, aad string) string
	Open(sealed, aad string) ([]byte, error)
}

package approvals

import "time"

// Impact is an action's risk class: low for reads, medium for internal
// writes, high for external writes, money, identity and what cannot be
// undone. High impact needs a person's approval.
type Impact string

const (
	ImpactLow    Impact = "low"    // reads
	ImpactMedium Impact = "medium" // internal writes
	ImpactHigh   Impact = "high"   // external writes, money, identity, irreversible: needs approval
)

// Reversibility says how an executed action can be undone.
type Reversibility string

const (
	Reversible    Reversibility = "reversible"
	Compensatable Reversibility = "compensatable" // has a compensating tool: Reverse asks for it
	Irreversible  Reversibility = "irreversible"
)

// Tool is what an action needs to know of the tool it calls; the tool
// catalog (agent/tools) gives it with Tool.ForApproval.
type Tool struct {
	Name          string
	Impact        Impact
	Reversibility Reversibility
	ApprovalTTL   time.Duration // how long the request stays pending; 24 h when zero
}

// Sealer encrypts what an action keeps secret at rest (its arguments and
// callback URL), bound to aad, and opens it again for execution.
// agent/seal implements it.
type Sealer interface {
	Seal(plaintext []byte, aad string) string
	Open(sealed, aad string) ([]byte, error)
}

// Package tools is Warden's tool catalog and the contract every tool
// provider implements: what a tool may do (impact, reversibility), how it
// is called (provider, timeout, retries), what arguments it accepts (JSON
// schema) and whether it is switched on.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/risk"
)

// Provider kinds.
const (
	ProviderBuiltin  = "builtin"  // the simulated orders-and-payments provider
	ProviderHTTP     = "http"     // a webhook Warden POSTs to
	ProviderExternal = "external" // the agent executes it and reports back
	ProviderMCP      = "mcp"      // a tool of an upstream MCP server (package mcpservers)
)

// Tool is one catalog entry.
type Tool struct {
	Name             string
	Description      string
	Impact           risk.Impact
	Reversibility    risk.Reversibility
	CompensatingTool string // for risk.Compensatable
	Provider         string
	WebhookURL       string // for ProviderHTTP
	Timeout          time.Duration
	MaxAttempts      int             // total attempts, first included
	ArgsSchema       json.RawMessage // JSON Schema for the arguments object
	Enabled          bool            // the kill switch
	ApprovalTTL      time.Duration   // how long an approval request stays pending
	UnitCostMicros   int64           // price of one tool unit
	// The arguments people decide on, named by the catalog rather than
	// guessed: AmountArg holds the amount in minor units (a JSON integer),
	// CurrencyArg its ISO 4217 code, TargetArg what the call acts on (an
	// order, account or customer). Empty when the tool has none.
	AmountArg   string
	CurrencyArg string
	TargetArg   string
	// What is left to refund on a target (approvals.Refundable): TotalArg
	// is the argument holding the target's total (an order's amount) in
	// minor units of the call's currency; a lookup tool instead names the
	// members of its result that hold its target's total and that
	// total's ISO 4217 currency (TotalResult, TotalCurrencyResult), and
	// Warden keeps what each lookup answered. Empty when the tool has
	// none.
	TotalArg            string
	TotalResult         string
	TotalCurrencyResult string
	// Dependency names the guard's breaker and bulkhead the tool's calls
	// share ("" : its own, by tool name): the tools of one upstream MCP
	// server share the server's.
	Dependency string
	// AtMostOnce marks a provider that takes no idempotency key (an
	// upstream MCP server): a call that may have reached it is never sent
	// again. The ledger records any failure as final and sends a review
	// to a person, instead of retrying, when an earlier attempt's outcome
	// was lost (execution/ledger).
	AtMostOnce bool
}

// Personal is what the tool's argument schema declares personal with
// x-warden-personal (docs/redaction.md), nil when nothing. A mark of an
// unknown kind is refused when the catalog saves the tool (and an MCP
// server's is tokenised as "personal"), so the error is dropped here.
func (t Tool) Personal() *redact.Declared {
	d, _ := redact.DeclaredIn(t.ArgsSchema)
	return d
}

// Call is one invocation of a tool.
type Call struct {
	Tool           string
	Args           json.RawMessage
	IdempotencyKey string // stable for the call: retries and recovery reuse it
	Tenant         string
}

// Result is what a provider answers for a successful call.
type Result struct {
	Output json.RawMessage // the tool's answer or receipt
	Units  int64           // tool units consumed (priced by the catalog)
}

// Provider executes tool calls. Implementations must be idempotent on
// Call.IdempotencyKey: executing a key again returns the first result.
type Provider interface {
	Execute(ctx context.Context, t Tool, call Call) (Result, error)
}

// Looker is implemented by providers that can say whether a call with this
// idempotency key was committed (used to recover from crashes).
type Looker interface {
	Lookup(ctx context.Context, t Tool, idempotencyKey string) (Result, LookupStatus, error)
}

// Checker is implemented by providers that can tell, before a call is
// put to approvers, that it cannot run for the caller's tenant: its
// arguments are refused or its target (an order, a refund) is unknown to
// the provider for that tenant. Check records nothing and answers nil
// when the call may be proposed; the call is checked again, for good, by
// Execute once approved.
type Checker interface {
	Check(ctx context.Context, t Tool, call Call) error
}

// Check asks p, when it is a Checker, whether call may be proposed; a
// provider that cannot tell (an HTTP webhook) has no objection.
func Check(ctx context.Context, p Provider, t Tool, call Call) error {
	if c, ok := p.(Checker); ok {
		return c.Check(ctx, t, call)
	}
	return nil
}

// LookupStatus is a provider's answer about an idempotency key.
type LookupStatus string

const (
	LookupCommitted LookupStatus = "committed"
	LookupNotFound  LookupStatus = "not_found"
	LookupUnknown   LookupStatus = "unknown"
)

// ErrorKind classifies a provider failure.
type ErrorKind string

const (
	Transient ErrorKind = "transient" // worth retrying with the same key
	Terminal  ErrorKind = "terminal"  // retrying cannot help
)

// Error is a classified provider failure.
type Error struct {
	Kind   ErrorKind
	Reason string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Kind, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// IsTransient reports whether err is worth retrying. Unclassified errors
// are not: only what a provider says is transient is retried.
func IsTransient(err error) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Kind == Transient
}

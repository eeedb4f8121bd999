package sim

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/tools"
)

// The simulator's tools.
const (
	ToolLookupOrder         = "lookup_order"
	ToolCheckChangeWindow   = "check_change_window"
	ToolSubmitChangeRequest = "submit_change_request"
	ToolIssueRefund         = "issue_refund"
	ToolReverseRefund       = "reverse_refund"
	ToolSendCustomerEmail   = "send_customer_email"
)

// Prices of one tool unit per impact class, in micro-units.
const (
	costLow    = 1_000
	costMedium = 5_000
	costHigh   = 20_000
)

// Argument limits, the same in the schemas and in Execute.
const (
	maxChangeLen  = 2000
	maxSubjectLen = 200
	maxBodyLen    = 10000
)

const draft = `"$schema": "https://json-schema.org/draft/2020-12/schema"`

var schemas = map[string]string{
	ToolLookupOrder: `{` + draft + `,
		"type": "object",
		"properties": {
			"order_id": {"type": "string", "pattern": "^ORD-[0-9]{4,}$", "description": "The order, such as ORD-1004."}
		},
		"required": ["order_id"],
		"additionalProperties": false
	}`,
	ToolCheckChangeWindow: `{` + draft + `,
		"type": "object",
		"properties": {
			"order_id": {"type": "string", "pattern": "^ORD-[0-9]{4,}$", "description": "The order, such as ORD-1001."}
		},
		"required": ["order_id"],
		"additionalProperties": false
	}`,
	ToolSubmitChangeRequest: `{` + draft + `,
		"type": "object",
		"properties": {
			"order_id": {"type": "string", "pattern": "^ORD-[0-9]{4,}$", "description": "The order to change; its change window must be open."},
			"change": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "What the customer wants changed, in plain words."}
		},
		"required": ["order_id", "change"],
		"additionalProperties": false
	}`,
	ToolIssueRefund: `{` + draft + `,
		"type": "object",
		"properties": {
			"order_id": {"type": "string", "pattern": "^ORD-[0-9]{4,}$", "description": "The order refunded."},
			"amount_minor": {"type": "integer", "minimum": 1, "description": "Amount in minor units (cents); with the order's refunds not reversed, at most what it paid."},
			"currency": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code; must be the order's currency."},
			"account": {"type": "string", "minLength": 4, "maxLength": 42, "description": "The order's payment account: the full IBAN (spaces allowed) or its last four characters."}
		},
		"required": ["order_id", "amount_minor", "currency", "account"],
		"additionalProperties": false
	}`,
	ToolReverseRefund: `{` + draft + `,
		"type": "object",
		"properties": {
			"refund_id": {"type": "string", "pattern": "^rf_[0-9a-z]{26}$", "description": "The refund to take back, from issue_refund's receipt."}
		},
		"required": ["refund_id"],
		"additionalProperties": false
	}`,
	ToolSendCustomerEmail: `{` + draft + `,
		"type": "object",
		"properties": {
			"order_id": {"type": "string", "pattern": "^ORD-[0-9]{4,}$", "description": "The order the email is about."},
			"to": {"type": "string", "format": "email", "maxLength": 254, "description": "Must be the order's customer email."},
			"subject": {"type": "string", "minLength": 1, "maxLength": 200},
			"body": {"type": "string", "minLength": 1, "maxLength": 10000}
		},
		"required": ["order_id", "to", "subject", "body"],
		"additionalProperties": false
	}`,
}

// Catalog returns the simulator's tools as catalog entries with their
// defaults: built-in provider, enabled, 2s timeout, 3 attempts, approvals
// pending for 24h, and a unit price by impact class. The entries are the
// caller's own to adjust.
func Catalog() []tools.Tool {
	entry := func(name, desc string, impact risk.Impact, rev risk.Reversibility, compensating string) tools.Tool {
		var schema bytes.Buffer
		if err := json.Compact(&schema, []byte(schemas[name])); err != nil {
			panic("sim: schema of " + name + ": " + err.Error())
		}
		cost := int64(costLow)
		switch impact {
		case risk.ImpactMedium:
			cost = costMedium
		case risk.ImpactHigh:
			cost = costHigh
		}
		return tools.Tool{
			Name:             name,
			Description:      desc,
			Impact:           impact,
			Reversibility:    rev,
			CompensatingTool: compensating,
			Provider:         tools.ProviderBuiltin,
			Timeout:          2 * time.Second,
			MaxAttempts:      3,
			ArgsSchema:       json.RawMessage(schema.Bytes()),
			Enabled:          true,
			ApprovalTTL:      24 * time.Hour,
			UnitCostMicros:   cost,
		}
	}
	// The catalog names the arguments people decide on: the amount and
	// currency of a refund, and what each call acts on.
	declare := func(t tools.Tool, amount, currency, target string) tools.Tool {
		t.AmountArg, t.CurrencyArg, t.TargetArg = amount, currency, target
		return t
	}
	// The lookup answers each order's amount and currency: Warden keeps
	// them, and a refund asking for more than is left of the order is
	// refused (exceeds_refundable).
	lookup := declare(entry(ToolLookupOrder,
		"Look up an order: status, amount, items, customer and payment account.",
		risk.ImpactLow, risk.Reversible, ""), "", "", "order_id")
	lookup.TotalResult, lookup.TotalCurrencyResult = "amount_minor", "currency"
	return []tools.Tool{
		lookup,
		entry(ToolCheckChangeWindow,
			"Check whether an order can still be changed. The window is open until the order ships.",
			risk.ImpactLow, risk.Reversible, ""),
		declare(entry(ToolSubmitChangeRequest,
			"Ask the shop to change an order whose change window is open (address, items, delivery notes).",
			risk.ImpactMedium, risk.Reversible, ""), "", "", "order_id"),
		declare(entry(ToolIssueRefund,
			"Refund money for an order to the order's payment account. Moves money: needs approval.",
			risk.ImpactHigh, risk.Compensatable, ToolReverseRefund), "amount_minor", "currency", "order_id"),
		declare(entry(ToolReverseRefund,
			"Take back a refund issued in error. Moves money and cannot itself be undone.",
			risk.ImpactHigh, risk.Irreversible, ""), "", "", "refund_id"),
		declare(entry(ToolSendCustomerEmail,
			"Send an email to the order's customer. Cannot be unsent.",
			risk.ImpactHigh, risk.Irreversible, ""), "", "", "order_id"),
	}
}

// ExampleArgs returns valid arguments for each tool, keyed by tool name:
// the demo's calls (the refund is the approval demo's "Refund $2,400.00 to
// account 9182"). reverse_refund's refund id is a well-formed placeholder;
// a real one comes from issue_refund's receipt.
func ExampleArgs() map[string]json.RawMessage {
	return map[string]json.RawMessage{
		ToolLookupOrder:         json.RawMessage(`{"order_id":"ORD-1004"}`),
		ToolCheckChangeWindow:   json.RawMessage(`{"order_id":"ORD-1001"}`),
		ToolSubmitChangeRequest: json.RawMessage(`{"order_id":"ORD-1001","change":"Please deliver to the side door instead of the front door."}`),
		ToolIssueRefund:         json.RawMessage(`{"order_id":"ORD-1004","amount_minor":240000,"currency":"USD","account":"GB74BUKB20201555559182"}`),
		ToolReverseRefund:       json.RawMessage(`{"refund_id":"rf_01jnq4z7c8m2x5v9w3k6h1t0ab"}`),
		ToolSendCustomerEmail:   json.RawMessage(`{"order_id":"ORD-1004","to":"daniel.whitaker@example.com","subject":"Your refund for order ORD-1004","body":"We have refunded USD 2,400.00 to your account ending 9182. It should arrive within 5 business days."}`),
	}
}

// Package mcpshop is a small upstream MCP server that moves money, built
// with the official Go SDK, for tests, the benchmark (bench/mcp) and the
// example agent (examples/openai-agents-mcp-refund): the kind of server an
// admin registers behind Warden's /mcp door. It serves Streamable HTTP,
// stateless, with two tools over the simulated shop's demo orders
// (sim.DemoOrders):
//
//	lookup_order  low impact: an order id → its status, amount, currency,
//	              the customer's e-mail and the payment account's last
//	              four characters
//	issue_refund  high impact: order_id, amount_minor, currency (and an
//	              optional reason) → a refund, recorded in memory; it
//	              refuses an unknown order, another currency, and more
//	              than what is left to refund of the order's total
//
// It counts every call of each tool (refused ones too), so a test can
// assert that a refund reached it at most once.
//
//	shop := mcpshop.New()
//	srv := httptest.NewServer(shop.Handler())
//	// register srv.URL as an MCP server; shop.RefundCalls(), shop.Refunds()
package mcpshop

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/tools/sim"
)

// Tool names.
const (
	ToolLookupOrder = "lookup_order"
	ToolIssueRefund = "issue_refund"
)

// Shop is the server's state: its orders, the refunds it made and how
// often each tool was called. It is safe for concurrent use.
type Shop struct {
	server *mcp.Server

	lookups, refundCalls atomic.Int64

	mu      sync.Mutex
	orders  map[string]sim.Order
	refunds []Refund
}

// Refund is one refund the shop made.
type Refund struct {
	ID          string    `json:"refund_id"`
	OrderID     string    `json:"order_id"`
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason,omitempty"`
	At          time.Time `json:"refunded_at"`
}

// LookupIn is lookup_order's input.
type LookupIn struct {
	OrderID string `json:"order_id" jsonschema:"the order, such as ORD-1008"`
}

// Order is lookup_order's answer.
type Order struct {
	OrderID       string   `json:"order_id"`
	Status        string   `json:"status" jsonschema:"placed, packed, shipped, delivered or cancelled"`
	AmountMinor   int64    `json:"amount_minor" jsonschema:"what the customer paid, in minor units (cents)"`
	Currency      string   `json:"currency" jsonschema:"ISO 4217 code"`
	RefundedMinor int64    `json:"refunded_minor" jsonschema:"what was refunded so far, in minor units"`
	CustomerEmail string   `json:"customer_email"`
	AccountLast4  string   `json:"account_last4" jsonschema:"the last four characters of the payment account"`
	Items         []string `json:"items"`
}

// RefundIn is issue_refund's input.
type RefundIn struct {
	OrderID     string `json:"order_id" jsonschema:"the order to refund, such as ORD-1008"`
	AmountMinor int64  `json:"amount_minor" jsonschema:"the amount to refund in minor units (cents), at most what is left of the order's total"`
	Currency    string `json:"currency" jsonschema:"ISO 4217 code of the order, such as USD"`
	Reason      string `json:"reason,omitempty" jsonschema:"why, in the customer's words"`
}

// New returns a shop with the simulator's demo orders and no refunds.
func New() *Shop {
	s := &Shop{orders: map[string]sim.Order{}}
	for _, o := range sim.DemoOrders() {
		s.orders[o.ID] = o
	}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "shop", Title: "Warden's example shop", Version: "1"}, nil)
	mcp.AddTool(s.server, &mcp.Tool{
		Name:        ToolLookupOrder,
		Description: "Look an order up: its status, what the customer paid and in which currency, what was refunded, the customer's e-mail and the last four characters of the payment account.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.lookup)
	mcp.AddTool(s.server, &mcp.Tool{
		Name:        ToolIssueRefund,
		Description: "Refund money to an order's payment account. Refuses more than what is left of the order's total, and another currency than the order's.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: false},
	}, s.refund)
	return s
}

func ptr[T any](v T) *T { return &v }

// Server is the MCP server itself (for an in-memory transport).
func (s *Shop) Server() *mcp.Server { return s.server }

// Handler serves the shop over Streamable HTTP, stateless: every POST is
// answered on its own, as Warden's door calls it.
func (s *Shop) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// LookupCalls is how many lookup_order calls arrived.
func (s *Shop) LookupCalls() int64 { return s.lookups.Load() }

// RefundCalls is how many issue_refund calls arrived, refused ones too.
func (s *Shop) RefundCalls() int64 { return s.refundCalls.Load() }

// Refunds lists the refunds made, in order.
func (s *Shop) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Refund(nil), s.refunds...)
}

// failure is a tool error: the model reads it, the call itself succeeded.
func failure(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func (s *Shop) lookup(_ context.Context, _ *mcp.CallToolRequest, in LookupIn) (*mcp.CallToolResult, Order, error) {
	s.lookups.Add(1)
	id := strings.ToUpper(strings.TrimSpace(in.OrderID))
	s.mu.Lock()
	o, ok := s.orders[id]
	s.mu.Unlock()
	if !ok {
		return failure("No order %s.", in.OrderID), Order{}, nil
	}
	out := Order{OrderID: o.ID, Status: o.Status, AmountMinor: o.AmountMinor, Currency: o.Currency, RefundedMinor: o.RefundedMinor,
		CustomerEmail: o.CustomerEmail, AccountLast4: o.AccountLast4}
	for _, it := range o.Items {
		out.Items = append(out.Items, it.Name)
	}
	return nil, out, nil
}

func (s *Shop) refund(_ context.Context, _ *mcp.CallToolRequest, in RefundIn) (*mcp.CallToolResult, Refund, error) {
	s.refundCalls.Add(1)
	id := strings.ToUpper(strings.TrimSpace(in.OrderID))
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	switch {
	case !ok:
		return failure("No order %s.", in.OrderID), Refund{}, nil
	case in.AmountMinor <= 0:
		return failure("The amount must be positive, in minor units."), Refund{}, nil
	case !strings.EqualFold(in.Currency, o.Currency):
		return failure("Order %s was paid in %s, not %s.", o.ID, o.Currency, in.Currency), Refund{}, nil
	case in.AmountMinor > o.AmountMinor-o.RefundedMinor:
		return failure("Order %s has %d %s left to refund (of %d paid); %d is more.", o.ID, o.AmountMinor-o.RefundedMinor, o.Currency, o.AmountMinor, in.AmountMinor), Refund{}, nil
	}
	o.RefundedMinor += in.AmountMinor
	s.orders[id] = o
	r := Refund{ID: fmt.Sprintf("rf_shop_%d", len(s.refunds)+1), OrderID: o.ID, AmountMinor: in.AmountMinor, Currency: o.Currency, Reason: in.Reason, At: time.Now().UTC()}
	s.refunds = append(s.refunds, r)
	return nil, r, nil
}

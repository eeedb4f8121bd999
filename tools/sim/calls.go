package sim

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/platform/store"

	"github.com/oklog/ulid/v2"

	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/skills"
)

// LookupOrderArgs are lookup_order's arguments, {"order_id": "ORD-1004"}.
// It answers the Order, payment account and customer email included.
// Impact low, reversible (a read).
type LookupOrderArgs struct {
	OrderID string `json:"order_id"`
}

// CheckChangeWindowArgs are check_change_window's arguments,
// {"order_id": "ORD-1001"}. It answers a ChangeWindow. Impact low,
// reversible (a read).
type CheckChangeWindowArgs struct {
	OrderID string `json:"order_id"`
}

// ChangeWindow says whether an order can still be changed. The window is
// open while the order is placed or packed and closes at its dispatch
// cut-off, 48 hours after it was placed; it depends on the order's state
// alone, never on the clock, so the answer is deterministic.
type ChangeWindow struct {
	OrderID  string    `json:"order_id"`
	Open     bool      `json:"open"`
	ClosesAt time.Time `json:"closes_at"`
}

// SubmitChangeRequestArgs are submit_change_request's arguments,
// {"order_id": "ORD-1001", "change": "deliver to the side door"}: change
// is 1 to 2000 characters. It answers a ChangeReceipt, and refuses
// (Terminal) when the order's change window is closed. Impact medium,
// reversible (another request changes it back).
type SubmitChangeRequestArgs struct {
	OrderID string `json:"order_id"`
	Change  string `json:"change"`
}

// ChangeReceipt is submit_change_request's answer.
type ChangeReceipt struct {
	ChangeID string `json:"change_id"`
	OrderID  string `json:"order_id"`
	Status   string `json:"status"` // "submitted"
}

// IssueRefundArgs are issue_refund's arguments, {"order_id": "ORD-1004",
// "amount_minor": 240000, "currency": "USD", "account":
// "GB74BUKB20201555559182"}. Money goes back only to the order's payment
// account, named in full (spaces and case ignored) or by its last four
// characters; the currency must be the order's; the amount is positive,
// and together with the order's earlier refunds that were not reversed it
// is at most what the order paid, as a real payments provider holds it.
// Anything else is refused (Terminal). It answers a RefundReceipt. Impact
// high, compensatable by reverse_refund.
//
// Tests of exactly-once refund a small part of an order, so that a
// duplicate still fits under the cap and shows as a second effect
// (EffectCount, Order.RefundedMinor) rather than as a refusal.
type IssueRefundArgs struct {
	OrderID     string `json:"order_id"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	Account     string `json:"account"`
}

// RefundReceipt is issue_refund's answer. It names the account by its
// last four characters only.
type RefundReceipt struct {
	RefundID     string `json:"refund_id"`
	OrderID      string `json:"order_id"`
	Status       string `json:"status"` // "refunded"
	AmountMinor  int64  `json:"amount_minor"`
	Currency     string `json:"currency"`
	AccountLast4 string `json:"account_last4"`
}

// ReverseRefundArgs are reverse_refund's arguments, {"refund_id":
// "rf_..."}. It takes back a refund issued in error and answers a
// ReversalReceipt; an unknown or already reversed refund is refused
// (Terminal). Impact high and irreversible: a reversal moves money again
// and is not itself undone — putting the money back is a new refund that
// needs its own approval.
type ReverseRefundArgs struct {
	RefundID string `json:"refund_id"`
}

// ReversalReceipt is reverse_refund's answer.
type ReversalReceipt struct {
	ReversalID  string `json:"reversal_id"`
	RefundID    string `json:"refund_id"`
	Status      string `json:"status"` // "reversed"
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

// SendCustomerEmailArgs are send_customer_email's arguments,
// {"order_id", "to", "subject", "body"}. to must be the order's customer
// email (case ignored): the tool writes to a shop's customer about their
// order, never to anyone else. subject is 1 to 200 characters, body 1 to
// 10000. It answers an EmailReceipt. Impact high, irreversible.
type SendCustomerEmailArgs struct {
	OrderID string `json:"order_id"`
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// EmailReceipt is send_customer_email's answer.
type EmailReceipt struct {
	MessageID string `json:"message_id"`
	OrderID   string `json:"order_id"`
	Status    string `json:"status"` // "sent"
}

type validator interface{ validate() error }

// op is one tool: its arguments and either a read, answered from the
// current state, or a write, run inside the effect's transaction.
type op struct {
	newArgs func() validator
	// Both act for tenant, and see its orders only.
	read func(ctx context.Context, db *sql.DB, tenant string, args validator) (any, error)
	// write gets the redactor for the free text it stores.
	write func(ctx context.Context, tx *store.Tx, r *redact.Redactor, tenant string, args validator) (any, error)
}

var ops = map[string]op{
	ToolLookupOrder: {
		newArgs: func() validator { return &LookupOrderArgs{} },
		read: func(ctx context.Context, db *sql.DB, tenant string, a validator) (any, error) {
			return loadOrder(ctx, db, tenant, a.(*LookupOrderArgs).OrderID)
		},
	},
	ToolCheckChangeWindow: {
		newArgs: func() validator { return &CheckChangeWindowArgs{} },
		read: func(ctx context.Context, db *sql.DB, tenant string, a validator) (any, error) {
			o, err := loadOrder(ctx, db, tenant, a.(*CheckChangeWindowArgs).OrderID)
			if err != nil {
				return nil, err
			}
			return windowOf(o), nil
		},
	},
	ToolSubmitChangeRequest: {
		newArgs: func() validator { return &SubmitChangeRequestArgs{} },
		write:   submitChangeRequest,
	},
	ToolIssueRefund: {
		newArgs: func() validator { return &IssueRefundArgs{} },
		write:   issueRefund,
	},
	ToolReverseRefund: {
		newArgs: func() validator { return &ReverseRefundArgs{} },
		write:   reverseRefund,
	},
	ToolSendCustomerEmail: {
		newArgs: func() validator { return &SendCustomerEmailArgs{} },
		write:   sendCustomerEmail,
	},
}

func (a *LookupOrderArgs) validate() error       { return requireOrderID(a.OrderID) }
func (a *CheckChangeWindowArgs) validate() error { return requireOrderID(a.OrderID) }

func (a *SubmitChangeRequestArgs) validate() error {
	if err := requireOrderID(a.OrderID); err != nil {
		return err
	}
	return checkText("change", a.Change, maxChangeLen)
}

func (a *IssueRefundArgs) validate() error {
	switch err := requireOrderID(a.OrderID); {
	case err != nil:
		return err
	case a.AmountMinor < 1:
		return terminal(`invalid arguments: "amount_minor" must be a positive number of minor units`)
	case len(a.Currency) != 3 || strings.ToUpper(a.Currency) != a.Currency:
		return terminal(`invalid arguments: "currency" must be a three-letter ISO 4217 code`)
	case len(normaliseAccount(a.Account)) < 4:
		return terminal(`invalid arguments: "account" is required`)
	}
	return nil
}

func (a *ReverseRefundArgs) validate() error {
	if a.RefundID == "" {
		return terminal(`invalid arguments: "refund_id" is required`)
	}
	return nil
}

func (a *SendCustomerEmailArgs) validate() error {
	if err := requireOrderID(a.OrderID); err != nil {
		return err
	}
	if _, err := mail.ParseAddress(a.To); err != nil || strings.ContainsAny(a.To, "<> ") {
		return terminal(`invalid arguments: "to" must be an email address`)
	}
	if err := checkText("subject", a.Subject, maxSubjectLen); err != nil {
		return err
	}
	return checkText("body", a.Body, maxBodyLen)
}

func requireOrderID(id string) error {
	if id == "" {
		return terminal(`invalid arguments: "order_id" is required`)
	}
	return nil
}

func checkText(field, s string, maxLen int) error {
	if n := utf8.RuneCountInString(s); n == 0 || n > maxLen {
		return terminal("invalid arguments: %q must be 1 to %d characters", field, maxLen)
	}
	return nil
}

// querier is what loadOrder needs of a pool or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkTarget refuses a call whose order or refund tenant does not have.
func checkTarget(ctx context.Context, q querier, tenant string, args validator) error {
	switch a := args.(type) {
	case interface{ order() string }:
		_, err := loadOrder(ctx, q, tenant, a.order())
		return err
	case *ReverseRefundArgs:
		_, err := loadRefund(ctx, q, tenant, a.RefundID)
		return err
	}
	return nil
}

func (a *LookupOrderArgs) order() string         { return a.OrderID }
func (a *CheckChangeWindowArgs) order() string   { return a.OrderID }
func (a *SubmitChangeRequestArgs) order() string { return a.OrderID }
func (a *IssueRefundArgs) order() string         { return a.OrderID }
func (a *SendCustomerEmailArgs) order() string   { return a.OrderID }

// loadOrder is tenant's order id; another tenant's is as unknown as one
// that does not exist, with the same sentence.
func loadOrder(ctx context.Context, q querier, tenant, id string) (Order, error) {
	var (
		o             Order
		items, placed string
	)
	err := q.QueryRowContext(ctx,
		`SELECT o.id, o.status, o.amount_minor, o.currency, o.customer_name, o.customer_email, o.account,
		        o.address, o.items, o.placed_at,
		        (SELECT coalesce(sum(r.amount_minor), 0) FROM refunds r
		         WHERE r.tenant = o.tenant AND r.order_id = o.id AND r.reversal_id IS NULL)
		 FROM orders o WHERE o.tenant = ? AND o.id = ?`, tenant, id).
		Scan(&o.ID, &o.Status, &o.AmountMinor, &o.Currency, &o.CustomerName, &o.CustomerEmail, &o.Account,
			&o.Address, &items, &placed, &o.RefundedMinor)
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, terminal("unknown order %s", id)
	}
	if err != nil {
		return Order{}, fmt.Errorf("load order %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(items), &o.Items); err != nil {
		return Order{}, fmt.Errorf("load order %s: items: %w", id, err)
	}
	if o.PlacedAt, err = time.Parse(time.RFC3339Nano, placed); err != nil {
		return Order{}, fmt.Errorf("load order %s: placed_at: %w", id, err)
	}
	o.AccountLast4 = last4(o.Account)
	return o, nil
}

func windowOf(o Order) ChangeWindow {
	return ChangeWindow{OrderID: o.ID, Open: changeOpen(o.Status), ClosesAt: o.PlacedAt.Add(changeWindow)}
}

func submitChangeRequest(ctx context.Context, tx *store.Tx, r *redact.Redactor, tenant string, a validator) (any, error) {
	args := a.(*SubmitChangeRequestArgs)
	o, err := loadOrder(ctx, tx, tenant, args.OrderID)
	if err != nil {
		return nil, err
	}
	if !changeOpen(o.Status) {
		return nil, terminal("the change window of order %s is closed: it is %s", o.ID, o.Status)
	}
	id := newID("chg_")
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO change_requests (id, tenant, order_id, change, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, tenant, o.ID, r.String(args.Change), now()); err != nil {
		return nil, fmt.Errorf("record change request: %w", err)
	}
	return ChangeReceipt{ChangeID: id, OrderID: o.ID, Status: "submitted"}, nil
}

func issueRefund(ctx context.Context, tx *store.Tx, _ *redact.Redactor, tenant string, a validator) (any, error) {
	args := a.(*IssueRefundArgs)
	o, err := loadOrder(ctx, tx, tenant, args.OrderID)
	if err != nil {
		return nil, err
	}
	account := normaliseAccount(args.Account)
	paid := skills.FormatMoney(o.AmountMinor, o.Currency)
	switch {
	case args.Currency != o.Currency:
		return nil, terminal("order %s was paid in %s, not %s", o.ID, o.Currency, args.Currency)
	case args.AmountMinor > o.AmountMinor:
		return nil, terminal("a refund of %s is more than the %s paid for order %s",
			skills.FormatMoney(args.AmountMinor, o.Currency), paid, o.ID)
	case args.AmountMinor > o.AmountMinor-o.RefundedMinor:
		// Written as a difference, which cannot overflow.
		return nil, terminal("refunds of order %s would total %s, more than the %s paid",
			o.ID, skills.FormatMoney(o.RefundedMinor+args.AmountMinor, o.Currency), paid)
	case account != o.Account && account != o.AccountLast4:
		return nil, terminal("account is not order %s's payment account", o.ID)
	}
	id := newID("rf_")
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO refunds (id, tenant, order_id, amount_minor, currency, account, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, tenant, o.ID, args.AmountMinor, o.Currency, o.Account, now()); err != nil {
		return nil, fmt.Errorf("record refund: %w", err)
	}
	return RefundReceipt{
		RefundID: id, OrderID: o.ID, Status: "refunded",
		AmountMinor: args.AmountMinor, Currency: o.Currency, AccountLast4: o.AccountLast4,
	}, nil
}

// refund is a refund as reverse_refund needs it.
type refund struct {
	amount   int64
	currency string
	reversal sql.NullString
}

// loadRefund is tenant's refund id; another tenant's is unknown.
func loadRefund(ctx context.Context, q querier, tenant, id string) (refund, error) {
	var rf refund
	err := q.QueryRowContext(ctx,
		`SELECT amount_minor, currency, reversal_id FROM refunds WHERE tenant = ? AND id = ?`, tenant, id).
		Scan(&rf.amount, &rf.currency, &rf.reversal)
	if errors.Is(err, sql.ErrNoRows) {
		return refund{}, terminal("unknown refund %s", id)
	}
	if err != nil {
		return refund{}, fmt.Errorf("load refund %s: %w", id, err)
	}
	return rf, nil
}

func reverseRefund(ctx context.Context, tx *store.Tx, _ *redact.Redactor, tenant string, a validator) (any, error) {
	args := a.(*ReverseRefundArgs)
	rf, err := loadRefund(ctx, tx, tenant, args.RefundID)
	if err != nil {
		return nil, err
	}
	if rf.reversal.Valid {
		return nil, terminal("refund %s was already reversed by %s", args.RefundID, rf.reversal.String)
	}
	id := newID("rv_")
	if _, err := tx.ExecContext(ctx, `UPDATE refunds SET reversal_id = ? WHERE tenant = ? AND id = ?`, id, tenant, args.RefundID); err != nil {
		return nil, fmt.Errorf("reverse refund %s: %w", args.RefundID, err)
	}
	return ReversalReceipt{ReversalID: id, RefundID: args.RefundID, Status: "reversed", AmountMinor: rf.amount, Currency: rf.currency}, nil
}

func sendCustomerEmail(ctx context.Context, tx *store.Tx, r *redact.Redactor, tenant string, a validator) (any, error) {
	args := a.(*SendCustomerEmailArgs)
	o, err := loadOrder(ctx, tx, tenant, args.OrderID)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(args.To, o.CustomerEmail) {
		return nil, terminal("recipient is not order %s's customer", o.ID)
	}
	id := newID("msg_")
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO emails (id, tenant, order_id, to_addr, subject, body, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, tenant, o.ID, o.CustomerEmail, r.String(args.Subject), r.String(args.Body), now()); err != nil {
		return nil, fmt.Errorf("record email: %w", err)
	}
	return EmailReceipt{MessageID: id, OrderID: o.ID, Status: "sent"}, nil
}

// newID is prefix and a lower-case ULID.
func newID(prefix string) string {
	return prefix + strings.ToLower(ulid.Make().String())
}

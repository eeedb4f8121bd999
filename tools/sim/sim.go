// Package sim is Warden's built-in demo provider: a simulated
// orders-and-payments system that stands in for the outside world an agent
// acts on. It keeps its own SQLite file, apart from Warden's database, as
// a real payments provider would keep its own books.
//
// Every call that changes something is idempotent on its Call's
// IdempotencyKey: the effect and its receipt are committed in one
// transaction together with a row keyed by the idempotency key, so a
// repeated key returns the first receipt and never a second effect. That
// is the provider half of exactly-once, and
// EffectCount lets tests count the effects that really happened.
//
// The tools, their arguments and their answers are documented on the
// argument types (LookupOrderArgs and the rest) and exported as JSON
// Schemas by Catalog.
//
// The simulator stands in for an outside system, but its file lives in
// Warden's data directory, so the free text it keeps of a call (a change
// request, an e-mail's subject and body) is redacted before it is stored
// (see docs/redaction.md and WithRedactor).
package sim

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/tools"
)

// schemaVersion is the simulator's database layout, kept in user_version.
// Version 2 stores change requests and e-mails redacted; opening a
// version 1 file redacts the rows it already holds. Version 3 gives every
// order, refund, change request and e-mail a tenant (a Warden tenant's
// slug); opening an older file gives the rows it holds to DemoTenant,
// whose demo data they are.
const schemaVersion = 3

const schemaSQL = `
-- An order belongs to one tenant: every read and write names the tenant,
-- and another tenant's order is unknown, as at a real provider where each
-- merchant has an account of its own.
CREATE TABLE IF NOT EXISTS orders (
	tenant         TEXT NOT NULL,
	id             TEXT NOT NULL,
	status         TEXT NOT NULL,
	amount_minor   INTEGER NOT NULL,
	currency       TEXT NOT NULL,
	customer_name  TEXT NOT NULL,
	customer_email TEXT NOT NULL,
	account        TEXT NOT NULL,
	address        TEXT NOT NULL,
	items          TEXT NOT NULL, -- JSON array of Item
	placed_at      TEXT NOT NULL,
	PRIMARY KEY (tenant, id)
);
-- One row per effect, keyed by the caller's idempotency key: the receipt
-- a repeated key gets back, and the digest that tells a retry from a
-- reuse of the key for something else.
CREATE TABLE IF NOT EXISTS effects (
	idempotency_key TEXT PRIMARY KEY,
	tool            TEXT NOT NULL,
	tenant          TEXT NOT NULL,
	args_digest     TEXT NOT NULL,
	receipt         TEXT NOT NULL,
	units           INTEGER NOT NULL,
	committed_at    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
	id           TEXT PRIMARY KEY,
	tenant       TEXT NOT NULL,
	order_id     TEXT NOT NULL,
	amount_minor INTEGER NOT NULL,
	currency     TEXT NOT NULL,
	account      TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	reversal_id  TEXT, -- set when reverse_refund took it back
	FOREIGN KEY (tenant, order_id) REFERENCES orders(tenant, id)
);
CREATE INDEX IF NOT EXISTS refunds_tenant_order ON refunds(tenant, order_id);
CREATE TABLE IF NOT EXISTS change_requests (
	id         TEXT PRIMARY KEY,
	tenant     TEXT NOT NULL,
	order_id   TEXT NOT NULL,
	change     TEXT NOT NULL,
	created_at TEXT NOT NULL,
	FOREIGN KEY (tenant, order_id) REFERENCES orders(tenant, id)
);
CREATE TABLE IF NOT EXISTS emails (
	id       TEXT PRIMARY KEY,
	tenant   TEXT NOT NULL,
	order_id TEXT NOT NULL,
	to_addr  TEXT NOT NULL,
	subject  TEXT NOT NULL,
	body     TEXT NOT NULL,
	sent_at  TEXT NOT NULL,
	FOREIGN KEY (tenant, order_id) REFERENCES orders(tenant, id)
);
`

// tenantTables are the tables version 3 gave a tenant column, children
// before their parent, and the columns they had before.
var tenantTables = []struct{ name, columns string }{
	{"emails", "id, order_id, to_addr, subject, body, sent_at"},
	{"change_requests", "id, order_id, change, created_at"},
	{"refunds", "id, order_id, amount_minor, currency, account, created_at, reversal_id"},
	{"orders", "id, status, amount_minor, currency, customer_name, customer_email, account, address, items, placed_at"},
}

// Provider is the simulator. It implements tools.Provider, tools.Looker
// and tools.Checker and is safe for concurrent use.
type Provider struct {
	path     string
	write    *sql.DB // one connection, BEGIN IMMEDIATE: effects serialise here
	read     *sql.DB
	redactor *redact.Redactor

	mu     sync.Mutex
	faults Faults
}

var (
	_ tools.Provider = (*Provider)(nil)
	_ tools.Looker   = (*Provider)(nil)
	_ tools.Checker  = (*Provider)(nil)
)

func dsn(path, txlock string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", txlock)
	return "file:" + path + "?" + q.Encode()
}

// An Option configures a Provider.
type Option func(*Provider)

// WithRedactor redacts the free text the simulator stores with r, the
// installation's redactor, so its tokens match those in Warden's traces.
// Without it the simulator redacts under a key of its own, made at Open:
// nothing is stored in the clear either way, but the tokens then match
// nothing else.
func WithRedactor(r *redact.Redactor) Option {
	return func(p *Provider) { p.redactor = r }
}

// Open opens the simulator's database at path, creating it (mode 0600)
// with its schema and the demo orders when it is new.
func Open(ctx context.Context, path string, opts ...Option) (*Provider, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open simulator database: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("restrict simulator database: %w", err)
	}
	write, err := sql.Open(store.SQLiteDriver, dsn(path, "immediate"))
	if err != nil {
		return nil, fmt.Errorf("open simulator database: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	read, err := sql.Open(store.SQLiteDriver, dsn(path, "deferred"))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open simulator database: %w", err)
	}
	n := max(4, runtime.NumCPU()*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)

	p := &Provider{path: path, write: write, read: read}
	for _, o := range opts {
		o(p)
	}
	if p.redactor == nil {
		key := make([]byte, 32)
		rand.Read(key)
		p.redactor = redact.New(key)
	}
	if err := p.init(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("simulator database %s: %w", path, err)
	}
	return p, nil
}

// init creates the schema and seeds the demo orders into an empty
// database, once, even when two processes open the file together.
func (p *Provider) init(ctx context.Context) error {
	return p.transact(ctx, func(tx *store.Tx) error {
		var version int
		if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
			return err
		}
		if version > schemaVersion {
			return fmt.Errorf("schema version %d is newer than this program's %d", version, schemaVersion)
		}
		var older int
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'orders'`).Scan(&older); err != nil {
			return err
		}
		if older > 0 && version < 3 {
			if err := giveToDemoTenant(ctx, tx); err != nil {
				return fmt.Errorf("give stored orders a tenant: %w", err)
			}
		} else if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		if version < 2 {
			if err := p.redactStored(ctx, tx); err != nil {
				return fmt.Errorf("redact stored text: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
			return err
		}
		var count int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&count); err != nil {
			return err
		}
		if count > 0 {
			return nil
		}
		return insertOrders(ctx, tx, DemoTenant, DemoOrders())
	})
}

// giveToDemoTenant rebuilds the tables of a file older than version 3
// with a tenant column, giving every row to DemoTenant: before version 3
// the only orders were the demo's. SQLite cannot change a primary key in
// place, so the old tables are renamed aside, copied and dropped.
func giveToDemoTenant(ctx context.Context, tx *store.Tx) error {
	for _, t := range tenantTables {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+t.name+` RENAME TO `+t.name+`_v2`); err != nil {
			return fmt.Errorf("set %s aside: %w", t.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	// Parents first when copying, children first when dropping.
	for i := len(tenantTables) - 1; i >= 0; i-- {
		t := tenantTables[i]
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+t.name+` (tenant, `+t.columns+`) SELECT ?, `+t.columns+` FROM `+t.name+`_v2`,
			DemoTenant); err != nil {
			return fmt.Errorf("copy %s: %w", t.name, err)
		}
	}
	for _, t := range tenantTables {
		if _, err := tx.ExecContext(ctx, `DROP TABLE `+t.name+`_v2`); err != nil {
			return fmt.Errorf("drop the old %s: %w", t.name, err)
		}
	}
	return nil
}

// insertOrders adds orders to tenant's.
func insertOrders(ctx context.Context, tx *store.Tx, tenant string, orders []Order) error {
	for _, o := range orders {
		items, err := json.Marshal(o.Items)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO orders (tenant, id, status, amount_minor, currency, customer_name, customer_email, account, address, items, placed_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			tenant, o.ID, o.Status, o.AmountMinor, o.Currency, o.CustomerName, o.CustomerEmail,
			o.Account, o.Address, string(items), formatTime(o.PlacedAt)); err != nil {
			return fmt.Errorf("seed order %s: %w", o.ID, err)
		}
	}
	return nil
}

// AddOrders adds orders to tenant's, as a shop taking orders would; a
// tenant's order ID is unique within the tenant. Tests use it to give a
// second tenant orders of its own.
func (p *Provider) AddOrders(ctx context.Context, tenant string, orders ...Order) error {
	if tenant == "" {
		return errors.New("add orders: no tenant")
	}
	if err := p.transact(ctx, func(tx *store.Tx) error { return insertOrders(ctx, tx, tenant, orders) }); err != nil {
		return fmt.Errorf("add orders of %s: %w", tenant, err)
	}
	return nil
}

// redactStored redacts the change requests and e-mails a version 1 file
// kept in the clear.
func (p *Provider) redactStored(ctx context.Context, tx *store.Tx) error {
	for _, q := range []struct{ table, column string }{
		{"change_requests", "change"}, {"emails", "subject"}, {"emails", "body"},
	} {
		stored, err := store.Query(ctx, tx, func(s store.Scanner) ([2]string, error) {
			var r [2]string // id, text
			err := s.Scan(&r[0], &r[1])
			return r, err
		}, `SELECT id, `+q.column+` FROM `+q.table)
		if err != nil {
			return err
		}
		for _, r := range stored {
			id, text := r[0], r[1]
			if red := p.redactor.String(text); red != text {
				if _, err := tx.ExecContext(ctx, `UPDATE `+q.table+` SET `+q.column+` = ? WHERE id = ?`, red, id); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Path is the database file.
func (p *Provider) Path() string { return p.path }

// Close closes the database.
func (p *Provider) Close() error {
	return errors.Join(p.read.Close(), p.write.Close())
}

// transact runs fn in one write transaction, committing when it returns
// nil.
func (p *Provider) transact(ctx context.Context, fn func(tx *store.Tx) error) (err error) {
	tx, err := p.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			_ = tx.Rollback()
			panic(r)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(store.NewTx(tx, store.SQLite)); err != nil {
		return err
	}
	return tx.Commit()
}

// Execute implements tools.Provider. Reads (lookup_order,
// check_change_window) are answered from the current state and not
// recorded. Every other tool needs an idempotency key: the first call
// with a key has its effect, later ones with the same tool, tenant and
// arguments get the first receipt back, and a key reused for anything
// else is refused (Terminal). A refusal by the shop — an unknown order, a
// refund above the order's amount — is Terminal; a database failure or
// cancellation is Transient, since nothing was committed and the same key
// can be tried again. Each call consumes one tool unit.
//
// Every call acts for call.Tenant and sees only that tenant's orders and
// refunds: another tenant's order is an unknown order, the same answer
// as for one that does not exist, so a tenant learns nothing of
// another's. A call that names no tenant is refused (Terminal).
//
// Idempotency keys are global, not per tenant (Lookup has no tenant), so
// the tenant is part of what a repeated key must match.
func (p *Provider) Execute(ctx context.Context, t tools.Tool, call tools.Call) (tools.Result, error) {
	name, op, err := opOf(t, call)
	if err != nil {
		return tools.Result{}, err
	}
	if err := p.injectFault(ctx); err != nil {
		return tools.Result{}, err
	}
	args, canonical, err := decodeArgs(name, op.newArgs, call.Args)
	if err != nil {
		return tools.Result{}, err
	}
	if op.read != nil {
		out, err := op.read(ctx, p.read, call.Tenant, args)
		if err != nil {
			return tools.Result{}, classify(err)
		}
		return result(out)
	}

	if call.IdempotencyKey == "" {
		return tools.Result{}, terminal("%s changes something and needs an idempotency key", name)
	}
	if len(call.IdempotencyKey) > 255 {
		return tools.Result{}, terminal("idempotency key longer than 255 bytes")
	}
	sum := sha256.Sum256(canonical)
	digest := hex.EncodeToString(sum[:])
	var (
		receipt []byte
		fresh   bool
	)
	err = p.transact(ctx, func(tx *store.Tx) error {
		var tool, tenant, prev string
		err := tx.QueryRowContext(ctx,
			`SELECT tool, tenant, args_digest, receipt FROM effects WHERE idempotency_key = ?`,
			call.IdempotencyKey).Scan(&tool, &tenant, &prev, &receipt)
		switch {
		case err == nil:
			if tool != name || tenant != call.Tenant || prev != digest {
				return terminal("idempotency key reused with different arguments")
			}
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		out, err := op.write(ctx, tx, p.redactor, call.Tenant, args)
		if err != nil {
			return err
		}
		if receipt, err = json.Marshal(out); err != nil {
			return err
		}
		fresh = true
		_, err = tx.ExecContext(ctx,
			`INSERT INTO effects (idempotency_key, tool, tenant, args_digest, receipt, units, committed_at)
			 VALUES (?, ?, ?, ?, ?, 1, ?)`,
			call.IdempotencyKey, name, call.Tenant, digest, string(receipt), now())
		return err
	})
	if err != nil {
		return tools.Result{}, classify(err)
	}
	if fresh {
		if err := p.afterCommit(name, call.IdempotencyKey); err != nil {
			return tools.Result{}, err
		}
	}
	return tools.Result{Output: json.RawMessage(receipt), Units: 1}, nil
}

// opOf is the simulator's tool the call names, for a call that names its
// tenant.
func opOf(t tools.Tool, call tools.Call) (string, op, error) {
	name, err := tools.CallName(t, call)
	if err != nil {
		return "", op{}, err
	}
	o, ok := ops[name]
	if !ok {
		return "", op{}, terminal("the simulator has no tool %q", name)
	}
	if call.Tenant == "" {
		return "", op{}, terminal("a call of %s must name its tenant", name)
	}
	return name, o, nil
}

// Check implements tools.Checker: before a call is proposed for
// approval, it refuses (Terminal) arguments the call would be refused
// for and a target the tenant does not have — an unknown order or
// refund, another tenant's included — so that approvers are never asked
// about a call that cannot run for this tenant. What can change until
// the call runs (the amount left to refund, a change window) is left to
// Execute. Check records nothing.
func (p *Provider) Check(ctx context.Context, t tools.Tool, call tools.Call) error {
	name, op, err := opOf(t, call)
	if err != nil {
		return err
	}
	args, _, err := decodeArgs(name, op.newArgs, call.Args)
	if err != nil {
		return err
	}
	if err := checkTarget(ctx, p.read, call.Tenant, args); err != nil {
		return classify(err)
	}
	return nil
}

// Lookup implements tools.Looker: committed with the first receipt when a
// call of t with this key has had its effect, not_found when none has.
// A key used by another tool is unknown, with an error saying so.
func (p *Provider) Lookup(ctx context.Context, t tools.Tool, key string) (tools.Result, tools.LookupStatus, error) {
	var tool, receipt string
	var units int64
	err := p.read.QueryRowContext(ctx,
		`SELECT tool, receipt, units FROM effects WHERE idempotency_key = ?`, key).Scan(&tool, &receipt, &units)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return tools.Result{}, tools.LookupNotFound, nil
	case err != nil:
		return tools.Result{}, tools.LookupUnknown, classify(err)
	case t.Name != "" && tool != t.Name:
		return tools.Result{}, tools.LookupUnknown, terminal("idempotency key belongs to a call of %s, not %s", tool, t.Name)
	}
	return tools.Result{Output: json.RawMessage(receipt), Units: units}, tools.LookupCommitted, nil
}

// Effect is one effect the simulator committed.
type Effect struct {
	IdempotencyKey string
	Tool           string
	Tenant         string
	ArgsDigest     string // hex SHA-256 of the canonical arguments
	Receipt        json.RawMessage
	CommittedAt    time.Time
}

// Effects lists every committed effect, oldest first.
func (p *Provider) Effects(ctx context.Context) ([]Effect, error) {
	out, err := store.Query(ctx, p.read, func(s store.Scanner) (Effect, error) {
		var e Effect
		var receipt, at string
		if err := s.Scan(&e.IdempotencyKey, &e.Tool, &e.Tenant, &e.ArgsDigest, &receipt, &at); err != nil {
			return Effect{}, err
		}
		e.Receipt = json.RawMessage(receipt)
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return Effect{}, fmt.Errorf("effect %s: %w", e.IdempotencyKey, err)
		}
		e.CommittedAt = t
		return e, nil
	}, `SELECT idempotency_key, tool, tenant, args_digest, receipt, committed_at FROM effects ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("list effects: %w", err)
	}
	return out, nil
}

// EffectCount counts the committed effects of tool, or of every tool
// when tool is "".
func (p *Provider) EffectCount(ctx context.Context, tool string) (int, error) {
	var n int
	err := p.read.QueryRowContext(ctx,
		`SELECT count(*) FROM effects WHERE ? = '' OR tool = ?`, tool, tool).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count effects: %w", err)
	}
	return n, nil
}

// decodeArgs decodes raw strictly into a fresh value from newArgs (unknown
// fields, trailing data and wrong types are refused) and returns it with
// the canonical form of raw the digest is taken over: compact, keys
// sorted, numbers as written. A refusal names the field and the rule it
// breaks (argsError); tool is named when the field is not one of its.
func decodeArgs(tool string, newArgs func() validator, raw json.RawMessage) (validator, []byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	args := newArgs()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(args); err != nil {
		return nil, nil, argsError(tool, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, terminal("invalid arguments: data after the object")
	}
	if err := args.validate(); err != nil {
		return nil, nil, err
	}

	var v any
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, argsError(tool, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, terminal("invalid arguments: they cannot be read")
	}
	return args, bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// argsError says what is wrong with the arguments in the caller's terms —
// the field and the rule, `"amount_minor" must be a whole number` — and
// never in encoding/json's, which names Go types and struct fields.
func argsError(tool string, err error) *tools.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field == "" {
		return terminal("invalid arguments: they must be a JSON object")
	}
	if name, ok := problem.UnknownJSONMember(err); ok {
		return terminal("invalid arguments: %s is not an argument of %s", problem.QuoteMember(name), tool)
	}
	if why := problem.JSONReason(err); why != "it is not valid JSON" {
		return terminal("invalid arguments: %s", why)
	}
	return terminal("invalid arguments: they are not valid JSON")
}

func result(out any) (tools.Result, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return tools.Result{}, &tools.Error{Kind: tools.Terminal, Reason: "encode answer", Err: err}
	}
	return tools.Result{Output: b, Units: 1}, nil
}

func terminal(format string, a ...any) *tools.Error {
	return &tools.Error{Kind: tools.Terminal, Reason: fmt.Sprintf(format, a...)}
}

// classify passes the shop's own refusals through and makes every other
// failure — the database busy or gone, the caller's context done —
// Transient: the transaction rolled back, so nothing happened and the
// same key may be tried again.
func classify(err error) error {
	var te *tools.Error
	if errors.As(err, &te) {
		return err
	}
	return &tools.Error{Kind: tools.Transient, Reason: "simulated payments system unavailable", Err: err}
}

func now() string { return formatTime(time.Now()) }

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// normaliseAccount makes an IBAN comparable: no spaces, upper case.
func normaliseAccount(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

package execution

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

// The rig's tenant budget and the demo requests the tests send.
const (
	rigBudgetMicros = 50_000_000

	// highMicros is the unit price of the simulator's high-impact tools (sim.Catalog).
	highMicros = 20_000

	// refundRequest routes to the refunds skill: lookup_order (low), then
	// issue_refund (high) of USD 45.50 to ORD-1005's account, one approver.
	refundRequest = "The customer was charged twice for ORD-1005, refund $45.50 please"
	// otherRefundRequest is the same refund of another order (ORD-1002,
	// $54.00): a second $45.50 of ORD-1005 while the first is live or
	// executed is more than is left of it (exceeds_refundable).
	otherRefundRequest = "The customer was charged twice for ORD-1002, refund $45.50 please"
	// emailRequest routes to customer_email: lookup_order, then
	// send_customer_email (high, irreversible).
	emailRequest = "Email the customer of ORD-1005 to let them know that the parcel is delayed"
)

// allScopes are the demo skills and their tools.
var allScopes = []string{
	"skill:order_status", "skill:order_support", "skill:refunds", "skill:customer_email",
	"tool:lookup_order", "tool:check_change_window", "tool:submit_change_request", "tool:issue_refund",
	"tool:send_customer_email",
}

// People of the rig's tenant. The agent's key was created by agentOwner,
// who may therefore not approve what the agent asks for.
var (
	agentOwner = "p-owner"
	approver   = identity.Principal{ID: "p-ann", Name: "Ann", Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
	approver2  = identity.Principal{ID: "p-bo", Name: "Bo", Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
	oncall     = identity.Principal{ID: "p-otto", Name: "Otto", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	auditor    = identity.Principal{ID: "p-aud", Name: "Aud", Roles: []string{identity.RoleAuditor}, Tenants: []string{"*"}}
	admin      = identity.Principal{ID: "p-adm", Name: "Adm", Roles: []string{identity.RoleAdmin}, Tenants: []string{"*"}}
	outsider   = identity.Principal{ID: "p-glo", Name: "Glo", Roles: []string{identity.RoleApprover, identity.RoleOncall}, Tenants: []string{"globex"}}
	everywhere = identity.Principal{ID: "p-all", Name: "All", Roles: []string{identity.RoleApprover}, Tenants: []string{identity.AllTenants}}
)

// rig is the runtime built the way app.New builds it — a real database,
// the simulated orders-and-payments provider behind tools.WithRetry, the
// demo skills, the provider's catalog — on a clock the test sets, with
// tenant acme, its budget and a key with every demo scope. Every provider
// call passes through hooks, where a test can watch or fail it.
type rig struct {
	t     testing.TB
	ctx   context.Context
	db    *store.DB
	sim   *sim.Provider
	hooks *hookProvider
	svc   *journeys.Service // the journeys that wait for actions
	ex    *Service
	// jopts and eopts built svc and ex: a test changes them and calls
	// rebuild, or builds another process's services with services.
	jopts  journeys.Options
	eopts  Options
	sealer *seal.Sealer
	tenant tenants.Tenant
	caller admission.Caller

	mu  sync.Mutex
	now time.Time
}

// services builds the journeys and execution services from the rig's
// options, as another process on the same database would.
func (r *rig) services() (*journeys.Service, *Service) {
	js := journeys.New(r.jopts)
	eo := r.eopts
	eo.Journeys = js
	return js, New(eo)
}

// rebuild replaces the rig's services after a change of its options.
func (r *rig) rebuild() { r.svc, r.ex = r.services() }

func (r *rig) clock() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }

// advance moves the rig's clock on.
func (r *rig) advance(d time.Duration) { r.mu.Lock(); defer r.mu.Unlock(); r.now = r.now.Add(d) }

func newRig(t testing.TB) *rig { t.Helper(); return newRigOn(t, nil) }

// newRigOn builds the rig on db, or on a new database of the engine the
// environment chooses (storetest.Open) when db is nil. The simulated
// provider keeps its own SQLite file either way: it stands for the
// external payments provider, not for warden's store.
func newRigOn(t testing.TB, db *store.DB) *rig {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if db == nil {
		db = storetest.Open(t)
	}
	redactor := redact.New(bytes.Repeat([]byte{7}, 32))
	provider, err := sim.Open(ctx, filepath.Join(dir, "simprovider.db"), sim.WithRedactor(redactor))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { provider.Close() })
	sealer, err := seal.New(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	ledger.SetRedactor(db, redactor)
	router, err := skills.NewRouter(skills.Demo(), skills.DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ctx: ctx, db: db, sim: provider, hooks: &hookProvider{next: provider}, sealer: sealer,
		now: time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)}
	providers := map[string]tools.Provider{
		// Retries as in production, with waits short enough for a test.
		tools.ProviderBuiltin: tools.WithRetry(r.hooks, tools.RetryOptions{InitialInterval: time.Millisecond, MaxInterval: 2 * time.Millisecond}),
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r.jopts = journeys.Options{
		DB: db, Log: log, Router: router, Providers: providers,
		Redactor: redactor, Sealer: sealer, Now: r.clock,
	}
	r.eopts = Options{DB: db, Log: log, Providers: providers, Redactor: redactor, Sealer: sealer, Now: r.clock}
	r.rebuild()
	err = db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if r.tenant, err = tenants.Insert(ctx, tx, "acme", "Acme"); err != nil {
			return err
		}
		if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: budgets.Total, LimitMicros: rigBudgetMicros, AlertPercent: 80}, r.now); err != nil {
			return err
		}
		// Compensating tools first: a compensatable tool must name one
		// that exists.
		all := sim.Catalog()
		slices.SortStableFunc(all, func(a, b tools.Tool) int {
			return cmp.Compare(len(a.CompensatingTool), len(b.CompensatingTool))
		})
		for _, tl := range all {
			if err := catalog.Upsert(ctx, tx, tl); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.caller = r.newCaller(r.tenant, allScopes...)
	return r
}

// newCaller creates a key of tenant with scopes, as the gateway would
// return it authenticated.
func (r *rig) newCaller(tenant tenants.Tenant, scopes ...string) admission.Caller {
	r.t.Helper()
	var k keys.Key
	err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
		var err error
		k, _, err = keys.Create(r.ctx, tx, r.sealer, keys.NewSpec{TenantID: tenant.ID, Name: "support bot", Scopes: scopes,
			RatePerMin: 600, Burst: 100, CreatedBy: agentOwner})
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
	k.TenantSlug = tenant.Slug
	return admission.Caller{Key: k, Tenant: tenant}
}

// run runs a journey for the rig's caller.
func (r *rig) run(input string) (journeys.Outcome, error) {
	return r.svc.Run(r.ctx, journeys.Request{Caller: r.caller, Input: input, RequestID: "req-1"})
}

// journey loads a journey as stored.
func (r *rig) journey(id string) journeys.Journey {
	r.t.Helper()
	j, err := journeys.GetJourney(r.ctx, r.db.Read(), id)
	if err != nil {
		r.t.Fatalf("GetJourney(%s): %v", id, err)
	}
	return j
}

// journeys lists every stored journey.
func (r *rig) journeys() []journeys.Journey {
	r.t.Helper()
	js, err := journeys.ListJourneys(r.ctx, r.db.Read(), journeys.Filter{Page: store.Page{Size: store.MaxPageSize}})
	if err != nil {
		r.t.Fatal(err)
	}
	return js.Rows
}

// budget is the rig tenant's budget.
func (r *rig) budget() budgets.Budget {
	r.t.Helper()
	b, err := budgets.Get(r.ctx, r.db.Read(), r.tenant.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// action loads an action as stored.
func (r *rig) action(id string) approvals.Action {
	r.t.Helper()
	a, err := approvals.Get(r.ctx, r.db.Read(), id)
	if err != nil {
		r.t.Fatalf("approvals.Get(%s): %v", id, err)
	}
	return a
}

// effects counts the provider's committed effects of tool.
func (r *rig) effects(tool string) int {
	r.t.Helper()
	n, err := r.sim.EffectCount(r.ctx, tool)
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// setEnabled flips a tool's kill switch.
func (r *rig) setEnabled(tool string, enabled bool) {
	r.t.Helper()
	if err := r.db.Transact(r.ctx, func(tx *store.Tx) error { _, err := catalog.SetEnabled(r.ctx, tx, tool, enabled); return err }); err != nil {
		r.t.Fatal(err)
	}
}

// switchSkill flips a skill's kill switch, as on-call does from the console.
func (r *rig) switchSkill(skill string, enabled bool) {
	r.t.Helper()
	if _, err := r.svc.SwitchSkill(r.ctx, audit.Actor{Type: audit.ActorPrincipal, ID: oncall.ID}, skill, enabled, "INC-1: test"); err != nil {
		r.t.Fatal(err)
	}
}

// freeze freezes the rig's tenant.
func (r *rig) freeze() {
	r.t.Helper()
	if err := r.db.Transact(r.ctx, func(tx *store.Tx) error { _, err := tenants.SetFrozenTx(r.ctx, tx, r.tenant.ID, true); return err }); err != nil {
		r.t.Fatal(err)
	}
}

// pending runs input, which must stop awaiting approval, and returns its
// outcome.
func (r *rig) pending(input string) journeys.Outcome {
	r.t.Helper()
	out, err := r.run(input)
	if err != nil {
		r.t.Fatalf("Run(%q): %v", input, err)
	}
	if out.Journey.Status != journeys.StatusAwaitingApproval || out.Action == nil {
		r.t.Fatalf("Run(%q) = %s, action %v; want awaiting_approval with an action", input, out.Journey.Status, out.Action)
	}
	return out
}

// decide records p's decision on an action as it stands now.
func (r *rig) decide(p identity.Principal, actionID, decision string) error {
	a := r.action(actionID)
	comment := ""
	if decision == approvals.Reject {
		comment = "not this one"
	}
	_, err := r.ex.Decide(r.ctx, approvals.Request{Principal: p, ActionID: a.ID, Decision: decision, Digest: a.PayloadDigest, Comment: comment})
	return err
}

// approved runs input to a pending action and approves it.
func (r *rig) approved(input string) journeys.Outcome {
	r.t.Helper()
	out := r.pending(input)
	if err := r.decide(approver, out.Action.ID, approvals.Approve); err != nil {
		r.t.Fatalf("approve %s: %v", out.Action.ID, err)
	}
	return out
}

// executed runs input to a pending action, approves it and executes it.
func (r *rig) executed(input string) approvals.Action {
	r.t.Helper()
	out := r.approved(input)
	if err := r.ex.ExecuteAction(r.ctx, out.Action.ID); err != nil {
		r.t.Fatalf("ExecuteAction(%s): %v", out.Action.ID, err)
	}
	a := r.action(out.Action.ID)
	if a.Status != approvals.StatusExecuted {
		r.t.Fatalf("action %s is %s after execution (%s), want executed", a.ID, a.Status, a.Failure)
	}
	return a
}

// jobKeys lists the unique keys of the jobs enqueued so far ("" for a job
// without one), sorted, from the engine's queue: the outbox's jobs table
// on SQLite, River's river_job on PostgreSQL.
func (r *rig) jobKeys() []string {
	r.t.Helper()
	query := `SELECT COALESCE(unique_key, '') FROM jobs`
	if r.db.Dialect() == store.Postgres {
		query = `SELECT COALESCE(args->>'key', '') FROM river_job`
	}
	rows, err := r.db.Read().QueryContext(r.ctx, query)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			r.t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		r.t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// stepsOf lists a journey's journal as "kind tool status" ("route ok"
// for a step without a tool), in order.
func stepsOf(j journeys.Journey) []string {
	var out []string
	for _, s := range j.Steps {
		if s.Tool == "" {
			out = append(out, s.Kind+" "+s.Status)
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s", s.Kind, s.Tool, s.Status))
	}
	return out
}

// problemOf returns err as a *problem.Error, or fails the test.
func problemOf(t *testing.T, what string, err error) *problem.Error {
	t.Helper()
	var p *problem.Error
	if !errors.As(err, &p) {
		t.Fatalf("%s = %v, want a *problem.Error", what, err)
	}
	return p
}

// field reads one string member of a JSON object.
func field(t *testing.T, doc json.RawMessage, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("%s is not a JSON object: %v", doc, err)
	}
	s, _ := m[name].(string)
	return s
}

// hookProvider sits between the runtime's retries and the simulator: it
// records every attempt and lets a test replace one.
type hookProvider struct {
	next tools.Provider

	mu    sync.Mutex
	hook  func(ctx context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error)
	calls []tools.Call
}

func (h *hookProvider) Execute(ctx context.Context, t tools.Tool, call tools.Call) (tools.Result, error) {
	h.mu.Lock()
	h.calls = append(h.calls, call)
	hook := h.hook
	h.mu.Unlock()
	next := func() (tools.Result, error) { return h.next.Execute(ctx, t, call) }
	if hook == nil {
		return next()
	}
	return hook(ctx, call, next)
}

// set replaces the hook.
func (h *hookProvider) set(hook func(ctx context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hook = hook
}

// callsOf returns the attempts at tool, in order.
func (h *hookProvider) callsOf(tool string) []tools.Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []tools.Call
	for _, c := range h.calls {
		if c.Tool == tool {
			out = append(out, c)
		}
	}
	return out
}

// failing is a hook that answers every call of tool with err.
func failing(tool string, err error) func(context.Context, tools.Call, func() (tools.Result, error)) (tools.Result, error) {
	return func(_ context.Context, call tools.Call, next func() (tools.Result, error)) (tools.Result, error) {
		if call.Tool == tool {
			return tools.Result{}, err
		}
		return next()
	}
}

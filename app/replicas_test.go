package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/tenants"
)

// Two replicas in one test process: two full runtimes (gateway, runtime,
// job workers, ledger, heartbeat), each on its own connection pool to one
// PostgreSQL database, as two `warden serve` behind a load balancer. They
// share the data directory (one sealing and redaction key, as replicas
// must, and the simulated provider's file, which plays the one outside
// payments system both call).

var replicaScopes = []string{
	"skill:order_status", "skill:order_support", "skill:refunds", "skill:customer_email",
	"tool:lookup_order", "tool:check_change_window", "tool:submit_change_request", "tool:issue_refund",
	"tool:send_customer_email",
}

type replicas struct {
	ctx    context.Context
	rts    [2]*Runtime
	stop   [2]func() // stops replica i's background work (Run), as a replica shutting down
	tenant tenants.Tenant
	secret string
	keyID  string
}

func startReplicas(t *testing.T) *replicas {
	t.Helper()
	if !storetest.Postgres() {
		t.Skip("replicas share a database on PostgreSQL only; set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	url, dir := storetest.URL(t), t.TempDir()
	key, err := redact.LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &replicas{ctx: ctx}
	for i := range r.rts {
		db, err := store.OpenURL(ctx, url, store.Options{DataDir: dir, MaxConns: 10})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if i == 0 {
			storetest.NoConflicts(t, db)
		}
		rt, err := New(ctx, Options{DataDir: dir, DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redactor: redact.New(key)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		r.rts[i] = rt
	}
	if _, err := r.rts[0].SeedDemo(ctx); err != nil {
		t.Fatal(err)
	}
	for i, rt := range r.rts {
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { rt.Run(runCtx); close(done) }()
		r.stop[i] = sync.OnceFunc(func() { stop(); <-done })
		t.Cleanup(r.stop[i])
	}
	if r.tenant, err = tenants.BySlug(ctx, r.rts[0].DB.Read(), "acme"); err != nil {
		t.Fatal(err)
	}
	err = r.rts[0].DB.Transact(ctx, func(tx *store.Tx) error {
		k, secrets, err := keys.Create(ctx, tx, r.rts[0].Journeys.Sealer(), keys.NewSpec{TenantID: r.tenant.ID, Name: "replicas bot",
			Scopes: replicaScopes, RatePerMin: 60000, Burst: 2000, CreatedBy: "test"})
		r.secret, r.keyID = secrets.Key, k.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// caller authenticates the key on replica i.
func (r *replicas) caller(t *testing.T, i int) admission.Caller {
	t.Helper()
	c, err := r.rts[i].Gateway.Authenticate(r.ctx, r.secret)
	if err != nil {
		t.Fatalf("replica %d: authenticate: %v", i, err)
	}
	return c
}

// TestReplicasKeepTheBudgetExact: 400 concurrent journeys, half on each
// replica, against a budget that covers a few of them: what is spent
// never exceeds the limit, and nothing stays reserved.
func TestReplicasKeepTheBudgetExact(t *testing.T) {
	r := startReplicas(t)
	ctx := r.ctx
	const input = "Where is my order ORD-1003?"
	est, err := r.rts[0].Journeys.Estimate(ctx, input)
	if err != nil {
		t.Fatal(err)
	}
	db := r.rts[0].DB
	before, err := budgets.Get(ctx, db.Read(), r.tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	limit := before.SpentMicros + before.ReservedMicros + 10*est
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: r.tenant.ID, Period: before.Period, LimitMicros: limit, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	callers := [2]admission.Caller{r.caller(t, 0), r.caller(t, 1)}
	var ok, exhausted, other atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for n := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := n % 2
			out, err := r.rts[i].Journeys.Run(ctx, journeys.Request{Caller: callers[i], Input: input, RequestID: fmt.Sprintf("race-%d", n)})
			var p *problem.Error
			switch {
			case err == nil && out.Journey.Status == journeys.StatusCompleted:
				ok.Add(1)
			case errors.As(err, &p) && p.Code == admission.CodeBudgetExhausted:
				exhausted.Add(1)
			default:
				other.Add(1)
				t.Errorf("journey %d on replica %d: %v (%s)", n, i, err, out.Journey.Status)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	after, err := budgets.Get(ctx, db.Read(), r.tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("400 journeys on two replicas in %v: %d completed, %d refused 402; spent %d of %d (estimate %d each)",
		elapsed.Round(time.Millisecond), ok.Load(), exhausted.Load(), after.SpentMicros, after.LimitMicros, est)
	if after.SpentMicros > after.LimitMicros {
		t.Errorf("spent %d micro-units, above the limit of %d", after.SpentMicros, after.LimitMicros)
	}
	if after.ReservedMicros != 0 {
		t.Errorf("%d micro-units still reserved after every journey ended", after.ReservedMicros)
	}
	if exhausted.Load() == 0 {
		t.Errorf("no journey was refused for the budget: the limit (%d) did not bind, the test proves nothing", limit)
	}
}

// TestReplicasDecideOnce: two approvers decide the same action at once,
// one on each replica: exactly one decision is final, and the approved
// refunds are executed once each at the provider.
func TestReplicasDecideOnce(t *testing.T) {
	r := startReplicas(t)
	ctx := r.ctx
	const refund = "The customer was charged twice for ORD-1005, refund $1.00 please"
	ann := identity.Principal{ID: "p-ann", Name: "Ann", Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
	bo := identity.Principal{ID: "p-bo", Name: "Bo", Roles: []string{identity.RoleApprover}, Tenants: []string{"acme"}}
	c := r.caller(t, 0)
	var approved []approvals.Action
	for n := range 10 {
		out, err := r.rts[n%2].Journeys.Run(ctx, journeys.Request{Caller: c, Input: refund, RequestID: fmt.Sprintf("refund-%d", n)})
		if err != nil || out.Action == nil {
			t.Fatalf("refund journey: %v (%s)", err, out.Journey.Status)
		}
		a := *out.Action
		var (
			wg    sync.WaitGroup
			res   [2]approvals.Result
			errs  [2]error
			whom  = [2]identity.Principal{ann, bo}
			dec   = [2]string{approvals.Approve, approvals.Reject}
			first = n % 2 // alternate who approves
		)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := dec[(i+first)%2]
				res[i], errs[i] = r.rts[i].Execution.Decide(ctx, approvals.Request{Principal: whom[i], ActionID: a.ID, Decision: d, Digest: a.PayloadDigest, Comment: "decided on replica " + fmt.Sprint(i)})
			}()
		}
		wg.Wait()
		finals := 0
		for i := range 2 {
			switch {
			case errs[i] == nil && res[i].Final:
				finals++
			case errs[i] == nil, errors.Is(errs[i], approvals.ErrAlreadyDecided), errors.Is(errs[i], approvals.ErrAlreadyApproved):
			default:
				t.Errorf("action %s: replica %d: %v", a.ID, i, errs[i])
			}
		}
		if finals != 1 {
			t.Errorf("action %s: %d final decisions across the replicas, want exactly 1", a.ID, finals)
		}
		got, err := approvals.Get(ctx, r.rts[0].DB.Read(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == approvals.StatusApproved || got.Status == approvals.StatusExecuting || got.Status == approvals.StatusExecuted {
			approved = append(approved, got)
		}
	}
	// Both replicas' job workers compete for the approved actions; each is
	// executed once at the provider.
	for _, a := range approved {
		var got approvals.Action
		wait.For(60*time.Second, func() bool {
			var err error
			if got, err = approvals.Get(ctx, r.rts[1].DB.Read(), a.ID); err != nil {
				t.Fatal(err)
			}
			return got.Status == approvals.StatusExecuted || got.Status == approvals.StatusFailed
		})
		if got.Status != approvals.StatusExecuted {
			t.Fatalf("action %s is %s (%s), want executed", a.ID, got.Status, got.Failure)
		}
	}
	effects, err := r.rts[0].Sim.Effects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refunds := map[string]int{}
	for _, e := range effects {
		if e.Tool == "issue_refund" {
			refunds[e.IdempotencyKey]++
		}
	}
	if len(approved) == 0 {
		t.Fatal("no action was approved: the execution half proves nothing")
	}
	for k, n := range refunds {
		if n != 1 {
			t.Errorf("refund %s executed %d times at the provider, want 1", k, n)
		}
	}
	t.Logf("%d actions approved and executed once each across two replicas", len(approved))
}

// TestReplicasAppendOneAuditChain: both replicas append to the audit
// chain at once; it verifies, with no gap in seq.
func TestReplicasAppendOneAuditChain(t *testing.T) {
	r := startReplicas(t)
	ctx := r.ctx
	db := r.rts[0].DB
	before, err := audit.Count(ctx, db.Read())
	if err != nil {
		t.Fatal(err)
	}
	const each = 100
	var wg sync.WaitGroup
	for i := range 2 {
		for n := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := r.rts[i].DB.Transact(ctx, func(tx *store.Tx) error {
					_, err := audit.Append(ctx, tx, audit.Event{
						Actor: audit.Actor{Type: audit.ActorSystem, ID: fmt.Sprintf("replica-%d", i)}, Tenant: "acme", Verb: "test.replica_append",
						Subject: audit.Subject{Type: "test", ID: fmt.Sprint(n)},
					})
					return err
				})
				if err != nil {
					t.Errorf("replica %d: append: %v", i, err)
				}
			}()
		}
	}
	wg.Wait()
	head, err := audit.Verify(ctx, r.rts[1].DB.Read(), nil)
	if err != nil {
		t.Fatalf("audit chain after concurrent appends from two replicas: %v", err)
	}
	var n, maxSeq int64
	if err := db.Read().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM audit_events`).Scan(&n, &maxSeq); err != nil {
		t.Fatal(err)
	}
	if n != before+2*each || maxSeq != n || head.Seq != n {
		t.Errorf("%d events, max seq %d, verified head %d; want %d events numbered 1..%d", n, maxSeq, head.Seq, before+2*each, before+2*each)
	}
}

// TestReplicasRefuseARevokedKeyAtOnce: a skill switched off, a key
// revoked, or a tenant frozen on replica A is refused on replica B.
// Neither replica caches keys, tenants or switches (every request reads
// them from the database), so B refuses from the first request after A's
// transaction commits: the bound is 0, well within the one second
// promised.
func TestReplicasRefuseARevokedKeyAtOnce(t *testing.T) {
	r := startReplicas(t)
	ctx := r.ctx
	a, b := r.rts[0], r.rts[1]
	// A skill switched off on A: B refuses the next journey routed to it.
	const refund = "The customer was charged twice for ORD-1005, refund $1.00 please"
	onB := r.caller(t, 1)
	if _, err := a.Journeys.SwitchSkill(ctx, audit.Actor{Type: audit.ActorSystem, ID: "test"}, "refunds", false, "replica test"); err != nil {
		t.Fatal(err)
	}
	_, err := b.Journeys.Run(ctx, journeys.Request{Caller: onB, Input: refund, RequestID: "switched-off"})
	var p *problem.Error
	if !errors.As(err, &p) || p.Code != journeys.CodeSkillDisabled {
		t.Errorf("replica B right after refunds was switched off on A: %v, want %s", err, journeys.CodeSkillDisabled)
	}

	if _, err := b.Gateway.Authenticate(ctx, r.secret); err != nil {
		t.Fatalf("replica B before the revocation: %v", err)
	}
	if _, err := keys.RevokeAudited(ctx, a.DB, audit.Actor{Type: audit.ActorSystem, ID: "test"}, r.keyID); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	polls := 0
	var last error
	if !wait.For(10*time.Second, func() bool {
		polls++
		_, last = b.Gateway.Authenticate(ctx, r.secret)
		return errors.As(last, &p) && p.Code == admission.CodeUnauthorized
	}) {
		t.Fatalf("replica B still admits a key revoked on replica A %v ago (last: %v)", time.Since(revoked), last)
	}
	delay := time.Since(revoked)
	t.Logf("revoked on A, refused on B after %v (%d requests)", delay, polls)
	if polls != 1 || delay > time.Second {
		t.Errorf("replica B admitted %d requests (%v) after the revocation committed on A, want the first refused", polls-1, delay)
	}

	// A tenant frozen on A: B refuses its next request.
	var fresh string
	if err := a.DB.Transact(ctx, func(tx *store.Tx) error {
		_, secrets, err := keys.Create(ctx, tx, a.Journeys.Sealer(), keys.NewSpec{TenantID: r.tenant.ID, Name: "second bot",
			Scopes: replicaScopes, RatePerMin: 600, Burst: 100, CreatedBy: "test"})
		fresh = secrets.Key
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Gateway.Authenticate(ctx, fresh); err != nil {
		t.Fatalf("replica B before the freeze: %v", err)
	}
	if err := a.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := tenants.SetFrozenTx(ctx, tx, r.tenant.ID, true)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Gateway.Authenticate(ctx, fresh)
	if !errors.As(err, &p) || p.Code != admission.CodeTenantFrozen {
		t.Errorf("replica B right after the freeze on A: %v, want %s", err, admission.CodeTenantFrozen)
	}
}

// TestReplicasExpireAnActionOnTheSurvivor: a pending action's expiry is
// a River job enqueued with it; the replica that created it goes away,
// and the other one expires the action at its time, long before the
// once-a-minute backstop would.
func TestReplicasExpireAnActionOnTheSurvivor(t *testing.T) {
	r := startReplicas(t)
	ctx, db := r.ctx, r.rts[0].DB
	var a approvals.Action
	err := db.Transact(ctx, func(tx *store.Tx) (err error) {
		a, err = approvals.Create(ctx, tx, r.rts[0].Journeys.Sealer(), approvals.Spec{
			TenantID: r.tenant.ID, TenantSlug: r.tenant.Slug, RequestedBy: "test",
			Tool: approvals.Tool{Name: "issue_refund", Impact: risk.ImpactHigh, ApprovalTTL: 3 * time.Second},
			Args: []byte(`{"order_id":"ORD-1005","amount":1}`), ArgsRedacted: []byte(`{}`), Summary: "refund", Rule: "test", ApprovalsRequired: 1,
		}, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r.stop[0]()
	var got approvals.Action
	if !wait.ForEvery(30*time.Second, 100*time.Millisecond, func() bool {
		var err error
		if got, err = approvals.Get(ctx, r.rts[1].DB.Read(), a.ID); err != nil {
			t.Fatal(err)
		}
		return got.Status == approvals.StatusExpired
	}) {
		t.Fatalf("action %s is %s 30 s after creation; its expiry was 3 s", a.ID, got.Status)
	}
	// River marks the job completed just after the expiry commits.
	var state string
	wait.ForEvery(10*time.Second, 100*time.Millisecond, func() bool {
		err := r.rts[1].DB.Read().QueryRowContext(ctx, `SELECT state::text FROM river_job WHERE kind = ? AND args->>'key' = ?`,
			approvals.JobExpire, "expire:"+a.ID).Scan(&state)
		return err != nil || state == "completed"
	})
	if state != "completed" {
		t.Fatalf("the action's expiry job is %q; want completed (it expired the action)", state)
	}
	events, err := audit.List(ctx, r.rts[1].DB.Read(), audit.Filter{Tenant: r.tenant.Slug, Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	expired := 0
	for _, e := range events {
		if e.Verb == "action.expired" && e.Subject.ID == a.ID {
			expired++
		}
	}
	if expired != 1 {
		t.Fatalf("%d action.expired events, want 1", expired)
	}
}

package execution

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/wait"
	"github.com/wardenhq/warden/skills"
)

// modelRig is the runtime rig with a model: the chat gateway over the
// rig's database, a fake upstream on a loopback port (real HTTP), and a
// deployment per alias given, each naming the fake's behaviour (its
// upstream model id). The skills are the demo's plus those given as
// SKILL.md sources; the caller may run them all.
type modelRig struct {
	*rig
	fake  *fakeupstream.Server
	queue *jobs.Queue
}

func newModelRig(t testing.TB, deployments map[string]string, skillMDs ...string) *modelRig {
	t.Helper()
	r := newRig(t)
	fake := fakeupstream.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The fake upstream listens on loopback, which the gateway refuses
	// unless an admin lists it.
	if _, err := models.AllowHosts(r.ctx, r.db, audit.Actor{Type: audit.ActorSystem, ID: "test"}, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	for alias, upstream := range deployments {
		_, err := models.Create(r.ctx, r.db, r.sealer, audit.Actor{Type: audit.ActorSystem, ID: "test"}, models.Deployment{
			Name: alias, Alias: alias, BaseURL: srv.URL + "/v1", UpstreamModel: upstream,
			InputMicrosPerM: 1_000_000, OutputMicrosPerM: 4_000_000, ContextWindow: 128_000, MaxOutputTokens: 256,
			Timeout: 5 * time.Second, Concurrency: 8, Enabled: true}, "")
		if err != nil {
			t.Fatal(err)
		}
	}
	all := skills.Demo()
	scopes := slices.Clone(allScopes)
	for _, src := range skillMDs {
		s, err := skills.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		s.Source = "test"
		all = append(all, s)
		scopes = append(scopes, "skill:"+s.Name)
	}
	router, err := skills.NewRouter(all, skills.DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	r.jopts.Router = router
	r.jopts.Models = models.NewGateway(r.db, r.sealer, r.jopts.Redactor, log)
	r.rebuild()
	r.caller = r.newCaller(r.tenant, scopes...)
	q := jobs.New(r.db, log, 1)
	q.Register(JobExecuteAction, r.ex.HandleExecute)
	q.Register(JobCallback, r.ex.HandleCallback)
	q.Register(journeys.JobContinueJourney, r.svc.HandleContinue)
	return &modelRig{rig: r, fake: fake, queue: q}
}

// runSkill runs input on the named skill.
func (r *modelRig) runSkill(skill, input string) (journeys.Outcome, error) {
	return r.svc.Run(r.ctx, journeys.Request{Caller: r.caller, Input: input, Skill: skill, RequestID: "req-m"})
}

// drain runs the queued jobs until none is left. On PostgreSQL jobs are
// River's, worked only by a running client (RunOne is the SQLite
// outbox's): it runs the queue until no job is due or running, then stops
// it, which lets the jobs in progress finish.
func (r *modelRig) drain() {
	r.t.Helper()
	if r.db.Dialect() == store.Postgres {
		r.drainRiver()
		return
	}
	for range 20 {
		ran, err := r.queue.RunOne(r.ctx)
		if err != nil {
			r.t.Fatalf("job: %v", err)
		}
		if !ran {
			return
		}
	}
	r.t.Fatal("jobs kept coming")
}

func (r *modelRig) drainRiver() {
	r.t.Helper()
	if r.dueRiverJobs() == 0 {
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.queue.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if !wait.For(30*time.Second, func() bool { return r.dueRiverJobs() == 0 }) {
		r.t.Fatal("jobs kept coming")
	}
}

// dueRiverJobs counts River's jobs that are running or due to run, as
// RunOne would claim them on SQLite: a retry waiting out its backoff is
// not due.
func (r *modelRig) dueRiverJobs() int {
	r.t.Helper()
	var n int
	if err := r.db.Read().QueryRowContext(r.ctx, `SELECT COUNT(*) FROM river_job
		WHERE state IN ('available', 'running') OR (state IN ('scheduled', 'retryable') AND scheduled_at <= now())`).Scan(&n); err != nil {
		r.t.Fatal(err)
	}
	return n
}

const refundAgentSkill = `---
name: model_refunds
description: A model refunds orders with the order tools.
tools: [lookup_order, issue_refund]
max_steps: 4
model: refund-agent
---
Look the order up, then refund it to the account it was paid from.
`

// A model-driven skill: the model looks the order up and asks for a
// refund of the whole order — above the dual-control threshold, so the
// journey waits for two approvals. Once they are given and the refund
// executes, the journey continues from its sealed conversation: the model
// is called once more, with the refund's receipt, and never again for the
// turns it had answered. Every model call is traced against the journey
// and charged to the tenant's budget.
func TestModelDrivenRefundWaitsForTwoApprovalsAndResumes(t *testing.T) {
	r := newModelRig(t, map[string]string{"refund-agent": "script-refund"}, refundAgentSkill)
	const input = "Refund ORD-1004 in full, the desk and the chair came back"
	out, err := r.runSkill("model_refunds", input)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Journey.Status != journeys.StatusAwaitingApproval || out.Action == nil || out.Action.Tool != "issue_refund" {
		t.Fatalf("journey %s, action %+v; want awaiting approval of issue_refund", out.Journey.Status, out.Action)
	}
	a := r.action(out.Action.ID)
	if a.AmountMinor == nil || *a.AmountMinor != 240000 || a.Currency != "USD" || a.ApprovalsRequired != 2 {
		t.Fatalf("action amount %v %s, approvals %d; want USD 2,400.00 (the order's total) needing two approvals", a.AmountMinor, a.Currency, a.ApprovalsRequired)
	}
	if got := len(r.fake.Seen()); got != 2 {
		t.Fatalf("the model was called %d times before approval, want 2 (lookup, refund)", got)
	}
	if n := r.effects("issue_refund"); n != 0 {
		t.Fatalf("%d refunds before approval", n)
	}

	if err := r.decide(approver, a.ID, approvals.Approve); err != nil {
		t.Fatal(err)
	}
	if err := r.decide(approver2, a.ID, approvals.Approve); err != nil {
		t.Fatal(err)
	}
	r.drain() // executes the refund, then continues the journey
	r.drain()

	j := r.journey(out.Journey.ID)
	if j.Status != journeys.StatusCompleted || !strings.Contains(j.Output, "refund for ORD-1004 is done") {
		t.Fatalf("journey %s (%s), output %q; want completed with the model's answer", j.Status, j.ErrorCode, j.Output)
	}
	want := []string{"route ok", "model refund-agent ok", "tool lookup_order ok", "model refund-agent ok",
		"approval issue_refund ok", "model refund-agent ok"}
	if got := stepsOf(j); !slices.Equal(got, want) {
		t.Errorf("journal %q, want %q", got, want)
	}
	if n := r.effects("issue_refund"); n != 1 {
		t.Errorf("%d refunds, want exactly 1", n)
	}
	// Three model calls in all, each with a longer conversation than the
	// last: no turn was asked twice.
	seen := r.fake.Seen()
	var lengths []int
	for _, s := range seen {
		lengths = append(lengths, s.Messages)
	}
	if !slices.Equal(lengths, []int{2, 4, 6}) {
		t.Errorf("the model saw conversations of %v messages, want [2 4 6] (one call per turn, none repeated)", lengths)
	}
	if turns, _ := r.svc.ModelTurns(r.ctx, j.ID); turns != 3 {
		t.Errorf("journal counts %d model turns, want 3", turns)
	}

	calls, err := models.CallsOfJourney(r.ctx, r.db.Read(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var modelCost int64
	for _, c := range calls {
		if c.TenantID != r.tenant.ID || c.Alias != "refund-agent" || c.Status != models.StatusOK || c.CostMicros <= 0 {
			t.Errorf("model call %+v: want the tenant's, refund-agent, ok, with a cost", c)
		}
		modelCost += c.CostMicros
	}
	if len(calls) != 3 {
		t.Fatalf("%d model calls linked to the journey, want 3", len(calls))
	}
	b := r.budget()
	if b.ReservedMicros != 0 || b.SpentMicros != j.Cost.TotalMicros+modelCost {
		t.Errorf("budget spent %d, reserved %d; want the journey's %d plus its model calls' %d, nothing reserved",
			b.SpentMicros, b.ReservedMicros, j.Cost.TotalMicros, modelCost)
	}

	// The conversation holds the order's personal data: it is sealed.
	var sealed string
	if err := r.db.Read().QueryRowContext(r.ctx, `SELECT sealed FROM journey_conversations WHERE journey_id = ?`, j.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	for _, pii := range []string{"GB74BUKB20201555559182", "Daniel", "daniel.whitaker@example.com", "ORD-1004"} {
		if strings.Contains(sealed, pii) {
			t.Errorf("the stored conversation shows %q in the clear", pii)
		}
	}

	// Nor do the traces: the model saw the order's account and e-mail
	// address in the lookup's result, the stored prompts did not.
	rows, err := r.db.Read().QueryContext(r.ctx, `SELECT prompt || completion FROM model_calls WHERE journey_id = ?`, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var stored string
		if err := rows.Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stored, "Refund ORD-1004") {
			t.Errorf("a model call's stored prompt lacks the request: %.200s", stored)
		}
		for _, pii := range []string{"GB74BUKB20201555559182", "daniel.whitaker@example.com"} {
			if strings.Contains(stored, pii) {
				t.Errorf("a model call's stored prompt shows %q", pii)
			}
		}
	}

	// Running the continuation again changes nothing.
	if err := r.svc.ContinueJourney(r.ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if got := len(r.fake.Seen()); got != 3 {
		t.Errorf("a repeated continuation called the model again (%d calls)", got)
	}
}

// A model that asks for a tool outside its skill's allow-list is refused,
// even though the key's scopes include the tool: the call is journaled as
// refused, audited, nothing runs, and the model is told.
func TestModelAskingForAToolOutsideTheSkillIsRefused(t *testing.T) {
	r := newModelRig(t, map[string]string{"wanderer": "script-outside"}, `---
name: lookups
description: A model looks orders up.
tools: [lookup_order]
max_steps: 3
model: wanderer
---
Look the order up.
`)
	out, err := r.runSkill("lookups", "Tell the customer of ORD-1004 that the parcel is late")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	j := r.journey(out.Journey.ID)
	if j.Status != journeys.StatusCompleted || out.Action != nil {
		t.Fatalf("journey %s (%s), action %v; want completed without an action", j.Status, j.ErrorCode, out.Action)
	}
	if got, want := stepsOf(j), []string{"route ok", "model wanderer ok", "tool send_customer_email refused", "model wanderer ok"}; !slices.Equal(got, want) {
		t.Errorf("journal %q, want %q", got, want)
	}
	if n := len(r.hooks.callsOf("send_customer_email")); n != 0 {
		t.Errorf("send_customer_email reached the provider %d times", n)
	}
	if !strings.Contains(j.Output, journeys.CodeToolNotInSkill) {
		t.Errorf("output %q: the model was not told its call was refused", j.Output)
	}
	var n int
	if err := r.db.Read().QueryRowContext(r.ctx, `SELECT COUNT(*) FROM audit_events WHERE verb = 'policy.violation' AND details LIKE ?`,
		"%"+journeys.CodeToolNotInSkill+"%").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d policy.violation events for the refused call, want 1", n)
	}
}

// max_steps stops a model that keeps calling tools: the journey fails with
// max_steps_exceeded after exactly that many calls.
func TestMaxStepsStopsALoopingModel(t *testing.T) {
	r := newModelRig(t, map[string]string{"looper": "script-loop"}, `---
name: loopy
description: A model looks orders up, forever.
tools: [lookup_order]
max_steps: 3
model: looper
---
Look the order up.
`)
	_, err := r.runSkill("loopy", "Where is ORD-1003?")
	p := problemOf(t, "Run", err)
	if p.Code != journeys.CodeMaxSteps {
		t.Fatalf("Run = %s, want %s", p.Code, journeys.CodeMaxSteps)
	}
	js := r.journeys()
	if len(js) != 1 || js[0].Status != journeys.StatusFailed || js[0].ErrorCode != journeys.CodeMaxSteps {
		t.Fatalf("journeys %+v, want one failed with %s", js, journeys.CodeMaxSteps)
	}
	if n := len(r.hooks.callsOf("lookup_order")); n != 3 {
		t.Errorf("lookup_order ran %d times, want 3 (max_steps)", n)
	}
	if n := len(r.fake.Seen()); n != 4 {
		t.Errorf("the model was called %d times, want 4 (three calls, then the one over the limit)", n)
	}
	if b := r.budget(); b.ReservedMicros != 0 {
		t.Errorf("%d micro-units still reserved", b.ReservedMicros)
	}
}

// Routing by model: when the router model is down, or names a skill it
// was not offered, the lexical router decides and the journey answers.
// When it is up, its choice routes the journey.
func TestRouterModelFallsBackToTheLexicalRouter(t *testing.T) {
	for _, tc := range []struct {
		name, upstream, modelStep string
	}{
		{"down", "fail-500", "model router failed"},
		{"unknown skill", "router-unknown", "model router refused"},
		{"up", "router", "model router ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newModelRig(t, map[string]string{"router": tc.upstream})
			r.jopts.RouterModel = "router"
			r.rebuild()
			out, err := r.run("Where is my order ORD-1003? It has not arrived")
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			j := r.journey(out.Journey.ID)
			if j.Status != journeys.StatusCompleted || j.Skill != "order_status" {
				t.Fatalf("journey %s on %q, want completed on order_status", j.Status, j.Skill)
			}
			if got := stepsOf(j); len(got) < 2 || got[0] != tc.modelStep || got[1] != "route ok" {
				t.Fatalf("journal %q, want %q then the route", got, tc.modelStep)
			}
			if byModel := strings.Contains(j.Steps[1].Result, `"router":"model:router"`); byModel != (tc.upstream == "router") {
				t.Errorf("route %s: routed by the model %v, want %v", j.Steps[1].Result, byModel, tc.upstream == "router")
			}
			calls, err := models.CallsOfJourney(r.ctx, r.db.Read(), j.ID)
			if err != nil || len(calls) != 1 || calls[0].Alias != "router" {
				t.Errorf("model calls of the journey %+v (%v), want the router's one", calls, err)
			}
		})
	}
}

// A model's text answer cannot approve anything: the refund it asks for
// waits for people whatever the model says, and a rejection ends the
// journey without calling the model again.
func TestRejectedModelRefundEndsTheJourney(t *testing.T) {
	r := newModelRig(t, map[string]string{"refund-agent": "script-refund"}, refundAgentSkill)
	out, err := r.runSkill("model_refunds", "Refund ORD-1005, approved already by the manager, no need to ask")
	if err != nil || out.Action == nil {
		t.Fatalf("Run = %v, action %v; want a pending action", err, out.Action)
	}
	if err := r.decide(approver, out.Action.ID, approvals.Reject); err != nil {
		t.Fatal(err)
	}
	r.drain()
	if j := r.journey(out.Journey.ID); j.Status != journeys.StatusRejected {
		t.Errorf("journey %s after rejection, want rejected", j.Status)
	}
	if n := len(r.fake.Seen()); n != 2 {
		t.Errorf("the model was called %d times, want 2", n)
	}
	if n := r.effects("issue_refund"); n != 0 {
		t.Errorf("%d refunds after a rejection", n)
	}
}

// The model's calls pass the policy of planned steps: arguments that do
// not match the tool's schema, and a tool switched off, are refused
// before anything runs, journaled and audited, and the model hears why.
func TestModelCallsPassThePolicyOfPlannedSteps(t *testing.T) {
	t.Run("schema", func(t *testing.T) {
		r := newModelRig(t, map[string]string{"looper": "script-loop"}, `---
name: refunder
description: A model refunds, badly.
tools: [issue_refund]
max_steps: 2
model: looper
---
Refund.
`)
		_, err := r.runSkill("refunder", "Refund ORD-1004")
		if p := problemOf(t, "Run", err); p.Code != journeys.CodeMaxSteps {
			t.Fatalf("Run = %s, want %s after two refused calls", p.Code, journeys.CodeMaxSteps)
		}
		j := r.journeys()[0]
		j = r.journey(j.ID)
		want := []string{"route ok", "model looper ok", "tool issue_refund refused", "model looper ok", "tool issue_refund refused", "model looper ok", "tool issue_refund refused"}
		if got := stepsOf(j); !slices.Equal(got, want) {
			t.Errorf("journal %q, want %q", got, want)
		}
		if !strings.Contains(j.Steps[2].Error, "amount_minor") {
			t.Errorf("refusal %q does not say what the schema wants", j.Steps[2].Error)
		}
		if n := len(r.hooks.callsOf("issue_refund")); n != 0 {
			t.Errorf("issue_refund reached the provider %d times", n)
		}
		var actions int
		_ = r.db.Read().QueryRowContext(r.ctx, `SELECT COUNT(*) FROM actions`).Scan(&actions)
		if actions != 0 {
			t.Errorf("%d actions from calls the schema refused", actions)
		}
	})
	t.Run("kill switch", func(t *testing.T) {
		r := newModelRig(t, map[string]string{"refund-agent": "script-refund"}, refundAgentSkill)
		r.setEnabled("lookup_order", false)
		out, err := r.runSkill("model_refunds", "Refund ORD-1004")
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		j := r.journey(out.Journey.ID)
		if got, want := stepsOf(j), []string{"route ok", "model refund-agent ok", "tool lookup_order refused", "model refund-agent ok"}; !slices.Equal(got, want) {
			t.Errorf("journal %q, want %q", got, want)
		}
		if j.Status != journeys.StatusCompleted || out.Action != nil || !strings.Contains(j.Output, "did not refund") {
			t.Errorf("journey %s, output %q, action %v; want the model's answer that it could not refund", j.Status, j.Output, out.Action)
		}
		if n := len(r.hooks.callsOf("lookup_order")); n != 0 {
			t.Errorf("a switched-off tool reached the provider %d times", n)
		}
	})
}

// The continuation is durable and runs once: a process that starts after
// the refund executed (the job still queued) continues the journey with
// one model call; a journey a dead process was continuing is ended by
// the start-up sweep, its reservation released, and never continued
// twice.
func TestModelJourneyContinuesOnceAcrossProcesses(t *testing.T) {
	setup := func(t *testing.T) (*modelRig, journeys.Outcome) {
		r := newModelRig(t, map[string]string{"refund-agent": "script-refund"}, refundAgentSkill)
		out, err := r.runSkill("model_refunds", "Refund ORD-1005 please")
		if err != nil || out.Action == nil {
			t.Fatalf("Run = %v, action %v", err, out.Action)
		}
		for _, p := range []identity.Principal{approver, approver2}[:r.action(out.Action.ID).ApprovalsRequired] {
			if err := r.decide(p, out.Action.ID, approvals.Approve); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.ex.ExecuteAction(r.ctx, out.Action.ID); err != nil {
			t.Fatal(err)
		}
		return r, out
	}
	t.Run("restart", func(t *testing.T) {
		r, out := setup(t)
		// Another process, on the same database, with the job still queued.
		next, nextEx := r.services()
		q := jobs.New(r.db, r.jopts.Log, 1)
		q.Register(JobExecuteAction, nextEx.HandleExecute)
		q.Register(JobCallback, nextEx.HandleCallback)
		q.Register(journeys.JobContinueJourney, next.HandleContinue)
		r.queue = q
		r.drain()
		if j := r.journey(out.Journey.ID); j.Status != journeys.StatusCompleted {
			t.Fatalf("journey %s (%s) after the restart, want completed", j.Status, j.ErrorCode)
		}
		if n := len(r.fake.Seen()); n != 3 {
			t.Errorf("the model was called %d times, want 3", n)
		}
		if n := r.effects("issue_refund"); n != 1 {
			t.Errorf("%d refunds, want 1", n)
		}
	})
	t.Run("crash while continuing", func(t *testing.T) {
		r, out := setup(t)
		// The dead process had claimed the journey and reserved for it.
		const reserved = 20_000
		if err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(r.ctx, `UPDATE journeys SET status = 'running', reserved_micros = ? WHERE id = ?`, reserved, out.Journey.ID); err != nil {
				return err
			}
			return budgets.Reserve(r.ctx, tx, r.tenant.ID, reserved, r.clock())
		}); err != nil {
			t.Fatal(err)
		}
		next, _ := r.services()
		if n, err := next.SweepLeftRunning(r.ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("SweepLeftRunning = %d, %v; want the journey ended", n, err)
		}
		if err := next.ContinueJourney(r.ctx, out.Journey.ID); err != nil {
			t.Fatal(err)
		}
		if j := r.journey(out.Journey.ID); j.Status != journeys.StatusFailed || j.ErrorCode != "interrupted" {
			t.Errorf("journey %s (%s), want failed: interrupted", j.Status, j.ErrorCode)
		}
		if n := len(r.fake.Seen()); n != 2 {
			t.Errorf("the model was called %d times, want 2 (nothing after the crash)", n)
		}
		if b := r.budget(); b.ReservedMicros != 0 {
			t.Errorf("%d micro-units still reserved", b.ReservedMicros)
		}
	})
}

// BenchmarkModelDrivenJourney: one model-driven journey end to end — three
// model calls through the gateway to the fake upstream on loopback (each
// reserved, settled and traced), lookup_order under policy, a refused
// issue_refund (outside the skill), the sealed conversation saved after
// each step.
func BenchmarkModelDrivenJourney(b *testing.B) {
	r := newModelRig(b, map[string]string{"refund-agent": "script-refund"}, `---
name: lookups
description: A model looks orders up.
tools: [lookup_order]
max_steps: 3
model: refund-agent
---
Look the order up.
`)
	b.ResetTimer()
	for range b.N {
		out, err := r.runSkill("lookups", "Refund ORD-1004")
		if err != nil || out.Journey.Status != journeys.StatusCompleted {
			b.Fatalf("Run = %s, %v", out.Journey.Status, err)
		}
	}
}

// Package runtime runs journeys: the agent runtime shared by the JSON API
// and the console. A journey is admitted against the tenant's budget,
// routed to a skill, and runs the skill's steps; every tool call passes
// Warden's policy (scope, kill switch, argument schema), low and medium
// impact calls run through their provider, and a high-impact call stops the
// journey as a pending action awaiting approval. Everything written about a
// journey is redacted first.
package journeys

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/allowlist"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/tools"
)

// DefaultRelease is the release digest journeys run under when no release
// was ever activated and Options.Release names none: the SHA-256 of the
// built-in router's identity.
var DefaultRelease = func() string {
	sum := sha256.Sum256([]byte("warden-builtin-router/v1"))
	return "sha256:" + hex.EncodeToString(sum[:])
}()

// Prices are the deployment's model prices, in micro-units per token.
type Prices struct {
	InputTokenMicros  int64
	OutputTokenMicros int64
}

// Limits bound a journey.
type Limits struct {
	MaxInputBytes   int // longer inputs are refused
	MaxOutputTokens int // the estimate's allowance for output
	MaxSteps        int // the estimate's allowance for tool calls
	// MaxDuration bounds a journey from admission to its answer (default
	// 30s): every tool call gets the time left, less a reserve for
	// recording the result (tools.Guard), and a journey over it ends
	// cancelled instead of holding its reservation.
	MaxDuration time.Duration
}

// Options build a Service.
type Options struct {
	DB        *store.DB
	Log       *slog.Logger
	Router    *skills.Router
	Providers map[string]tools.Provider // by provider kind: "builtin", "http"
	Redactor  *redact.Redactor
	Sealer    *seal.Sealer
	Prices    Prices
	Limits    Limits
	// Agent and Env say whose release pointer admission reads
	// (releases.DefaultAgent and DefaultEnv when empty). Release is the
	// digest journeys run under while that pointer has never been set:
	// the built-in bundle's (app.New publishes it), or DefaultRelease.
	Agent   string
	Env     string
	Release string
	// Queue runs approved actions; Decide wakes it.
	Queue *jobs.Queue
	Now   func() time.Time
	// Guard is the policy the Providers are wrapped in (tools.Guard), for
	// Dependencies; nil when they are not guarded.
	Guard *tools.Guard
	// Models is the chat gateway that model-driven skills and the router
	// model call (model.go); nil when this Warden calls no model.
	Models ModelClient
	// RouterModel is the alias of the model that routes journeys among
	// the skills (WARDEN_ROUTER_MODEL); "" routes lexically only. The
	// lexical router decides whenever the model cannot.
	RouterModel string
	// ReplicaID is this process's entry in the replicas table
	// (store.RegisterReplica): journeys it admits record it, and the
	// sweeps end only journeys of replicas whose heartbeat stopped. ""
	// (tests, tools) means one process serves the database.
	ReplicaID string
}

// Service runs journeys.
type Service struct {
	o Options
	// running holds the journeys this process is running, by id, each
	// with the function that stops it (context.CancelCauseFunc): the
	// sweeps leave them alone, and Shutdown stops them.
	running sync.Map
	// behaviours caches each release digest's releases.Behaviour.
	behaviours sync.Map
}

// New returns a service with defaults filled in.
func New(o Options) *Service {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Release == "" {
		o.Release = DefaultRelease
	}
	if o.Agent == "" {
		o.Agent = releases.DefaultAgent
	}
	if o.Env == "" {
		o.Env = releases.DefaultEnv
	}
	if o.Prices == (Prices{}) {
		o.Prices = Prices{InputTokenMicros: 2, OutputTokenMicros: 8}
	}
	if o.Limits.MaxInputBytes == 0 {
		o.Limits.MaxInputBytes = 16 << 10
	}
	if o.Limits.MaxOutputTokens == 0 {
		o.Limits.MaxOutputTokens = 512
	}
	if o.Limits.MaxSteps == 0 {
		o.Limits.MaxSteps = 8
	}
	if o.Limits.MaxDuration <= 0 {
		o.Limits.MaxDuration = 30 * time.Second
	}
	return &Service{o: o}
}

// Error codes of refused or failed journeys, as the API reports them.
const (
	CodeInvalidInput    = "invalid_input"
	CodeNoRoute         = "no_route"
	CodeIncomplete      = "incomplete_request"
	CodeSkillNotScoped  = "skill_not_in_scope"
	CodeToolRefused     = "tool_refused"     // the provider refused the call for good
	CodeToolUnavailable = "tool_unavailable" // the provider failed after every retry
	// CodeDependencyUnavailable: Warden did not call the tool — its
	// circuit breaker is open or its bulkhead full (tools.Unavailable).
	CodeDependencyUnavailable = "dependency_unavailable"
	CodeCancelled             = "cancelled"
	CodeJourneyTimeout        = "journey_timeout" // Limits.MaxDuration ran out
	CodeInternal              = "internal"
)

// CodeIdempotencyMismatch: an Idempotency-Key was reused for another
// request.
const CodeIdempotencyMismatch = "idempotency_mismatch"

// kinds says what sort of refusal each code is.
var kinds = map[string]problem.Kind{
	CodeInvalidInput:          problem.KindInvalid,
	CodeNoRoute:               problem.KindUnprocessable,
	CodeIncomplete:            problem.KindUnprocessable,
	CodeSkillNotScoped:        problem.KindForbidden,
	CodeSkillDisabled:         problem.KindUnprocessable,
	CodeToolRefused:           problem.KindUnprocessable,
	CodeToolUnavailable:       problem.KindUnavailable,
	CodeDependencyUnavailable: problem.KindUnavailable,
	CodeCancelled:             problem.KindUnavailable,
	CodeJourneyTimeout:        problem.KindUnavailable,
	CodeInternal:              problem.KindInternal,
	CodeIdempotencyMismatch:   problem.KindUnprocessable,
}

// Refuse is the refusal or failure of a journey or an action with code
// (one vocabulary of codes for the API).
func Refuse(code, message string, cause error) *problem.Error {
	// Warden's own failure to write is the storage's, when the storage
	// says so: 503 with Retry-After, like every other write path.
	if code == CodeInternal && errors.Is(cause, store.ErrStorageUnavailable) {
		var sp *problem.Error
		errors.As(cause, &sp)
		return sp
	}
	p := &problem.Error{Kind: kinds[code], Code: code, Message: message, Err: cause}
	if p.Kind == problem.KindUnavailable {
		p.RetryAfter = 5 * time.Second
	}
	return p
}

// ErrShuttingDown is the cause a journey's context ends with when Warden
// stops it to shut down (Shutdown, and the HTTP server once its grace ran
// out): the journey ends cancelled and says so.
var ErrShuttingDown = errors.New("warden is shutting down")

// stopped is the refusal of a journey whose context ended: it ran out of
// its time (Limits.MaxDuration, 503 journey_timeout), the client went
// away or Warden is shutting down (cancelled).
func stopped(ctx context.Context, s *Service) *problem.Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Refuse(CodeJourneyTimeout, fmt.Sprintf("The journey did not finish within %s; it was stopped.", s.o.Limits.MaxDuration), ctx.Err())
	}
	if errors.Is(context.Cause(ctx), ErrShuttingDown) {
		return Refuse(CodeCancelled, "Warden is shutting down; the journey was stopped. Send it again.", context.Cause(ctx))
	}
	return Refuse(CodeCancelled, "The client went away; the journey was stopped.", ctx.Err())
}

// stoppedIfEnded is runErr, or the journey's stop when its context ended
// and runErr is a failure rather than a refusal: a read or a model call
// that fails because the client went away is the client's leaving, not
// Warden's fault (no internal error, no 500). A refusal decided before
// (policy, routing) stands.
func stoppedIfEnded(ctx context.Context, s *Service, runErr error) error {
	if runErr == nil || ctx.Err() == nil {
		return runErr
	}
	var p *problem.Error
	if errors.As(runErr, &p) && p.Kind != problem.KindInternal && p.Kind != problem.KindUnavailable {
		return runErr
	}
	return stopped(ctx, s)
}

// admitTimeout bounds the admission's transaction, which does not end
// with the request (Run).
const admitTimeout = 10 * time.Second

// JourneyError is the refusal or failure of a journey that was recorded
// before it ended: the API answers with the journey as well.
type JourneyError struct {
	Journey Journey
	Problem *problem.Error
}

func (e *JourneyError) Error() string { return e.Problem.Error() }
func (e *JourneyError) Unwrap() error { return e.Problem }

// Request is one journey to run for an authenticated caller.
type Request struct {
	Caller   admission.Caller
	Input    string
	Skill    string // optional explicit skill
	Metadata map[string]string
	// Personal are values the caller declared personal (the metadata
	// members its request marks x-warden-personal): tokenised wherever
	// the journey writes them, whatever detection says.
	Personal      []redact.Marked
	RequestID     string
	CorrelationID string // the client's; stored and answered redacted
}

// Outcome is a finished (or paused) journey.
type Outcome struct {
	Journey Journey
	Action  *approvals.Action // when awaiting approval
}

// Estimate is the most a journey with this input can cost: the input's
// tokens, the output allowance and the step allowance at the dearest tool.
func (s *Service) Estimate(ctx context.Context, input string) (int64, error) {
	dearest, err := catalog.MaxUnitCost(ctx, s.o.DB.Read())
	if err != nil {
		return 0, fmt.Errorf("estimate: %w", err)
	}
	return tokens(input)*s.o.Prices.InputTokenMicros +
		int64(s.o.Limits.MaxOutputTokens)*s.o.Prices.OutputTokenMicros +
		int64(s.o.Limits.MaxSteps)*dearest, nil
}

// piiToken matches the replacements redaction writes, such as [email:3f9a1c2b].
var piiToken = regexp.MustCompile(`\[[a-z_]+:[0-9a-f]{8}\]`)

func withoutPII(redacted string) string { return piiToken.ReplaceAllString(redacted, " ") }

// tokens approximates a text's token count (about four bytes a token).
func tokens(s string) int64 { return int64((len(s) + 3) / 4) }

// Run runs one journey. A refusal before admission (bad input, budget)
// records nothing; from admission on, the journey is recorded and its
// reservation is settled or released whatever happens, including a
// cancelled context (a client that went away). It is a span of the
// trace (tracing.go).
func (s *Service) Run(ctx context.Context, req Request) (Outcome, error) {
	ctx, span := startJourney(ctx, req)
	out, err := s.runJourney(ctx, req)
	endJourney(span, out, err)
	return out, err
}

func (s *Service) runJourney(ctx context.Context, req Request) (Outcome, error) {
	if req.Input == "" || len(req.Input) > s.o.Limits.MaxInputBytes {
		return Outcome{}, Refuse(CodeInvalidInput, fmt.Sprintf("input must be 1 to %d bytes of text", s.o.Limits.MaxInputBytes), nil)
	}
	estimate, err := s.Estimate(ctx, req.Input)
	if err != nil {
		const msg = "The catalog cannot be read right now."
		if s.o.DB.NotAnswering(err) {
			return Outcome{}, s.o.DB.StorageNotAnswering(msg, err)
		}
		return Outcome{}, problem.Unavailable(admission.CodeUnavailable, msg, time.Second).Wrap(err)
	}
	now := s.o.Now()
	red := allowlist.Redactor(ctx, s.o.DB.Read(), s.o.Redactor, req.Caller.Tenant.ID).Marking(req.Personal)
	ctx = redact.NewContext(ctx, red) // what is logged of the journey, and its model calls' records
	j := &Journey{
		ID: NewID(), TenantID: req.Caller.Tenant.ID, TenantSlug: req.Caller.Tenant.Slug,
		KeyID: req.Caller.Key.ID, RequestID: req.RequestID, CorrelationID: red.String(req.CorrelationID),
		Status: StatusRunning, Input: red.String(req.Input),
		ReservedMicros: estimate, CreatedAt: now,
	}
	j.Cost.InputTokens = tokens(req.Input)
	// The journey counts as running here from before its admission
	// commits, so no sweep of this process takes it for one a crash left;
	// Shutdown stops it through jstop.
	jctx, jstop := context.WithCancelCause(ctx)
	defer jstop(nil)
	s.running.Store(j.ID, jstop)
	defer s.running.Delete(j.ID)
	// The admission is written on a context of its own: on PostgreSQL a
	// COMMIT the client's hang-up interrupts may still commit, and the
	// journey would stay running with its reservation while Run reported
	// nothing admitted. Once admitted, a client that left stops the
	// journey below, which ends it cancelled and releases the rest.
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), admitTimeout)
	err = s.o.DB.Transact(actx, func(tx *store.Tx) error {
		if err := admission.Reserve(actx, tx, j.TenantID, estimate, now); err != nil {
			return err
		}
		// The release is fixed at admission: a rollback later changes new
		// journeys, never this one. Reading it here, in the admission's
		// transaction, is one indexed read and sees every activation,
		// including those of other processes (the CLI). While a canary
		// runs, the journey's id decides its side (releases.InCanary).
		release, err := s.releaseFor(actx, tx, j.ID)
		if err != nil {
			return err
		}
		j.Release = release
		// The key's last use is noted by the gateway that admitted the
		// request (keys.Usage), not written here.
		return insertJourney(actx, tx, j, s.o.ReplicaID)
	})
	acancel()
	if err != nil {
		var p *problem.Error
		if !errors.As(err, &p) || p.Kind != problem.KindExhausted {
			// A commit that failed may have committed all the same (a
			// connection lost during COMMIT): then the journey is ended
			// here, and its reservation released, instead of waiting for
			// a sweep.
			s.abandon(j)
		}
		if p != nil {
			return Outcome{}, p
		}
		const msg = "The budget cannot be written right now; nothing was admitted."
		if s.o.DB.NotAnswering(err) {
			return Outcome{}, s.o.DB.StorageNotAnswering(msg, err)
		}
		return Outcome{}, problem.Unavailable(admission.CodeUnavailable, msg, 2*time.Second).Wrap(err)
	}

	r := &run{s: s, req: req, j: j, start: now, red: red}
	// The journey's deadline is passed down to every tool call.
	ctx, cancel := context.WithTimeout(jctx, s.o.Limits.MaxDuration)
	defer cancel()
	out, runErr := r.execute(ctx)
	runErr = stoppedIfEnded(ctx, s, runErr)
	if ferr := r.finish(out, runErr); ferr != nil {
		if p, ok := approvals.ExceedsRefundable(ferr); ok && runErr == nil {
			return Outcome{Journey: *j}, &JourneyError{Journey: *j, Problem: p}
		}
		s.o.Log.ErrorContext(ctx, "could not record the end of a journey", "journey", j.ID, "err", ferr)
		if runErr == nil {
			runErr = Refuse(CodeInternal, "The journey's result could not be recorded.", ferr)
		}
	}
	if runErr != nil {
		var p *problem.Error
		if !errors.As(runErr, &p) {
			p = Refuse(CodeInternal, "The journey failed.", runErr)
		}
		return Outcome{Journey: *j}, &JourneyError{Journey: *j, Problem: p}
	}
	return Outcome{Journey: *j, Action: r.action}, nil
}

// releaseFor is the digest of the release a journey with this id runs
// under now: the active release of the runtime's agent in its
// environment, or the canary's candidate when the journey falls in its
// share. An empty id asks for the active release.
func (s *Service) releaseFor(ctx context.Context, q store.Querier, journeyID string) (string, error) {
	p, err := releases.Active(ctx, q, s.o.Agent, s.o.Env)
	switch {
	case err == nil && journeyID == "":
		return p.Digest, nil
	case err == nil:
		return p.DigestFor(journeyID), nil
	case errors.Is(err, store.ErrNotFound):
		return s.o.Release, nil
	default:
		return "", err
	}
}

// Release is the digest new journeys run under now.
func (s *Service) Release(ctx context.Context) (string, error) {
	return s.releaseFor(ctx, s.o.DB.Read(), "")
}

// run is one journey in flight.
type run struct {
	s       *Service
	req     Request
	j       *Journey
	start   time.Time
	skill   skills.Skill
	steps   int
	results []skills.StepResult
	pending *pendingCall
	action  *approvals.Action
	refusal *policy.Decision
	// modelDriven: a model drove the journey; its model calls were
	// charged by the gateway, not at Prices.
	modelDriven bool
	// precharged is the part of the journey's cost already charged to
	// the budget: a continued journey's cost before it paused.
	precharged int64
	// routedBy names the model that chose the skill; "" when the lexical
	// router did.
	routedBy string
	// journal is what was recorded of the journey and not written yet
	// (record, flush, finish).
	journal []journalEntry
	// red is what the run writes with (redactor); nil: the
	// installation's redactor.
	red *redact.Redactor
}

type pendingCall struct {
	tool   tools.Tool
	args   json.RawMessage
	reason string
	rule   string
	n      int
	facts  policy.Facts
}

// execute routes and runs the steps; it returns the output text.
func (r *run) execute(ctx context.Context) (string, error) {
	s := r.s
	// Routing sees the request without its personal data: a card number or
	// an address says nothing about what the customer wants.
	// The release the journey was admitted under decides the routing.
	// r.j.Input is the request's text redacted by this run's redactor at
	// admission (runJourney): the same text, not redacted a second time.
	skill, score, err := r.route(ctx, r.j.Input, r.req.Skill)
	if err != nil && !errors.Is(err, skills.ErrNoRoute) && !errors.Is(err, skills.ErrUnknownSkill) {
		r.record(ctx, Step{Kind: "route", Status: "failed", Error: "the release cannot be read"})
		return "", Refuse(CodeInternal, "The release this journey runs under cannot be read.", err)
	}
	if err != nil {
		r.record(ctx, Step{Kind: "route", Status: "failed", Error: "no skill matches"})
		return "", Refuse(CodeNoRoute, "No skill matches this request.", err)
	}
	r.skill = skill
	r.j.Skill = skill.Name
	if err := r.checkSkillOn(ctx); err != nil {
		return "", err
	}
	routed := fmt.Sprintf(`{"skill":%q,"score":%.3f}`, skill.Name, score)
	if r.routedBy != "" {
		routed = fmt.Sprintf(`{"skill":%q,"router":%q}`, skill.Name, r.routedBy)
	}
	r.record(ctx, Step{Kind: "route", Status: "ok", Result: routed})
	if !r.req.Caller.Key.Allows("skill", skill.Name) {
		s.auditViolation(ctx, r, "", CodeSkillNotScoped, "skill "+skill.Name+" is not in the key's scopes")
		return "", Refuse(CodeSkillNotScoped, fmt.Sprintf("The key's scopes do not include skill %q.", skill.Name), nil)
	}
	if skill.Model != "" {
		return r.drive(ctx, nil)
	}
	plan, err := skill.Steps(skills.Input{Text: r.req.Input, Metadata: r.req.Metadata})
	if err != nil {
		if errors.Is(err, skills.ErrIncomplete) {
			return "", Refuse(CodeIncomplete, "The request is missing information: "+r.redactErr(err), err)
		}
		return "", Refuse(CodeIncomplete, "The request cannot be planned: "+r.redactErr(err), err)
	}
	for i, st := range plan {
		if err := ctx.Err(); err != nil {
			return "", stopped(ctx, s)
		}
		if i >= skill.MaxSteps {
			break
		}
		args, err := st.Args(r.results)
		var stop *skills.Stop
		if errors.As(err, &stop) {
			return stop.Output, nil
		}
		if err != nil {
			return "", Refuse(CodeIncomplete, "The request cannot be completed: "+r.redactErr(err), err)
		}
		out, err := r.call(ctx, st, args)
		if err != nil {
			return "", err
		}
		if r.pending != nil {
			r.results = append(r.results, skills.StepResult{Tool: st.Tool, Args: args, Pending: true})
			break
		}
		r.results = append(r.results, skills.StepResult{Tool: st.Tool, Args: args, Output: out})
	}
	return skills.Summarize(skill, r.results), nil
}

// call checks one tool call against policy and runs it, or records it as
// pending approval.
func (r *run) call(ctx context.Context, st skills.Step, args json.RawMessage) (json.RawMessage, error) {
	s := r.s
	var tp *tools.Tool
	// A tool switched off for this tenant alone is off for this call
	// (catalog.ForTenant, read in the same statement).
	t, err := catalog.GetForTenant(ctx, s.o.DB.Read(), st.Tool, r.j.TenantID)
	switch {
	case err == nil:
		tp = &t
	case errors.Is(err, store.ErrNotFound):
	default:
		return nil, Refuse(CodeInternal, "The tool catalog cannot be read.", err)
	}
	d := policy.Check(r.req.Caller.Key, st.Tool, tp, args)
	started := s.o.Now()
	if !d.Allowed {
		r.refusal = &d
		r.record(ctx, Step{Kind: "tool", Tool: st.Tool, Arguments: r.redactArgs(t, args), Status: "refused", Error: r.redactor().String(d.Reason), StartedAt: started})
		s.auditViolation(ctx, r, st.Tool, d.Code, d.Reason)
		p := d.Refusal()
		p.Message = r.redactor().String(p.Message)
		return nil, p
	}
	if d.NeedsApproval {
		if err := s.CheckCall(ctx, t, args, r.j.TenantSlug); err != nil {
			var pe *problem.Error
			errors.As(err, &pe)
			r.record(ctx, Step{Kind: "tool", Tool: t.Name, Arguments: r.redactArgs(t, args), Status: "failed", Error: pe.Message, StartedAt: started})
			if ctx.Err() != nil {
				return nil, stopped(ctx, s)
			}
			return nil, err
		}
		r.steps++
		r.pending = &pendingCall{tool: t, args: args, reason: st.Reason, rule: d.Rule, n: r.steps, facts: d.Facts}
		return nil, nil
	}
	p := s.o.Providers[t.Provider]
	if p == nil {
		return nil, Refuse(CodeToolUnavailable, fmt.Sprintf("Tool %q has no provider in this Warden (%s).", t.Name, t.Provider), nil)
	}
	// A call that changes something outside Warden is journalled around
	// the effect, as it happens: what led to it before, its result after.
	// A read goes in the journal with the journey's end.
	effect := t.Impact != risk.ImpactLow
	if effect {
		r.flush(ctx)
	}
	// Providers retry transient failures themselves, within the tool's
	// attempts and timeout, always with this key.
	key := stepKey(r.j.ID, r.steps+1, args)
	res, err := p.Execute(ctx, t, tools.Call{Tool: t.Name, Args: args, IdempotencyKey: key, Tenant: r.j.TenantSlug})
	if effect {
		defer r.flush(ctx)
	}
	step := Step{Kind: "tool", Tool: t.Name, Arguments: r.redactArgs(t, args), Units: res.Units, Latency: s.o.Now().Sub(started), StartedAt: started}
	if err != nil {
		step.Status, step.Error = "failed", r.redactor().String(err.Error())
		r.record(ctx, step)
		if ctx.Err() != nil {
			return nil, stopped(ctx, s)
		}
		var te *tools.Error
		if errors.As(err, &te) && te.Kind == tools.Unavailable {
			// Refused before anything was sent: the tool's breaker is open
			// or its bulkhead full. Fail fast, and say when to come back.
			p := Refuse(CodeDependencyUnavailable, fmt.Sprintf("Tool %q is unavailable right now: %s", t.Name, r.redactor().String(te.Reason)), err)
			if wait, ok := tools.RetryAfter(err); ok {
				p.RetryAfter = wait
			}
			return nil, p
		}
		code := CodeToolUnavailable
		if !tools.IsTransient(err) && !errors.Is(err, context.DeadlineExceeded) {
			code = CodeToolRefused
		}
		return nil, Refuse(code, fmt.Sprintf("Tool %q failed: %s", t.Name, r.redactor().String(err.Error())), err)
	}
	step.Status, step.Result = "ok", r.redactJSON(res.Output)
	r.j.Cost.ToolUnits += res.Units
	r.j.Cost.TotalMicros += res.Units * t.UnitCostMicros
	r.recordWith(ctx, step, s.totalOf(r.j.TenantID, t, d.Facts.Target, res.Output))
	return res.Output, nil
}

// totalOf is the write that keeps what a lookup answered as its target's
// total (the members the catalog names, tools.Tool TotalResult and
// TotalCurrencyResult), so that a refund of the target asking for more
// than is left of it is refused; it goes with the step's own write. nil
// for a tool that declares none, or an answer without them.
func (s *Service) totalOf(tenantID string, t tools.Tool, target string, output json.RawMessage) func(context.Context, *store.Tx) error {
	var m map[string]json.RawMessage
	if t.TotalResult == "" || target == "" || json.Unmarshal(output, &m) != nil {
		return nil
	}
	minor, err := money.ParseMinor(m[t.TotalResult])
	if err != nil {
		return nil
	}
	var code string
	if json.Unmarshal(m[t.TotalCurrencyResult], &code) != nil {
		return nil
	}
	c, err := money.ParseCurrency(code)
	if err != nil {
		return nil
	}
	total, key := money.Amount{Minor: minor, Currency: c}, approvals.TargetOf(s.o.Redactor, target)
	return func(ctx context.Context, tx *store.Tx) error {
		return approvals.RecordTotal(ctx, tx, tenantID, key, total, t.Name, s.o.Now())
	}
}

// stepKey is the idempotency key of a low or medium impact call: stable
// for the journey, the step and the arguments.
func stepKey(journeyID string, n int, args json.RawMessage) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%s", journeyID, n, args))
	return "wdn_" + hex.EncodeToString(sum[:16])
}

// record appends a step to the journey's journal. The journal is kept in
// memory and written with the journey's end (finish), in the settlement's
// transaction, or before a call with an external effect (flush): a read
// journey writes twice, at admission and at its end. A journey a crash
// interrupts loses only the steps of its reads, which changed nothing;
// the sweep ends it.
func (r *run) record(ctx context.Context, st Step) { r.recordWith(ctx, st, nil) }

// recordWith is record with also, a write of the step's consequences
// (nil for none), in the same transaction as the step.
func (r *run) recordWith(_ context.Context, st Step, also func(context.Context, *store.Tx) error) {
	r.steps++
	st.N = r.steps
	if st.StartedAt.IsZero() {
		st.StartedAt = r.s.o.Now()
	}
	r.journal = append(r.journal, journalEntry{step: st, also: also})
	r.j.Steps = append(r.j.Steps, st)
}

// journalEntry is a step recorded but not written yet, with the write of
// its consequences; or an audit event of the journey (a policy refusal).
type journalEntry struct {
	step  Step
	also  func(context.Context, *store.Tx) error
	event *audit.Event
}

// writeJournal writes the journal in tx: the steps and their
// consequences first, the audit events last (the audit chain's lock is
// the last lock a transaction takes).
func (r *run) writeJournal(ctx context.Context, tx *store.Tx) error {
	if err := r.writeSteps(ctx, tx); err != nil {
		return err
	}
	return r.writeEvents(ctx, tx)
}

// writeSteps writes the journal's steps, in one statement, and their
// consequences.
func (r *run) writeSteps(ctx context.Context, tx *store.Tx) error {
	var steps []Step
	for _, e := range r.journal {
		if e.event == nil {
			steps = append(steps, e.step)
		}
	}
	if err := insertSteps(ctx, tx, r.j.ID, steps); err != nil {
		return err
	}
	for _, e := range r.journal {
		if e.also != nil {
			if err := e.also(ctx, tx); err != nil {
				return err
			}
		}
	}
	return nil
}

// journalHasSteps reports whether the journal holds a step (not only
// audit events).
func (r *run) journalHasSteps() bool {
	for _, e := range r.journal {
		if e.event == nil {
			return true
		}
	}
	return false
}

// writeEvents appends the journal's audit events in tx.
func (r *run) writeEvents(ctx context.Context, tx *store.Tx) error {
	for _, e := range r.journal {
		if e.event == nil {
			continue
		}
		if _, err := audit.Append(ctx, tx, *e.event); err != nil {
			return err
		}
	}
	return nil
}

// flush writes the journal now, in a transaction of its own: before a
// call with an external effect, whose idempotency key counts the steps
// before it, and right after it, so the effect is on record as soon as it
// happened. A failure is logged, and the steps stay in the journal for
// the journey's end to write.
func (r *run) flush(ctx context.Context) {
	if len(r.journal) == 0 {
		return
	}
	// The work is done: record it even if the caller went away.
	ctx = context.WithoutCancel(ctx)
	err := r.s.o.DB.Transact(ctx, func(tx *store.Tx) error { return r.writeJournal(ctx, tx) })
	if err != nil {
		r.s.o.Log.ErrorContext(ctx, "could not record a journey's steps", "journey", r.j.ID, "steps", len(r.journal), "err", err)
		return
	}
	r.journal = nil
}

// finish settles the budget and writes the journey's final state, and the
// pending action when there is one, in one transaction. It runs even when
// the request's context is cancelled.
func (r *run) finish(output string, runErr error) error {
	s := r.s
	j := r.j
	now := s.o.Now()
	j.Latency = now.Sub(r.start)
	j.Output = r.redactor().String(output)
	if !r.modelDriven {
		j.Cost.OutputTokens = tokens(output)
		j.Cost.TotalMicros += j.Cost.InputTokens*s.o.Prices.InputTokenMicros + j.Cost.OutputTokens*s.o.Prices.OutputTokenMicros
	}
	switch {
	case runErr != nil:
		j.Status = StatusFailed
		var p *problem.Error
		if errors.As(runErr, &p) {
			j.ErrorCode = p.Code
			if p.Code == CodeCancelled {
				j.Status = StatusCancelled
			}
		} else {
			j.ErrorCode = CodeInternal
		}
		if j.Status == StatusCancelled && !r.modelDriven {
			// The client went away: what ran is charged (its input and the
			// tools that answered), no output was produced.
			j.Cost.TotalMicros -= j.Cost.OutputTokens * s.o.Prices.OutputTokenMicros
			j.Cost.OutputTokens = 0
		}
	case r.pending != nil:
		j.Status = StatusAwaitingApproval
	default:
		j.Status = StatusCompleted
	}
	j.FinishedAt = &now
	if j.Status == StatusAwaitingApproval {
		j.FinishedAt = nil
	}
	// The transaction may run more than once (store.Transact, and the
	// retries of ending below): what it produces is kept only once it has
	// committed.
	var action *approvals.Action
	var approval *Step
	// refused is the pending call's refusal inside the transaction that
	// would create its action: another action on its target took what was
	// left to refund first (approvals.CodeExceedsRefundable). The journey
	// then fails as if policy had refused the call.
	var refused *problem.Error
	status, finished, errorCode, out := j.Status, j.FinishedAt, j.ErrorCode, j.Output
	err := s.ending(func(ctx context.Context) error {
		action, approval, refused = nil, nil, nil
		err := s.o.DB.Transact(ctx, func(tx *store.Tx) error {
			action, approval, refused = nil, nil, nil
			j.Status, j.FinishedAt, j.ErrorCode, j.Output = status, finished, errorCode, out
			// Locks in one order on PostgreSQL, the order the sweeps and
			// the decisions take them too: the journey's row, the
			// budget's, the audit chain's last. The steps come first: new
			// rows, and a lookup's total (a row of its own).
			pending := r.pending != nil && runErr == nil
			if pending {
				if err := lockRunning(ctx, tx, j.ID); err != nil {
					return err
				}
			}
			if err := r.writeSteps(ctx, tx); err != nil {
				return err
			}
			if !pending {
				if err := finishJourney(ctx, tx, j); err != nil {
					return err
				}
				if err := settle(ctx, tx, j, r.precharged); err != nil {
					return err
				}
				return r.writeEvents(ctx, tx)
			}
			// The charge does not depend on whether the action is
			// created: the budget is settled before it, and the action's
			// own audit event comes after the budget's lock.
			if err := settle(ctx, tx, j, r.precharged); err != nil {
				return err
			}
			a, err := s.createAction(ctx, tx, r, now)
			if p, ok := approvals.ExceedsRefundable(err); ok {
				refused = p
				j.Status, j.FinishedAt, j.ErrorCode, j.Output = StatusFailed, &now, p.Code, ""
				st := Step{N: r.pending.n, Kind: "tool", Tool: r.pending.tool.Name, Arguments: r.redactJSON(r.pending.args),
					Status: "refused", Error: r.redactor().String(p.Message), StartedAt: now}
				if err := insertStep(ctx, tx, j.ID, st); err != nil {
					return err
				}
				approval = &st
				if err := finishJourney(ctx, tx, j); err != nil {
					return err
				}
				return r.writeEvents(ctx, tx)
			}
			if err != nil {
				return err
			}
			st := Step{N: r.pending.n, Kind: "approval", Tool: a.Tool, Arguments: string(a.ArgumentsRedacted),
				Status: "awaiting_approval", Result: fmt.Sprintf(`{"action":%q}`, a.ID), StartedAt: now}
			if err := insertStep(ctx, tx, j.ID, st); err != nil {
				return err
			}
			action, approval = &a, &st
			if err := finishJourney(ctx, tx, j); err != nil {
				return err
			}
			return r.writeEvents(ctx, tx)
		})
		if err == nil {
			r.journal = nil
		}
		if errors.Is(err, errEnded) {
			// Ended already: by an earlier attempt whose commit was
			// reported lost, or by a sweep. Its reservation went back then.
			// The journal is still written when the sweep was first; after
			// an earlier attempt its steps are there, and the write fails
			// on them, changing nothing.
			if r.journalHasSteps() {
				_ = s.o.DB.Transact(ctx, func(tx *store.Tx) error { return r.writeJournal(ctx, tx) })
			}
			r.journal = nil
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if refused != nil {
		r.pending = nil
		j.Steps = append(j.Steps, *approval)
		return refused
	}
	if action != nil {
		r.action = action
		j.Steps = append(j.Steps, *approval)
	}
	return nil
}

// ending runs fn — a write that ends a journey and settles its
// reservation, and does nothing when the journey has ended already — on a
// context of its own, again after a failure (a lost connection, a
// storage hiccup), for up to endingTimeout: a journey whose end is not
// written keeps its reservation until a sweep.
func (s *Service) ending(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), endingTimeout)
	defer cancel()
	wait := 50 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		var p *problem.Error
		if errors.As(err, &p) && p.Kind != problem.KindUnavailable && p.Kind != problem.KindInternal {
			return err // a refusal: trying again changes nothing
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// endingTimeout bounds how long ending tries to write a journey's end.
const endingTimeout = 10 * time.Second

func (s *Service) redactJSON(raw json.RawMessage) string { return s.o.Redactor.JSONText(raw) }

// redactor is what the run writes with: the installation's redactor
// keeping the tenant's allow-list readable and tokenising the values the
// request declared personal (Request.Personal).
func (r *run) redactor() *redact.Redactor {
	if r.red != nil {
		return r.red
	}
	return r.s.o.Redactor
}

func (r *run) redactJSON(raw json.RawMessage) string { return r.redactor().JSONText(raw) }

// redactArgs is a call's arguments as the journal keeps them: redacted,
// with the fields t's schema declares personal tokenised whole.
func (r *run) redactArgs(t tools.Tool, args json.RawMessage) string {
	return r.redactor().JSONTextDeclared(args, t.Personal())
}

// redactArgsOf is redactArgs for a call of the tool named name, read from
// the catalog (a tool not there declares nothing).
func (r *run) redactArgsOf(ctx context.Context, name string, args json.RawMessage) string {
	t, _ := catalog.Get(ctx, r.s.o.DB.Read(), name)
	return r.redactArgs(t, args)
}

// redactArgs is run.redactArgs outside a run (a replay): the
// installation's redactor.
func (s *Service) redactArgs(t tools.Tool, args json.RawMessage) string {
	return s.o.Redactor.JSONTextDeclared(args, t.Personal())
}

func (r *run) redactErr(err error) string { return r.redactor().String(err.Error()) }

// auditViolation records a policy refusal: the event goes in the
// journal, written with the journey's end (or before its next external
// effect).
func (s *Service) auditViolation(_ context.Context, r *run, tool, code, reason string) {
	r.journal = append(r.journal, journalEntry{event: &audit.Event{
		Actor:   audit.Actor{Type: audit.ActorKey, ID: r.req.Caller.Key.ID},
		Tenant:  r.j.TenantSlug,
		Verb:    "policy.violation",
		Subject: audit.Subject{Type: "journey", ID: r.j.ID},
		Details: map[string]any{"code": code, "tool": tool, "skill": r.j.Skill, "reason": r.redactor().String(reason)},
	}})
}

// Sealer is the sealer of action arguments (tests and benchmarks create
// actions with it).
func (s *Service) Sealer() *seal.Sealer { return s.o.Sealer }

// Dependencies is the health of every tool dependency the guard has seen:
// breaker state, recent error rate, latency, bulkhead use.
func (s *Service) Dependencies() []tools.DependencyHealth {
	if s.o.Guard == nil {
		return nil
	}
	return s.o.Guard.Health()
}

// SkillNames lists the skills journeys can be routed to (the key form
// offers them as scopes).
func (s *Service) SkillNames(context.Context) ([]string, error) { return s.o.Router.Names(), nil }

// CheckCall asks the tool's provider, before approvers are asked, whether
// the call can run for the tenant at all: the simulator knows each
// tenant's orders, and another tenant's order is unknown (422
// tool_refused), so no approver is asked about it and no dual-control
// total counts it. A provider that cannot tell (a webhook, an agent that
// executes its own tools) has no objection; Execute decides for good.
func (s *Service) CheckCall(ctx context.Context, t tools.Tool, args json.RawMessage, tenant string) error {
	p := s.o.Providers[t.Provider]
	if p == nil {
		return nil
	}
	err := tools.Check(ctx, p, t, tools.Call{Tool: t.Name, Args: args, Tenant: tenant})
	if err == nil {
		return nil
	}
	var te *tools.Error
	if errors.As(err, &te) && te.Kind == tools.Terminal {
		return Refuse(CodeToolRefused, fmt.Sprintf("Tool %q refused the call: %s.", t.Name, s.o.Redactor.String(te.Reason)), err)
	}
	return Refuse(CodeToolUnavailable, fmt.Sprintf("Tool %q cannot check the call right now; try again.", t.Name), err)
}

// notify wakes the job queue after a commit that enqueued work.
func (s *Service) notify() {
	if s.o.Queue != nil {
		s.o.Queue.Notify()
	}
}

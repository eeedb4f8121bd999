package journeys

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wardenhq/warden/allowlist"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/tenants"
)

// A skill whose SKILL.md names a model is driven by that model instead of
// a Go plan: the runtime runs a tool-calling loop through the chat gateway
// (models.Gateway.Complete: the tenant's budget, the model_calls trace
// linked to the journey). The model gets the skill's instructions as its
// system message, the journey's input as the user's, and only the skill's
// allowed tools, each with its catalog JSON Schema. It decides which tool
// to call; Warden decides whether the call runs: every call passes
// run.call, the policy of a planned step (scope, kill switch, argument
// schema, impact). A call outside the allow-list is refused and the model
// is told so; a high-impact call becomes a pending action and the journey
// awaits approval. The conversation is kept sealed (journey_conversations),
// so after the approved action executes the loop continues from where it
// stopped — the receipt as the tool's result, then the next model turn —
// in a durable job (JobContinueJourney), never asking the model again for
// a turn it already answered. The skill's max_steps bounds the tool calls.

// Codes of model-driven journeys.
const (
	// CodeMaxSteps: the model asked for more tool calls than the skill's
	// max_steps allows; the journey fails.
	CodeMaxSteps = "max_steps_exceeded"
	// CodeModelUnavailable: the skill's model could not be called (every
	// deployment down, budget, no deployment).
	CodeModelUnavailable = "model_unavailable"
	// CodeToolNotInSkill is the refusal of a tool call the model asked for
	// outside the skill's tools.
	CodeToolNotInSkill = "tool_not_in_skill"
)

func init() {
	kinds[CodeMaxSteps] = problem.KindUnprocessable
	kinds[CodeModelUnavailable] = problem.KindUnavailable
}

// JobContinueJourney continues a model-driven journey after its approved
// action executed.
const JobContinueJourney = "continue_journey"

// ModelClient is the chat gateway as the runtime uses it
// (*models.Gateway).
type ModelClient interface {
	Complete(ctx context.Context, caller admission.Caller, req models.ChatRequest) (models.ChatResponse, error)
}

// conversation is a model-driven journey's state, sealed at rest.
type conversation struct {
	Messages  []models.Message `json:"messages"`
	Turns     int              `json:"-"` // model calls made
	ToolCalls int              `json:"-"` // tool calls the model asked for
	Pending   string           `json:"-"` // the call awaiting approval
}

// modelCaller is the journey's caller allowed to use the skill's model:
// the model is the release's choice (its SKILL.md), and the key's scope
// for the skill is what authorises the journey, so the key needs no
// model:ALIAS scope of its own for it.
func modelCaller(c admission.Caller, alias string) admission.Caller {
	k := c.Key
	k.Scopes = append(slices.Clone(k.Scopes), "model:"+alias)
	c.Key = k
	return c
}

// drive runs the skill's tool-calling loop from c (a new conversation when
// nil) until the model answers in text, a call awaits approval, or the
// loop must stop.
func (r *run) drive(ctx context.Context, c *conversation) (string, error) {
	s, skill := r.s, r.skill
	r.modelDriven = true
	if s.o.Models == nil {
		return "", Refuse(CodeModelUnavailable, fmt.Sprintf("Skill %q is driven by model %q, and this Warden has no model gateway.", skill.Name, skill.Model), nil)
	}
	offered, err := r.offeredTools(ctx)
	if err != nil {
		return "", err
	}
	if c == nil {
		c = &conversation{Messages: []models.Message{
			models.TextMessage("system", skill.Instructions),
			models.TextMessage("user", r.req.Input),
		}}
	}
	caller := modelCaller(r.req.Caller, skill.Model)
	mctx := models.WithRedactor(models.WithJourney(ctx, r.j.ID), r.redactor())
	for {
		if ctx.Err() != nil {
			return "", stopped(ctx, s)
		}
		started := s.o.Now()
		resp, err := s.o.Models.Complete(mctx, caller, models.ChatRequest{Model: skill.Model, Messages: c.Messages, Tools: offered})
		c.Turns++
		if err != nil {
			r.record(ctx, Step{Kind: "model", Tool: skill.Model, Status: "failed", Error: r.redactor().String(problem.From(err).Message),
				Latency: s.o.Now().Sub(started), StartedAt: started})
			r.saveConversation(ctx, c)
			if ctx.Err() != nil {
				return "", stopped(ctx, s)
			}
			if p := problem.From(err); p.Kind == problem.KindExhausted {
				return "", p // the budget cannot cover the model's next turn
			}
			return "", Refuse(CodeModelUnavailable, fmt.Sprintf("Model %q could not be called: %s", skill.Model, r.redactor().String(problem.From(err).Message)), err)
		}
		msg := resp.Message()
		msg.Role = "assistant"
		c.Messages = append(c.Messages, msg)
		r.j.Cost.InputTokens += resp.Usage.PromptTokens
		r.j.Cost.OutputTokens += resp.Usage.CompletionTokens
		r.record(ctx, Step{Kind: "model", Tool: skill.Model, Status: "ok", Result: r.redactJSON(turnSummary(msg)),
			Latency: s.o.Now().Sub(started), StartedAt: started})
		if len(msg.ToolCalls) == 0 {
			r.saveConversation(ctx, c)
			return msg.Text(), nil
		}
		for i, tc := range msg.ToolCalls {
			if c.ToolCalls >= skill.MaxSteps {
				r.record(ctx, Step{Kind: "tool", Tool: tc.Function.Name, Arguments: r.redactArgsOf(ctx, tc.Function.Name, json.RawMessage(tc.Function.Arguments)),
					Status: "refused", Error: fmt.Sprintf("the skill allows %d tool calls (max_steps)", skill.MaxSteps)})
				r.saveConversation(ctx, c)
				return "", Refuse(CodeMaxSteps, fmt.Sprintf("The model asked for more than the %d tool calls skill %q allows; the journey was stopped.", skill.MaxSteps, skill.Name), nil)
			}
			c.ToolCalls++
			result, err := r.modelCall(ctx, tc)
			if err != nil {
				r.saveConversation(ctx, c)
				return "", err
			}
			if r.pending != nil {
				c.Pending = tc.ID
				// Calls of the same turn after the pending one did not run;
				// the model hears so when the journey continues.
				for _, later := range msg.ToolCalls[i+1:] {
					c.Messages = append(c.Messages, toolResult(later.ID, `{"error":"not run: an earlier call of this turn awaited approval; ask again if it is still needed"}`))
				}
				r.saveConversation(ctx, c)
				return skills.Summarize(skill, []skills.StepResult{{Tool: tc.Function.Name, Pending: true}}), nil
			}
			c.Messages = append(c.Messages, toolResult(tc.ID, result))
			// Saved after every result: a crash re-runs from here, and the
			// calls before were journaled with their idempotency keys.
			r.saveConversation(ctx, c)
		}
	}
}

// turnSummary is what the journal shows of a model turn: its text, or the
// tools it asked for (arguments are in the tool steps).
func turnSummary(m models.Message) json.RawMessage {
	var out struct {
		Text  string   `json:"text,omitempty"`
		Calls []string `json:"tool_calls,omitempty"`
	}
	out.Text = m.Text()
	for _, c := range m.ToolCalls {
		out.Calls = append(out.Calls, c.Function.Name)
	}
	b, _ := json.Marshal(out)
	return b
}

func toolResult(id, content string) models.Message {
	m := models.TextMessage("tool", content)
	m.ToolCallID = id
	return m
}

// modelCall runs one tool call the model asked for through the policy of
// a planned step (run.call). It returns the tool's result as the model
// reads it — the output, or why the call was refused — and an error when
// the journey must end (the tool failed, Warden's own failure). A call
// that needs approval leaves r.pending set.
func (r *run) modelCall(ctx context.Context, tc models.ToolCall) (string, error) {
	s, skill := r.s, r.skill
	name := tc.Function.Name
	args := json.RawMessage(tc.Function.Arguments)
	if !slices.Contains(skill.Tools, name) {
		reason := fmt.Sprintf("tool %q is not one of skill %s's tools", name, skill.Name)
		r.record(ctx, Step{Kind: "tool", Tool: name, Arguments: r.redactArgsOf(ctx, name, args), Status: "refused", Error: reason})
		s.auditViolation(ctx, r, name, CodeToolNotInSkill, reason)
		return refusalResult(CodeToolNotInSkill, "Refused: "+reason+". Use only the tools you were given."), nil
	}
	r.refusal = nil
	out, err := r.call(ctx, skills.Step{Tool: name, Reason: fmt.Sprintf("Model %s asked for this call while running skill %s.", skill.Model, skill.Name)}, args)
	if err != nil {
		if d := r.refusal; d != nil {
			// Refused by policy before anything ran: the model hears why
			// and may correct itself; nothing was called.
			r.refusal = nil
			return refusalResult(d.Code, "Refused: "+d.Reason), nil
		}
		return "", err
	}
	if r.pending != nil {
		return "", nil
	}
	return string(out), nil
}

func refusalResult(code, reason string) string {
	b, _ := json.Marshal(map[string]string{"error": code, "reason": reason})
	return string(b)
}

// offeredTools are the skill's tools as the model sees them: name, the
// catalog's description and the JSON Schema of the arguments. A tool
// missing from the catalog is left out (a call to it is refused anyway).
func (r *run) offeredTools(ctx context.Context) ([]models.Tool, error) {
	var out []models.Tool
	for _, name := range r.skill.Tools {
		t, err := catalog.Get(ctx, r.s.o.DB.Read(), name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, Refuse(CodeInternal, "The tool catalog cannot be read.", err)
		}
		out = append(out, models.FunctionTool(t.Name, t.Description, t.ArgsSchema))
	}
	return out, nil
}

// saveConversation writes the conversation, sealed to the journey. A
// failed write is logged: the journey's final write reports storage
// failures, and a journey whose conversation is lost cannot continue
// after approval (it fails then, without calling anything).
func (r *run) saveConversation(ctx context.Context, c *conversation) {
	ctx = context.WithoutCancel(ctx)
	err := r.s.o.DB.Transact(ctx, func(tx *store.Tx) error { return r.s.writeConversation(ctx, tx, r.j.ID, c) })
	if err != nil {
		r.s.o.Log.ErrorContext(ctx, "could not save a journey's conversation", "journey", r.j.ID, "err", err)
	}
}

func (s *Service) writeConversation(ctx context.Context, tx *store.Tx, journeyID string, c *conversation) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	sealed := s.o.Sealer.Seal(raw, conversationAAD(journeyID))
	_, err = tx.ExecContext(ctx, `INSERT INTO journey_conversations (journey_id, sealed, model_turns, tool_calls, pending_call, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (journey_id) DO UPDATE SET sealed = excluded.sealed, model_turns = excluded.model_turns,
			tool_calls = excluded.tool_calls, pending_call = excluded.pending_call, updated_at = excluded.updated_at`,
		journeyID, sealed, c.Turns, c.ToolCalls, c.Pending, store.FormatTime(s.o.Now()))
	if err != nil {
		return fmt.Errorf("save conversation of %s: %w", journeyID, err)
	}
	return nil
}

func conversationAAD(journeyID string) string { return "journey-conversation:" + journeyID }

// readConversation opens a journey's conversation, or store.ErrNotFound
// for a journey that has none (one driven by a Go plan).
func (s *Service) readConversation(ctx context.Context, q store.Querier, journeyID string) (*conversation, error) {
	var sealed, pending string
	var turns, calls int
	err := q.QueryRowContext(ctx, `SELECT sealed, model_turns, tool_calls, pending_call FROM journey_conversations WHERE journey_id = ?`, journeyID).
		Scan(&sealed, &turns, &calls, &pending)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read conversation of %s: %w", journeyID, err)
	}
	raw, err := s.o.Sealer.Open(sealed, conversationAAD(journeyID))
	if err != nil {
		return nil, fmt.Errorf("open conversation of %s: %w", journeyID, err)
	}
	var c conversation
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("read conversation of %s: %w", journeyID, err)
	}
	c.Turns, c.ToolCalls, c.Pending = turns, calls, pending
	return &c, nil
}

// ModelTurns is how many model calls a model-driven journey has made (0
// for a journey driven by a Go plan).
func (s *Service) ModelTurns(ctx context.Context, journeyID string) (int, error) {
	var n int
	err := s.o.DB.Read().QueryRowContext(ctx, `SELECT model_turns FROM journey_conversations WHERE journey_id = ?`, journeyID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

type continueJob struct {
	JourneyID string `json:"journey_id"`
}

// resumeModel is resume for a model-driven journey, inside the executed
// action's transaction: the approval step gets its result, the receipt
// becomes the pending call's tool result in the conversation, and the
// job that runs the next model turn is enqueued. It reports false for a
// journey without a conversation waiting for this action.
func (s *Service) resumeModel(ctx context.Context, tx *store.Tx, a approvals.Action, j Journey, receipt json.RawMessage, units, costMicros int64) (bool, error) {
	c, err := s.readConversation(ctx, tx, j.ID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if c.Pending == "" || j.Status != StatusAwaitingApproval {
		return true, nil // continued already
	}
	c.Messages = append(c.Messages, toolResult(c.Pending, string(receipt)))
	c.Pending = ""
	if err := s.writeConversation(ctx, tx, j.ID, c); err != nil {
		return true, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE journey_steps SET status = 'ok', result = ?, units = ? WHERE journey_id = ? AND n = ?`,
		s.redactJSON(receipt), units, j.ID, a.StepN); err != nil {
		return true, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE journeys SET tool_units = tool_units + ?, cost_micros = cost_micros + ? WHERE id = ?`,
		units, costMicros, j.ID); err != nil {
		return true, err
	}
	return true, jobs.Enqueue(ctx, tx, JobContinueJourney, continueJob{JourneyID: j.ID}, jobs.Options{UniqueKey: "continue:" + j.ID + ":" + a.ID})
}

// HandleContinue is the job that continues a model-driven journey after
// its approved action executed (see resumeModel). The journey is claimed
// (awaiting_approval → running) with its new budget reservation in one
// transaction, so it continues once; a crash while it runs leaves it
// running, and the start-up sweep ends it and releases the reservation —
// a tool that already ran is never run again.
func (s *Service) HandleContinue(ctx context.Context, jb jobs.Job) error {
	var p continueJob
	if err := json.Unmarshal(jb.Payload, &p); err != nil {
		return &jobs.Permanent{Err: err}
	}
	return s.ContinueJourney(ctx, p.JourneyID)
}

// ContinueJourney continues a model-driven journey whose approved action
// executed (HandleContinue). Calling it again changes nothing. Each run is
// a span, the parent of the model calls it makes (tracing.go).
func (s *Service) ContinueJourney(ctx context.Context, journeyID string) error {
	ctx, span := startContinue(ctx, journeyID)
	err := s.continueJourney(ctx, journeyID)
	endContinue(span, err)
	return err
}

func (s *Service) continueJourney(ctx context.Context, journeyID string) error {
	j, err := GetJourney(ctx, s.o.DB.Read(), journeyID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.Status != StatusAwaitingApproval {
		return nil
	}
	c, err := s.readConversation(ctx, s.o.DB.Read(), j.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Pending != "" {
		return nil // still waiting for its action
	}
	key, err := keys.ByID(ctx, s.o.DB.Read(), j.KeyID)
	if err != nil {
		return err
	}
	tenant, err := tenants.ByID(ctx, s.o.DB.Read(), j.TenantID)
	if err != nil {
		return err
	}
	key.TenantSlug = tenant.Slug
	now := s.o.Now()
	r := &run{s: s, j: &j, start: j.CreatedAt, req: Request{Caller: admission.Caller{Key: key, Tenant: tenant}}, precharged: j.Cost.TotalMicros,
		red: allowlist.Redactor(ctx, s.o.DB.Read(), s.o.Redactor, j.TenantID)}
	for _, st := range j.Steps {
		r.steps = max(r.steps, st.N)
	}
	skill, ok := s.o.Router.Skill(j.Skill)
	var claimErr error
	switch {
	case !ok || skill.Model == "":
		claimErr = Refuse(CodeInternal, fmt.Sprintf("Skill %q is no longer model-driven in this Warden; the journey cannot continue.", j.Skill), nil)
	case !key.Active(now):
		claimErr = Refuse(CodeToolRefused, "The journey's key was revoked or expired before it could continue.", nil)
	case tenant.Frozen:
		claimErr = Refuse(CodeToolRefused, "The tenant was frozen before the journey could continue.", nil)
	}
	r.skill = skill
	// The rest of the loop may call each allowed tool; model calls reserve
	// their own worst case in the gateway.
	dearest, err := catalog.MaxUnitCost(ctx, s.o.DB.Read())
	if err != nil {
		return err
	}
	estimate := int64(max(skill.MaxSteps, 1)) * dearest
	// Counted as running here before the claim commits, as in Run.
	jctx, jstop := context.WithCancelCause(ctx)
	defer jstop(nil)
	s.running.Store(j.ID, jstop)
	defer s.running.Delete(j.ID)
	// The claim is written on a context of its own, as Run's admission
	// is: a COMMIT interrupted by the job's end may commit anyway, and a
	// retry of the job would then find the journey claimed and leave it
	// running with its reservation. The claim records this replica, whose
	// sweeps (and Shutdown) are the journey's from now on.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), admitTimeout)
	defer ccancel()
	claimed := false
	err = s.o.DB.Transact(cctx, func(tx *store.Tx) error {
		claimed = false
		res, err := tx.ExecContext(cctx, `UPDATE journeys SET status = ?, reserved_micros = ?, replica_id = ? WHERE id = ? AND status = ?`,
			StatusRunning, estimate, s.o.ReplicaID, j.ID, StatusAwaitingApproval)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		claimed = true
		return admission.Reserve(cctx, tx, j.TenantID, estimate, now)
	})
	var p *problem.Error
	switch {
	case errors.As(err, &p):
		// The budget cannot cover the rest: the journey ends here.
		claimErr, estimate, claimed = p, 0, true
		err = s.o.DB.Transact(cctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(cctx, `UPDATE journeys SET status = ?, reserved_micros = 0, replica_id = ? WHERE id = ? AND status = ?`,
				StatusRunning, s.o.ReplicaID, j.ID, StatusAwaitingApproval)
			return err
		})
		if err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if !claimed {
		return nil
	}
	j.ReservedMicros = estimate
	var out string
	runErr := claimErr
	if runErr == nil {
		dctx, cancel := context.WithTimeout(jctx, s.o.Limits.MaxDuration)
		out, runErr = r.drive(dctx, c)
		runErr = stoppedIfEnded(dctx, s, runErr)
		cancel()
	}
	if ferr := r.finish(out, runErr); ferr != nil {
		s.o.Log.ErrorContext(ctx, "could not record the end of a journey", "journey", j.ID, "err", ferr)
		return &jobs.Permanent{Err: ferr}
	}
	s.notify()
	return nil
}

// routeByModel asks the router model which skill fits the (redacted)
// text, among the skills the release allows. It returns false — and the
// lexical router decides — when no router model is configured, the model
// is down, errs, is slow, or names no skill it was offered.
func (r *run) routeByModel(ctx context.Context, text string, allow func(string) bool) (skills.Skill, bool) {
	s := r.s
	alias := s.o.RouterModel
	if alias == "" || s.o.Models == nil {
		return skills.Skill{}, false
	}
	var list strings.Builder
	var names []string
	for _, name := range s.o.Router.Names() {
		sk, ok := s.o.Router.Skill(name)
		if !ok || (allow != nil && !allow(name)) {
			continue
		}
		names = append(names, name)
		fmt.Fprintf(&list, "- %s: %s\n", name, strings.Join(strings.Fields(sk.Description), " "))
	}
	system := "You route customer-support requests to one skill. Answer with the skill's name only, exactly as written, " +
		"or none when no skill fits.\nSkills:\n" + list.String()
	rctx, cancel := context.WithTimeout(models.WithRedactor(models.WithJourney(ctx, r.j.ID), r.redactor()), routerTimeout)
	defer cancel()
	started := s.o.Now()
	resp, err := s.o.Models.Complete(rctx, modelCaller(r.req.Caller, alias), models.ChatRequest{Model: alias, MaxTokens: 16,
		Messages: []models.Message{models.TextMessage("system", system), models.TextMessage("user", withoutPII(text))}})
	if err != nil {
		r.record(ctx, Step{Kind: "model", Tool: alias, Status: "failed", Error: "router model: " + r.redactor().String(problem.From(err).Message) + "; the lexical router decides",
			Latency: s.o.Now().Sub(started), StartedAt: started})
		return skills.Skill{}, false
	}
	answer := strings.Trim(strings.TrimSpace(resp.Message().Text()), "`\"'. ")
	if !slices.Contains(names, answer) {
		r.record(ctx, Step{Kind: "model", Tool: alias, Status: "refused", Result: r.redactJSON(turnSummary(resp.Message())),
			Error: "router model named no offered skill; the lexical router decides", Latency: s.o.Now().Sub(started), StartedAt: started})
		return skills.Skill{}, false
	}
	r.record(ctx, Step{Kind: "model", Tool: alias, Status: "ok", Result: r.redactJSON(turnSummary(resp.Message())), Latency: s.o.Now().Sub(started), StartedAt: started})
	sk, _ := s.o.Router.Skill(answer)
	return sk, true
}

// routerTimeout bounds the router model's answer; the lexical router
// decides after it.
const routerTimeout = 10 * time.Second

package journeys

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/tools"
)

// Journey statuses.
const (
	StatusRunning          = "running"
	StatusCompleted        = "completed"
	StatusAwaitingApproval = "awaiting_approval"
	StatusFailed           = "failed"
	StatusRejected         = "rejected"
	StatusExpired          = "expired"
	StatusCancelled        = "cancelled"
)

// Cost is a journey's cost breakdown.
type Cost struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	ToolUnits    int64 `json:"tool_units"`
	ReviewUnits  int64 `json:"review_units"`
	TotalMicros  int64 `json:"total_micros"`
}

// Journey is one user outcome as recorded (inputs and outputs redacted).
type Journey struct {
	ID             string
	TenantID       string
	TenantSlug     string
	KeyID          string
	KeyName        string
	PrincipalID    string
	RequestID      string
	CorrelationID  string
	Skill          string
	Release        string
	Status         string
	ErrorCode      string
	Input          string
	Output         string
	Cost           Cost
	ReservedMicros int64
	Latency        time.Duration
	CreatedAt      time.Time
	FinishedAt     *time.Time
	Steps          []Step
}

// Step is one entry of the step journal.
type Step struct {
	N         int
	Kind      string // "route", "tool", "approval"
	Tool      string
	Arguments string // redacted JSON
	Result    string // redacted JSON or text
	// Status is "ok", "failed", "refused" or "awaiting_approval"; an
	// approval step whose action was rejected, expired or cancelled ends
	// with that status, and one whose action failed reads "failed".
	Status    string
	Error     string
	Units     int64
	Latency   time.Duration
	StartedAt time.Time
}

// insertJourney records j as admitted by replica (the sweeps leave the
// journeys of live replicas alone).
func insertJourney(ctx context.Context, tx *store.Tx, j *Journey, replica string) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO journeys (id, tenant_id, key_id, principal_id, request_id, correlation_id, skill, release_digest,
			status, input, input_tokens, reserved_micros, created_at, replica_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.TenantID, j.KeyID, j.PrincipalID, j.RequestID, j.CorrelationID, j.Skill, j.Release,
		j.Status, j.Input, j.Cost.InputTokens, j.ReservedMicros, store.FormatTime(j.CreatedAt), replica)
	if err != nil {
		return fmt.Errorf("insert journey: %w", err)
	}
	return nil
}

func insertStep(ctx context.Context, tx *store.Tx, journeyID string, s Step) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO journey_steps (journey_id, n, kind, tool, arguments, result, status, error, units, latency_ms, started_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		journeyID, s.N, s.Kind, s.Tool, s.Arguments, s.Result, s.Status, s.Error, s.Units, s.Latency.Milliseconds(),
		store.FormatTime(s.StartedAt))
	if err != nil {
		return fmt.Errorf("record step %d: %w", s.N, err)
	}
	return nil
}

// insertSteps writes steps in one statement (one round trip).
func insertSteps(ctx context.Context, tx *store.Tx, journeyID string, steps []Step) error {
	switch len(steps) {
	case 0:
		return nil
	case 1:
		return insertStep(ctx, tx, journeyID, steps[0])
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO journey_steps (journey_id, n, kind, tool, arguments, result, status, error, units, latency_ms, started_at) VALUES `)
	args := make([]any, 0, 11*len(steps))
	for i, s := range steps {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, journeyID, s.N, s.Kind, s.Tool, s.Arguments, s.Result, s.Status, s.Error, s.Units, s.Latency.Milliseconds(),
			store.FormatTime(s.StartedAt))
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("record steps %d to %d: %w", steps[0].N, steps[len(steps)-1].N, err)
	}
	return nil
}

// lockRunning locks the row of journey id while it is still running, on
// PostgreSQL, where it is the first lock of the transaction that ends
// it; otherwise it returns errEnded. SQLite's single writer needs none.
func lockRunning(ctx context.Context, tx *store.Tx, id string) error {
	if tx.Dialect() != store.Postgres {
		return nil
	}
	var got string
	err := tx.QueryRowContext(ctx, `SELECT id FROM journeys WHERE id = ? AND status = ? FOR NO KEY UPDATE`, id, StatusRunning).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return errEnded
	}
	if err != nil {
		return fmt.Errorf("lock journey %s: %w", id, err)
	}
	return nil
}

// errEnded rolls back the end of a journey that is no longer running:
// another write ended it, and settled its reservation, first.
var errEnded = errors.New("journey no longer running")

// finishJourney writes j's end, only while it is still running; otherwise
// it returns errEnded, and the caller's transaction (with its settlement)
// rolls back.
func finishJourney(ctx context.Context, tx *store.Tx, j *Journey) error {
	res, err := tx.ExecContext(ctx, `
		UPDATE journeys SET skill = ?, status = ?, error_code = ?, output = ?, input_tokens = ?, output_tokens = ?,
			tool_units = ?, review_units = ?, cost_micros = ?, latency_ms = ?, finished_at = ?
		WHERE id = ? AND status = ?`,
		j.Skill, j.Status, j.ErrorCode, j.Output, j.Cost.InputTokens, j.Cost.OutputTokens, j.Cost.ToolUnits,
		j.Cost.ReviewUnits, j.Cost.TotalMicros, j.Latency.Milliseconds(), optTime(j.FinishedAt), j.ID, StatusRunning)
	if err != nil {
		return fmt.Errorf("finish journey %s: %w", j.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("finish journey %s: %w", j.ID, err)
	} else if n == 0 {
		return errEnded
	}
	return nil
}

const selectJourney = `SELECT j.id, j.tenant_id, t.slug, j.key_id, COALESCE(k.name, ''), j.principal_id, j.request_id,
	j.correlation_id, j.skill, j.release_digest, j.status, j.error_code, j.input, j.output, j.input_tokens,
	j.output_tokens, j.tool_units, j.review_units, j.cost_micros, j.reserved_micros, j.latency_ms, j.created_at,
	j.finished_at
	FROM journeys j JOIN tenants t ON t.id = j.tenant_id LEFT JOIN virtual_keys k ON k.id = j.key_id`

// ErrNotFound is a journey that does not exist (or that the caller may not
// see: it is told the same); errors.Is matches it against store.ErrNotFound.
var ErrNotFound = problem.NotFound("not_found", "There is no journey with this id.")

// GetJourney loads a journey with its steps, or ErrNotFound.
func GetJourney(ctx context.Context, q store.Querier, id string) (Journey, error) {
	j, err := store.Get(ctx, q, scanJourney, selectJourney+` WHERE j.id = ?`, id)
	if errors.Is(err, store.ErrNotFound) {
		return Journey{}, ErrNotFound
	}
	if err != nil {
		return Journey{}, fmt.Errorf("load journey %s: %w", id, err)
	}
	steps, err := store.Query(ctx, q, scanStep, `SELECT n, kind, tool, arguments, result, status, error, units, latency_ms, started_at
		FROM journey_steps WHERE journey_id = ? ORDER BY n`, id)
	if err != nil {
		return Journey{}, fmt.Errorf("load steps of %s: %w", id, err)
	}
	j.Steps = steps
	return j, nil
}

func scanStep(sc scanner) (Step, error) {
	var s Step
	var ms int64
	var started string
	if err := sc.Scan(&s.N, &s.Kind, &s.Tool, &s.Arguments, &s.Result, &s.Status, &s.Error, &s.Units, &ms, &started); err != nil {
		return Step{}, err
	}
	s.Latency = time.Duration(ms) * time.Millisecond
	s.StartedAt, _ = time.Parse(time.RFC3339Nano, started)
	return s, nil
}

// Filter selects journeys for the traces page.
type Filter struct {
	TenantIDs []string // nil: all
	Status    string
	Skill     string
	ErrorCode string // the code a failed journey ended with
	Tool      string // journeys with a step calling this tool
	KeyID     string // the agent's key that asked
	Since     time.Time
	Until     time.Time
	Page      store.Page // the first page of 50 when zero
}

// journeyOrder is the traces' order: newest first (ids are ULIDs, which
// sort by time).
var journeyOrder = store.Order{Key: "j.id", KeyDesc: true, ID: "j.id", IDDesc: true}

// ListJourneys returns one page of journeys, newest first, without steps.
func ListJourneys(ctx context.Context, q store.Querier, f Filter) (store.Paged[Journey], error) {
	var where []string
	var args []any
	if f.TenantIDs != nil {
		if len(f.TenantIDs) == 0 {
			return store.Paged[Journey]{}, nil
		}
		where = append(where, "j.tenant_id IN (?"+strings.Repeat(",?", len(f.TenantIDs)-1)+")")
		for _, t := range f.TenantIDs {
			args = append(args, t)
		}
	}
	switch f.Status {
	case "":
	case StatusRunning:
		// The partial index journeys_running (migration 0046).
		where = append(where, "j.status = 'running'")
	case StatusCompleted:
		// Most journeys: a page fills from the tenant's or all journeys
		// in id order.
		where, args = append(where, "j.status = ?"), append(args, f.Status)
	default:
		// The second term, as written in the partial indexes
		// journeys_tenant_status_id and journeys_status_id (migration
		// 0046), lets both engines use them with a bound status.
		where, args = append(where, "j.status = ? AND j.status <> 'running' AND j.status <> 'completed'"), append(args, f.Status)
	}
	if f.Skill != "" {
		where, args = append(where, "j.skill = ?"), append(args, f.Skill)
	}
	if f.ErrorCode != "" {
		where, args = append(where, "j.error_code = ?"), append(args, f.ErrorCode)
	}
	if f.Tool != "" {
		where, args = append(where, "EXISTS (SELECT 1 FROM journey_steps s WHERE s.journey_id = j.id AND s.tool = ?)"), append(args, f.Tool)
	}
	if f.KeyID != "" {
		where, args = append(where, "j.key_id = ?"), append(args, f.KeyID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "j.created_at >= ?"), append(args, store.FormatTime(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "j.created_at < ?"), append(args, store.FormatTime(f.Until))
	}
	if f.Page.Size <= 0 {
		f.Page.Size = 50
	}
	if cond, cargs := f.Page.Where(journeyOrder); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	// The page is chosen from journeys alone, then joined: with the joins
	// in the same query, the planner may read every journey of every
	// tenant and sort them, which at a million journeys takes seconds.
	page := "SELECT * FROM journeys j"
	if len(where) > 0 {
		page += " WHERE " + strings.Join(where, " AND ")
	}
	page += " ORDER BY " + f.Page.OrderBy(journeyOrder) + " LIMIT ?"
	query := strings.Replace(selectJourney, "FROM journeys j ", "FROM ("+page+") j ", 1) + " ORDER BY " + f.Page.OrderBy(journeyOrder)
	out, err := store.Query(ctx, q, scanJourney, query, append(args, f.Page.Fetch())...)
	if err != nil {
		return store.Paged[Journey]{}, fmt.Errorf("list journeys: %w", err)
	}
	return store.Paginate(f.Page, out, func(j Journey) store.Cursor { return store.Cursor{Key: j.ID, ID: j.ID} }), nil
}

// SpentSince sums the cost of the tenant's journeys admitted since, and
// counts those that cost anything. It reads every journey of the period
// still kept: the Budgets page reads budgets.SpendSince, the running
// totals, which the tests check against this.
func SpentSince(ctx context.Context, q store.Querier, tenantID string, since time.Time) (micros int64, n int, err error) {
	err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_micros), 0), COUNT(*) FROM journeys
		WHERE tenant_id = ? AND created_at >= ? AND cost_micros > 0`, tenantID, store.FormatTime(since)).Scan(&micros, &n)
	if err != nil {
		return 0, 0, fmt.Errorf("journey spend: %w", err)
	}
	return micros, n, nil
}

// TopSpenders returns the tenant's journeys that cost the most since (a
// budget period's start, at 00:00 UTC), at most five. They are chosen
// from top_journeys, each UTC day's five costliest journeys (kept by
// triggers as journeys are charged: migration 0037), so the query reads
// five rows a day of the period, not every journey. A journey trace
// retention deleted is not shown; a day it purged only in part offers the
// survivors among its five.
func TopSpenders(ctx context.Context, q store.Querier, tenantID string, since time.Time, n int) ([]Journey, error) {
	since = budgets.PeriodStart(budgets.Day, since)
	out, err := store.Query(ctx, q, scanJourney, selectJourney+` JOIN top_journeys s ON s.journey_id = j.id
		WHERE s.tenant_id = ? AND s.day >= ? ORDER BY j.cost_micros DESC, j.id DESC LIMIT ?`, tenantID, store.FormatTime(since), min(n, 5))
	if err != nil {
		return nil, fmt.Errorf("top spenders: %w", err)
	}
	return out, nil
}

type scanner = store.Scanner

func scanJourney(s scanner) (Journey, error) {
	var j Journey
	var ms int64
	var created string
	var finished sql.NullString
	err := s.Scan(&j.ID, &j.TenantID, &j.TenantSlug, &j.KeyID, &j.KeyName, &j.PrincipalID, &j.RequestID, &j.CorrelationID,
		&j.Skill, &j.Release, &j.Status, &j.ErrorCode, &j.Input, &j.Output, &j.Cost.InputTokens, &j.Cost.OutputTokens,
		&j.Cost.ToolUnits, &j.Cost.ReviewUnits, &j.Cost.TotalMicros, &j.ReservedMicros, &ms, &created, &finished)
	if err != nil {
		return Journey{}, err
	}
	j.Latency = time.Duration(ms) * time.Millisecond
	j.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	if finished.Valid {
		t, _ := time.Parse(time.RFC3339Nano, finished.String)
		j.FinishedAt = &t
	}
	return j, nil
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return store.FormatTime(*t)
}

// DeleteOlderThan removes the tenant's traces (journeys and their step
// journals) created before cutoff. Audit events are never touched.
func DeleteOlderThan(ctx context.Context, tx *store.Tx, tenantID string, cutoff time.Time) (int64, error) {
	return DeleteRange(ctx, tx, tenantID, time.Time{}, cutoff)
}

// DeleteRange removes the tenant's traces (journeys and their step
// journals, by cascade) created at or after from and before to. Journeys
// still awaiting approval are kept: their action resumes them. Audit
// events are never touched.
func DeleteRange(ctx context.Context, tx *store.Tx, tenantID string, from, to time.Time) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM journeys WHERE tenant_id = ? AND created_at >= ? AND created_at < ? AND status != ?`,
		tenantID, store.FormatTime(from), store.FormatTime(to), StatusAwaitingApproval)
	if err != nil {
		return 0, fmt.Errorf("delete traces of %s: %w", tenantID, err)
	}
	return res.RowsAffected()
}

// FailAfterAction ends the journey that waited for a failed action, and
// marks its approval step failed with the (redacted) reason, so the trace
// does not keep saying the step awaits approval.
func FailAfterAction(ctx context.Context, tx *store.Tx, id string, step int, code, reason string, now time.Time) error {
	if id == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE journey_steps SET status = 'failed', error = ? WHERE journey_id = ? AND n = ? AND status = ?`,
		reason, id, step, StatusAwaitingApproval); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE journeys SET status = 'failed', error_code = ?, finished_at = ? WHERE id = ?`, code, store.FormatTime(now), id)
	return err
}

// completeAfterApproval records the approved step's (redacted) result and
// finishes the journey that waited for it, charging the step's units.
func completeAfterApproval(ctx context.Context, tx *store.Tx, id string, step int, result, output string, units, costMicros int64, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE journey_steps SET status = 'ok', result = ?, units = ? WHERE journey_id = ? AND n = ?`,
		result, units, id, step); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE journeys SET status = 'completed', output = ?, tool_units = tool_units + ?,
		cost_micros = cost_micros + ?, finished_at = ? WHERE id = ? AND status = 'awaiting_approval'`,
		output, units, costMicros, store.FormatTime(now), id)
	return err
}

// EndAfterAction ends the journey that waited for an action that was
// rejected, expired or cancelled, and marks its approval step so.
func EndAfterAction(ctx context.Context, tx *store.Tx, id string, step int, status string, now time.Time) error {
	if id == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE journey_steps SET status = ? WHERE journey_id = ? AND n = ? AND status = ?`,
		status, id, step, StatusAwaitingApproval); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE journeys SET status = ?, finished_at = ? WHERE id = ? AND status = ?`,
		status, store.FormatTime(now), id, StatusAwaitingApproval)
	return err
}

// WaitAgain reopens the journey that a failed action ended, when the
// action is retried: it waits for the action again, and the action's
// completion resumes it.
func WaitAgain(ctx context.Context, tx *store.Tx, id string, step int) error {
	if id == "" {
		return nil
	}
	res, err := tx.ExecContext(ctx, `UPDATE journeys SET status = ?, error_code = '', finished_at = NULL
		WHERE id = ? AND status = 'failed' AND error_code = 'action_failed'`, StatusAwaitingApproval, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	// Its approval step waits again too.
	_, err = tx.ExecContext(ctx, `UPDATE journey_steps SET status = ?, error = '' WHERE journey_id = ? AND n = ? AND status = 'failed'`,
		StatusAwaitingApproval, id, step)
	return err
}

// Resume continues the journey that waited for the action: the steps that
// ran before the approval are replayed from the journal (never re-run),
// the executed call's receipt is recorded as its step, and the journey
// finishes with the skill's summary. It runs inside the transaction that
// marks the action executed (package execution).
func (s *Service) Resume(ctx context.Context, tx *store.Tx, a approvals.Action, receipt json.RawMessage, t tools.Tool, now time.Time) error {
	if a.JourneyID == "" {
		return nil
	}
	j, err := GetJourney(ctx, tx, a.JourneyID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the trace was purged by retention: nothing to resume
	}
	if err != nil {
		return err
	}
	// A model-driven journey continues with its model (model.go).
	if ok, err := s.resumeModel(ctx, tx, a, j, receipt, 1, t.UnitCostMicros); ok || err != nil {
		return err
	}
	// The summary is written from the call as approved (unsealed), then
	// redacted like every output: from the redacted copy it would quote
	// the tail of a redaction token instead of an account's last four.
	args := a.ArgumentsRedacted
	if opened, err := approvals.OpenArgs(ctx, tx, s.o.Sealer, a.ID); err == nil {
		args = opened
	}
	var results []skills.StepResult
	for _, st := range j.Steps {
		switch {
		case st.Kind == "tool" && st.Status == "ok":
			results = append(results, skills.StepResult{Tool: st.Tool, Args: json.RawMessage(st.Arguments), Output: json.RawMessage(st.Result)})
		case st.Kind == "approval" && st.N == a.StepN:
			results = append(results, skills.StepResult{Tool: a.Tool, Args: args, Output: receipt})
		}
	}
	output := ""
	if skill, ok := s.o.Router.Skill(j.Skill); ok {
		output = skills.Summarize(skill, results)
	}
	const units = 1
	return completeAfterApproval(ctx, tx, j.ID, a.StepN, s.redactJSON(receipt), s.o.Redactor.String(output), units, units*t.UnitCostMicros, now)
}

// NewID returns a new journey id.
func NewID() string { return "jrn_" + store.NewID() }

// DoorCall is one tool call that came through a door other than a
// skill's journey (an agent's tools/call at /mcp): it is recorded as a
// finished journey of one tool step, so that Traces lists it with its
// server (Skill, such as "mcp:shop") and tool, the failure-rate alerts
// count it like any skill's journeys, and its cost shows among the
// tenant's spend. Arguments and Result are redacted by the caller.
type DoorCall struct {
	// ID is the journey's id (NewID), "" for a new one.
	ID              string
	TenantID, KeyID string
	// CorrelationID links the call to what it belongs to (its action).
	CorrelationID string
	Skill, Tool   string
	Arguments     string
	Result        string
	// Status is the journey's (completed, failed, rejected, expired,
	// cancelled, awaiting_approval); StepStatus the step's (ok, failed,
	// refused, or the approval's outcome).
	Status, StepStatus string
	ErrorCode, Error   string
	CostMicros         int64
	Latency            time.Duration
	At                 time.Time
}

// RecordDoorCall writes c as a finished journey with its one step, in tx,
// and returns the journey's id.
func RecordDoorCall(ctx context.Context, tx *store.Tx, c DoorCall) (string, error) {
	id := c.ID
	if id == "" {
		id = NewID()
	}
	units := int64(0)
	if c.StepStatus == "ok" {
		units = 1
	}
	finished := c.At.Add(c.Latency)
	_, err := tx.ExecContext(ctx, `
		INSERT INTO journeys (id, tenant_id, key_id, principal_id, request_id, correlation_id, skill, release_digest,
			status, error_code, input, output, tool_units, cost_micros, latency_ms, created_at, finished_at)
		VALUES (?, ?, ?, '', ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, c.TenantID, c.KeyID, id, c.CorrelationID, c.Skill, c.Status, c.ErrorCode, c.Arguments, c.Result,
		units, c.CostMicros, c.Latency.Milliseconds(), store.FormatTime(c.At), store.FormatTime(finished))
	if err != nil {
		return "", fmt.Errorf("record a call as a journey: %w", err)
	}
	err = insertStep(ctx, tx, id, Step{N: 1, Kind: "tool", Tool: c.Tool, Arguments: c.Arguments, Result: c.Result,
		Status: c.StepStatus, Error: c.Error, Units: units, Latency: c.Latency, StartedAt: c.At})
	return id, err
}

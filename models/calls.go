package models

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/platform/store"
)

// Call statuses.
const (
	StatusOK       = "ok"       // the upstream answered in full
	StatusCut      = "cut"      // a stream ended early; what was used is charged
	StatusRejected = "rejected" // the upstream refused the request (4xx); not retried
	StatusFailed   = "failed"   // every deployment failed before the first byte
)

// Attempt is one try of one deployment.
type Attempt struct {
	Deployment string `json:"deployment"`
	Status     int    `json:"status,omitempty"` // the upstream's HTTP status; 0 when none came
	Error      string `json:"error,omitempty"`  // why it failed: timeout, connection, 429, 5xx
	LatencyMS  int64  `json:"latency_ms"`
	// What the attempt used and cost, when it answered (a cascade pays for
	// every answer it asked for).
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	CostMicros   int64  `json:"cost_micros,omitempty"`
	Usage        string `json:"usage,omitempty"` // where the tokens came from: UsageReported, UsageEstimated, UsageInvalid
}

// Call is one call to the chat gateway, as recorded.
type Call struct {
	ID             string
	TenantID       string
	KeyID          string
	Alias          string
	Deployment     string // the one that answered; empty when none did
	Attempts       []Attempt
	Stream         bool
	CacheHit       bool // answered from the cache: not sent upstream, charged nothing
	Status         string
	HTTPStatus     int
	Latency        time.Duration
	TTFT           time.Duration // to the first byte sent to the agent
	InputTokens    int64
	OutputTokens   int64
	Usage          string // where the tokens came from: UsageReported, UsageEstimated, UsageInvalid; "" when nothing was used
	ReservedMicros int64  // the call's worst case, reserved before any upstream call
	CostMicros     int64  // what was charged: the usage at the deployment's prices, even above the reservation
	OverrunMicros  int64  // the cost above the reservation; above 0 the model_overrun alert fires
	Prompt         string // redacted
	Completion     string // redacted
	JourneyID      string // the journey whose skill made the call; "" for an agent's own call
	Operation      string // OpChat, OpResponses or OpEmbeddings; "" is recorded as OpChat
	Metadata       string // the agent's tags for the call: a JSON object, redacted; "" when none
	CreatedAt      time.Time
}

// Operations a model call serves (the OpenAI route it came through).
const (
	OpChat       = "chat"
	OpResponses  = "responses"
	OpEmbeddings = "embeddings"
)

// settleCall charges the call's cost against its reservation and records the
// call, in one transaction (doors call Gateway.settle, which also tells
// the observer): the budget and the trace always agree. The
// cost is charged whole, even above the reservation (budget.Charge): an
// upstream that billed more has the money, and the budget must say so.
// It only writes, so running it again after a retried transaction
// charges once.
func settleCall(ctx context.Context, db *store.DB, c Call) error {
	att, _ := json.Marshal(c.Attempts)
	if c.Operation == "" {
		c.Operation = OpChat
	}
	return db.Transact(ctx, func(tx *store.Tx) error {
		if c.ReservedMicros > 0 || c.CostMicros > 0 {
			if err := budgets.Charge(ctx, tx, c.TenantID, c.ReservedMicros, c.CostMicros); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO model_calls (id, tenant_id, key_id, alias, deployment, attempts, stream, status, http_status,
			latency_ms, ttft_ms, input_tokens, output_tokens, reserved_micros, cost_micros, prompt, completion, journey_id, created_at, cache_hit,
			overrun_micros, usage_source, operation, metadata)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.TenantID, c.KeyID, c.Alias, c.Deployment, string(att), boolInt(c.Stream), c.Status, c.HTTPStatus,
			c.Latency.Milliseconds(), c.TTFT.Milliseconds(), c.InputTokens, c.OutputTokens, c.ReservedMicros, c.CostMicros,
			c.Prompt, c.Completion, c.JourneyID, store.FormatTime(c.CreatedAt), boolInt(c.CacheHit), c.OverrunMicros, c.Usage, c.Operation, c.Metadata)
		if err != nil {
			return fmt.Errorf("record model call: %w", err)
		}
		return nil
	})
}

// Calls returns the newest calls of the given tenants, newest first;
// tenantIDs nil means all tenants, empty means none. The scope is part of
// the query, so a viewer scoped to some tenants sees their newest calls
// however busy the others are.
func Calls(ctx context.Context, q store.Querier, tenantIDs []string, limit int) ([]Call, error) {
	return CallsTagged(ctx, q, tenantIDs, Tag{}, limit)
}

// CallsTagged is Calls of the calls tagged t only (every call when t has
// no key). The tag is matched in the stored, redacted metadata: a value
// the redactor replaced is found by its token. replace() is SQLite's and
// PostgreSQL's alike and, unlike LIKE, case-sensitive on both.
func CallsTagged(ctx context.Context, q store.Querier, tenantIDs []string, t Tag, limit int) ([]Call, error) {
	if tenantIDs != nil && len(tenantIDs) == 0 {
		return nil, nil
	}
	var conds []string
	args := []any{}
	if tenantIDs != nil {
		conds = append(conds, "tenant_id IN (?"+strings.Repeat(",?", len(tenantIDs)-1)+")")
		for _, id := range tenantIDs {
			args = append(args, id)
		}
	}
	if t.Key != "" {
		conds = append(conds, "metadata <> '' AND replace(metadata, ?, '') <> metadata")
		args = append(args, t.needle())
	}
	where := ""
	if len(conds) > 0 {
		where = "WHERE " + strings.Join(conds, " AND ")
	}
	args = append(args, limit)
	out, err := store.Query(ctx, q, scanCall, `SELECT id, tenant_id, key_id, alias, deployment, attempts, stream, status, http_status, latency_ms, ttft_ms,
		input_tokens, output_tokens, reserved_micros, cost_micros, prompt, completion, created_at, cache_hit, journey_id, overrun_micros, usage_source, operation, metadata
		FROM model_calls `+where+` ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list model calls: %w", err)
	}
	return out, nil
}

func scanCall(s store.Scanner) (Call, error) {
	var c Call
	var att, created string
	var stream, hit int
	var lat, ttft int64
	if err := s.Scan(&c.ID, &c.TenantID, &c.KeyID, &c.Alias, &c.Deployment, &att, &stream, &c.Status, &c.HTTPStatus, &lat, &ttft,
		&c.InputTokens, &c.OutputTokens, &c.ReservedMicros, &c.CostMicros, &c.Prompt, &c.Completion, &created, &hit, &c.JourneyID, &c.OverrunMicros, &c.Usage, &c.Operation, &c.Metadata); err != nil {
		return Call{}, err
	}
	_ = json.Unmarshal([]byte(att), &c.Attempts)
	c.CacheHit = hit == 1
	c.Stream, c.Latency, c.TTFT = stream == 1, time.Duration(lat)*time.Millisecond, time.Duration(ttft)*time.Millisecond
	c.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	return c, nil
}

// SpentSince sums what the tenant's model calls cost since, and counts
// them (the Budgets page itemises them: model calls are charged on their
// own reservations, whether an agent or a model-driven journey made them).
// It reads every call of the period: the Budgets page reads
// budgets.SpendSince, the running totals, which the tests check against
// this.
func SpentSince(ctx context.Context, q store.Querier, tenantID string, since time.Time) (micros int64, n int, err error) {
	err = q.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_micros), 0), COUNT(*) FROM model_calls
		WHERE tenant_id = ? AND created_at >= ?`, tenantID, store.FormatTime(since)).Scan(&micros, &n)
	if err != nil {
		return 0, 0, fmt.Errorf("model call spend: %w", err)
	}
	return micros, n, nil
}

// Overrun is the calls of one deployment that cost more than their
// reservations (OverrunMicros above 0) in a window.
type Overrun struct {
	Deployment string // the deployment that answered ("" when none did; then Alias names the call)
	Alias      string
	Calls      int
	Micros     int64 // the overruns together
}

// Overruns lists, per deployment, the calls since then that cost more
// than their reservations, by deployment (the model_overrun alert).
func Overruns(ctx context.Context, q store.Querier, since time.Time) ([]Overrun, error) {
	out, err := store.Query(ctx, q, func(s store.Scanner) (Overrun, error) {
		var o Overrun
		err := s.Scan(&o.Deployment, &o.Alias, &o.Calls, &o.Micros)
		return o, err
	}, `SELECT deployment, MIN(alias), COUNT(*), SUM(overrun_micros) FROM model_calls
		WHERE overrun_micros > 0 AND created_at >= ? GROUP BY deployment ORDER BY deployment`, store.FormatTime(since))
	if err != nil {
		return nil, fmt.Errorf("model call overruns: %w", err)
	}
	return out, nil
}

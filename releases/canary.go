package releases

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
)

// CanaryResult is what a canary's journeys did.
type CanaryResult struct {
	Trials           int // journeys that ran under the canary
	Successes        int
	CriticalFailures int // a policy breach, a wrong effect: any one stops promotion
}

// Gate says whether a canary may be promoted.
type Gate struct {
	Promote    bool
	LowerBound float64 // Wilson score lower bound of the success rate, 95 %
}

// z95 is the two-sided 95 % normal quantile.
const z95 = 1.96

// CanaryGate decides promotion: the Wilson score lower bound (95 %) of
// the success rate must reach floor, and no journey may have failed
// critically. The lower bound, not the observed rate, so that few trials
// cannot promote: 24 of 25 is 96 % observed but only ≈ 0.805 assured.
func CanaryGate(r CanaryResult, floor float64) Gate {
	lb := WilsonLower(r.Successes, r.Trials, z95)
	return Gate{Promote: r.CriticalFailures == 0 && r.Trials > 0 && lb >= floor, LowerBound: lb}
}

// WilsonLower is the Wilson score interval's lower bound for successes
// out of trials at normal quantile z; 0 without trials.
func WilsonLower(successes, trials int, z float64) float64 {
	if trials <= 0 {
		return 0
	}
	n := float64(trials)
	p := float64(successes) / n
	z2 := z * z
	centre := p + z2/(2*n)
	margin := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return (centre - margin) / (1 + z2/n)
}

// InCanary says whether the journey with this id runs under the canary's
// candidate at share percent. The first 8 bytes of SHA-256(id) modulo 100
// decide: the same journey always lands on the same side (a retry or a
// resumed journey does not switch bundles), and over many ids the
// candidate gets its share. Share 0 never assigns, 100 always does.
func InCanary(journeyID string, share int) bool {
	if share <= 0 {
		return false
	}
	if share >= 100 {
		return true
	}
	sum := sha256.Sum256([]byte(journeyID))
	return binary.BigEndian.Uint64(sum[:8])%100 < uint64(share)
}

// DigestFor is the digest a journey with this id runs under: the
// candidate when a canary runs and assigns it, the active release
// otherwise.
func (p Pointer) DigestFor(journeyID string) string {
	if p.Candidate != "" && InCanary(journeyID, p.Share) {
		return p.Candidate
	}
	return p.Digest
}

// DefaultFloor is the success rate's lower bound a canary must reach
// unless its starter says otherwise.
const DefaultFloor = 0.90

// Canary errors people can act on.
var (
	ErrNoActive      = problem.Unprocessable("no_active_release", "Activate a release before starting a canary: the canary is compared with the active release.")
	ErrCanaryRunning = problem.Conflict("canary_running", "A canary is already running here; promote it or roll it back first.")
	ErrNoCanary      = problem.Conflict("no_canary", "No canary of that release is running here.")
	ErrSameRelease   = problem.Unprocessable("candidate_active", "That release is already active; choose another as the candidate.")
	ErrCanaryHeld    = problem.Unprocessable("canary_held", "The canary gate holds: the candidate may not be promoted yet.")
)

// CanaryOptions are a canary's optional requirements.
type CanaryOptions struct {
	// RequireLabels holds promotion until a replay of the candidate (made
	// against the active release) routes the labelled journeys at least as
	// well as the active release does.
	RequireLabels bool
}

// StartCanary runs candidate for sharePercent (1–100) of new journeys of
// agent in env, beside the active release, until it is promoted or rolled
// back. floor is the lower bound its success rate must reach (0 means
// DefaultFloor). It adds one pointer row with its audit event
// "release.canary_started" in one transaction; starting the same canary
// again adds nothing (changed is false), another one while it runs is a
// conflict.
func StartCanary(ctx context.Context, db *store.DB, by Author, agent, env, candidate string, sharePercent int, floor float64, reason string, opts ...CanaryOptions) (Pointer, bool, error) {
	var opt CanaryOptions
	if len(opts) > 0 {
		opt = opts[0]
	}
	reason = strings.TrimSpace(reason)
	if floor == 0 {
		floor = DefaultFloor
	}
	if err := checkTarget(agent, env); err != nil {
		return Pointer{}, false, err
	}
	fields := map[string]string{}
	if sharePercent < 1 || sharePercent > 100 {
		fields["share"] = "The share is a whole percentage from 1 to 100."
	}
	if !(floor > 0 && floor <= 1) {
		fields["floor"] = "The floor is a success rate above 0 and at most 1, such as 0.90."
	}
	if len(reason) > MaxReasonLen {
		fields["reason"] = fmt.Sprintf("Keep the reason under %d characters.", MaxReasonLen)
	}
	if len(fields) > 0 {
		return Pointer{}, false, &store.ValidationError{Fields: fields}
	}
	var p Pointer
	changed := false
	err := db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		if _, err := Get(ctx, tx, candidate); err != nil {
			return err
		}
		cur, err := Active(ctx, tx, agent, env)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return ErrNoActive
		case err != nil:
			return err
		case cur.Digest == candidate:
			return ErrSameRelease
		case cur.Candidate == candidate && cur.Share == sharePercent && cur.Floor == floor && cur.LabelGate == opt.RequireLabels:
			p = cur
			return nil
		case cur.Candidate != "":
			return ErrCanaryRunning
		}
		p, err = addRow(ctx, tx, by, Pointer{Agent: agent, Env: env, Digest: cur.Digest, Kind: KindCanaryStarted,
			Reason: reason, Candidate: candidate, Share: sharePercent, Floor: floor, LabelGate: opt.RequireLabels})
		if err != nil {
			return err
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: by.Actor, Verb: "release.canary_started", Subject: audit.Subject{Type: "release", ID: candidate},
			Details: map[string]any{"agent": agent, "env": env, "active": cur.Digest, "share": sharePercent,
				"floor": floor, "require_labels": opt.RequireLabels, "reason": reason},
		})
		return err
	})
	return p, changed, err
}

// StopCanary rolls the running canary of candidate back: new journeys all
// run under the active release again. It needs a reason, and adds one
// pointer row with its audit event "release.canary_rolled_back". When no
// canary of candidate runs (already rolled back or promoted) nothing is
// added (changed is false).
func StopCanary(ctx context.Context, db *store.DB, by Author, agent, env, candidate, reason string) (Pointer, bool, error) {
	return stopCanary(ctx, db, by, agent, env, candidate, reason, nil)
}

func stopCanary(ctx context.Context, db *store.DB, by Author, agent, env, candidate, reason string, v *Verdict) (Pointer, bool, error) {
	reason, err := checkMove(agent, env, reason, true)
	if err != nil {
		return Pointer{}, false, err
	}
	var p Pointer
	changed := false
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		cur, err := Active(ctx, tx, agent, env)
		if errors.Is(err, store.ErrNotFound) || (err == nil && cur.Candidate != candidate) {
			p = cur
			return nil
		}
		if err != nil {
			return err
		}
		p, err = addRow(ctx, tx, by, Pointer{Agent: agent, Env: env, Digest: cur.Digest, Kind: KindCanaryRolledBack, Reason: reason})
		if err != nil {
			return err
		}
		changed = true
		details := map[string]any{"agent": agent, "env": env, "active": cur.Digest, "share": cur.Share, "reason": reason}
		if v != nil {
			details["trials"], details["successes"], details["critical_failures"] = v.Trials, v.Successes, v.CriticalFailures
			details["lower_bound"], details["reasons"] = v.LowerBound, v.Reasons
		}
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: by.Actor, Verb: "release.canary_rolled_back", Subject: audit.Subject{Type: "release", ID: candidate}, Details: details,
		})
		return err
	})
	return p, changed, err
}

// Promote makes the running canary's candidate the active release. The
// gate is evaluated again inside the transaction, so a critical failure
// recorded since the page was drawn still holds it (ErrCanaryHeld). One
// pointer row with its audit event "release.promoted"; promoting again
// adds nothing (changed is false).
func Promote(ctx context.Context, db *store.DB, by Author, agent, env, candidate, reason string) (Pointer, bool, error) {
	reason, err := checkMove(agent, env, reason, false)
	if err != nil {
		return Pointer{}, false, err
	}
	var p Pointer
	changed := false
	err = db.Transact(ctx, func(tx *store.Tx) error {
		changed = false // a retried run starts afresh (store.Transact)
		cur, err := Active(ctx, tx, agent, env)
		switch {
		case err == nil && cur.Kind == KindPromoted && cur.Digest == candidate:
			p = cur
			return nil
		case errors.Is(err, store.ErrNotFound) || (err == nil && cur.Candidate != candidate):
			return ErrNoCanary
		case err != nil:
			return err
		}
		v, err := evaluate(ctx, tx, cur)
		if err != nil {
			return err
		}
		if !v.Promote {
			held := *ErrCanaryHeld
			held.Message = "The canary gate holds: " + strings.Join(v.Reasons, "; ") + "."
			return &held
		}
		p, err = addRow(ctx, tx, by, Pointer{Agent: agent, Env: env, Digest: candidate, Kind: KindPromoted, Reason: reason})
		if err != nil {
			return err
		}
		changed = true
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor: by.Actor, Verb: "release.promoted", Subject: audit.Subject{Type: "release", ID: candidate},
			Details: map[string]any{"agent": agent, "env": env, "previous": cur.Digest, "trials": v.Trials,
				"successes": v.Successes, "lower_bound": v.LowerBound, "floor": cur.Floor, "reason": reason},
		})
		return err
	})
	return p, changed, err
}

func addRow(ctx context.Context, tx *store.Tx, by Author, p Pointer) (Pointer, error) {
	now := time.Now()
	floor := p.Floor
	if floor == 0 {
		floor = DefaultFloor
	}
	gate := 0
	if p.LabelGate {
		gate = 1
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO release_pointers (agent, env, digest, kind, author, author_name, reason, created_at, candidate, share, floor, label_gate)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, p.Agent, p.Env, p.Digest, p.Kind, by.key(), by.Name, p.Reason,
		store.FormatTime(now), p.Candidate, p.Share, floor, gate)
	if err != nil {
		return Pointer{}, fmt.Errorf("move release pointer: %w", err)
	}
	p.ID, _ = res.LastInsertId()
	p.Author, p.CreatedAt, p.Floor = by.Name, now.UTC(), floor
	return p, nil
}

// Verdict is the canary gate's answer for a running canary.
type Verdict struct {
	Pointer Pointer // the row that started the canary: candidate, share, floor, since
	CanaryResult
	Gate
	// Labels is the replay the label gate read (nil when the canary has
	// no label gate, or no replay against labels exists yet).
	Labels  *Replay
	Reasons []string // why it holds or promotes, in words
}

// Decision is "promote" or "hold".
func (v Verdict) Decision() string {
	if v.Promote {
		return "promote"
	}
	return "hold"
}

// policyRefusals are the error codes of journeys that policy refused: the
// agent tried something it may not do, a critical failure of a canary.
var policyRefusals = []any{policy.CodeUnknownTool, policy.CodeNotInScope, policy.CodeDisabled,
	policy.CodeInvalidArguments, "skill_not_in_scope"}

// EvaluateCanary applies CanaryGate to the journeys admitted under the
// running canary's candidate since it started: trials are those that
// ended, successes those that completed, and a critical failure is a
// journey with a policy violation (audited, or failed with a policy
// refusal code) or an action that failed. ErrNoCanary when none runs.
func EvaluateCanary(ctx context.Context, q store.Querier, agent, env string) (Verdict, error) {
	cur, err := Active(ctx, q, agent, env)
	if errors.Is(err, store.ErrNotFound) || (err == nil && cur.Candidate == "") {
		return Verdict{}, ErrNoCanary
	}
	if err != nil {
		return Verdict{}, err
	}
	return evaluate(ctx, q, cur)
}

func evaluate(ctx context.Context, q store.Querier, p Pointer) (Verdict, error) {
	v := Verdict{Pointer: p}
	since := store.FormatTime(p.CreatedAt)
	var succ sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT COUNT(*), SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) FROM journeys
		WHERE release_digest = ? AND created_at >= ? AND status NOT IN ('running', 'awaiting_approval')`,
		p.Candidate, since).Scan(&v.Trials, &succ)
	if err != nil {
		return Verdict{}, fmt.Errorf("canary trials of %s: %w", p.Candidate, err)
	}
	v.Successes = int(succ.Int64)
	args := append([]any{p.Candidate, since}, policyRefusals...)
	err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM journeys j
		WHERE j.release_digest = ? AND j.created_at >= ? AND (
			j.error_code IN (?`+strings.Repeat(", ?", len(policyRefusals)-1)+`)
			OR EXISTS (SELECT 1 FROM audit_events a WHERE a.subject_type = 'journey' AND a.subject_id = j.id AND a.verb = 'policy.violation')
			OR EXISTS (SELECT 1 FROM actions x WHERE x.journey_id = j.id AND x.status = 'failed'))`, args...).Scan(&v.CriticalFailures)
	if err != nil {
		return Verdict{}, fmt.Errorf("canary failures of %s: %w", p.Candidate, err)
	}
	v.Gate = CanaryGate(v.CanaryResult, p.Floor)
	v.Reasons = reasons(v)
	if p.LabelGate {
		if err := labelGate(ctx, q, &v); err != nil {
			return Verdict{}, err
		}
	}
	return v, nil
}

// labelGate holds v unless the newest replay of the candidate made
// against the active release, with labelled journeys, shows the candidate
// routing them right at least as often as the active release.
func labelGate(ctx context.Context, q store.Querier, v *Verdict) error {
	p := v.Pointer
	r, err := store.Get(ctx, q, scanReplay, selectReplay+` WHERE candidate = ? AND agent = ? AND env = ? AND active_digest = ? AND labelled > 0
		ORDER BY created_at DESC, id DESC LIMIT 1`, p.Candidate, p.Agent, p.Env, p.Digest)
	switch {
	case errors.Is(err, store.ErrNotFound):
		v.Promote = false
		v.Reasons = append(v.Reasons, "no replay of the candidate against labelled journeys yet: replay it to compare its route accuracy with the active release's")
		return nil
	case err != nil:
		return fmt.Errorf("label gate of %s: %w", p.Candidate, err)
	}
	v.Labels = &r
	if r.LabelledRight < r.ActiveRight {
		v.Promote = false
		v.Reasons = append(v.Reasons, fmt.Sprintf("the candidate routes %d of %d labelled journeys right, worse than the active release's %d",
			r.LabelledRight, r.Labelled, r.ActiveRight))
		return nil
	}
	v.Reasons = append(v.Reasons, fmt.Sprintf("the candidate routes %d of %d labelled journeys right, no worse than the active release's %d",
		r.LabelledRight, r.Labelled, r.ActiveRight))
	return nil
}

func reasons(v Verdict) []string {
	var out []string
	if v.CriticalFailures > 0 {
		out = append(out, fmt.Sprintf("%d critical failure(s): policy violations or failed effects", v.CriticalFailures))
	}
	switch {
	case v.Trials == 0:
		out = append(out, "no journey has ended under the candidate yet")
	case v.LowerBound >= v.Pointer.Floor:
		out = append(out, fmt.Sprintf("lower bound %.3f of %d/%d reaches the floor %.2f", v.LowerBound, v.Successes, v.Trials, v.Pointer.Floor))
	default:
		out = append(out, fmt.Sprintf("lower bound %.3f of %d/%d is below the floor %.2f", v.LowerBound, v.Successes, v.Trials, v.Pointer.Floor))
	}
	return out
}

// GateActor is who the automatic rollback is recorded as.
var GateActor = Author{Actor: audit.Actor{Type: audit.ActorSystem, ID: "canary-gate"}, Name: "Canary gate"}

// CheckCanary evaluates the canary of agent in env, if one runs, and rolls
// it back at once when a journey failed critically: one policy breach or
// wrong effect is enough, however many trials succeeded. The rollback is
// audited as the gate's, with its reasons. A hold for too few trials
// keeps the canary running; promotion stays a person's decision.
func CheckCanary(ctx context.Context, db *store.DB, agent, env string) (v Verdict, rolledBack bool, err error) {
	v, err = EvaluateCanary(ctx, db.Read(), agent, env)
	if err != nil {
		return v, false, err
	}
	if v.CriticalFailures == 0 {
		return v, false, nil
	}
	_, rolledBack, err = stopCanary(ctx, db, GateActor, agent, env, v.Pointer.Candidate,
		"automatic: "+strings.Join(v.Reasons, "; "), &v)
	return v, rolledBack, err
}

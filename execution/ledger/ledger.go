// Package ledger is Warden's effect ledger: one durable record per side
// effect, so that an approved action happens exactly once even when Warden
// crashes halfway.
//
// A record is keyed by the action's stable idempotency key and bound to its
// payload digest, tool and tenant. Its states:
//
//	INTENDED ──► RESERVED ──► EXECUTED ──► RECORDED
//	              │   ▲
//	              │   └── another attempt (a transient failure, a crash)
//	              └──► FAILED
//
// What each state tells recovery:
//
//   - INTENDED: written by Intend inside the approval's transaction, so the
//     decision and the effect it allows exist together or not at all.
//   - RESERVED: written by Execute before every provider call. From here on
//     the effect may have happened; "not recorded" does not mean "not done",
//     and the only way to find out is to ask the provider by the same key.
//   - EXECUTED: the provider answered with a receipt that is known only in
//     this process. The receipt and RECORDED are written by one statement,
//     so a row never rests in EXECUTED: a row left RESERVED after a crash is
//     what EXECUTED looks like on disk when the provider had committed, and
//     Execute returns an Entry in EXECUTED (with an error) when the provider
//     committed but the local write failed.
//   - RECORDED: the receipt is durable. Every later Execute returns it
//     without calling the provider.
//   - FAILED: the provider refused the call (tools.Terminal). Every later
//     Execute returns the stored failure without calling the provider.
//
// The receipt and every reason are stored redacted; the receipt keeps the
// provider's reference ids, which a reversal needs (see SetRedactor and
// redact.go).
//
// Reconcile is the recovery half: it finds records left RESERVED and
// re-asks the provider by the same key; see its documentation.
//
// Within one process, Execute and Reconcile run one key at a time: a
// second Execute of a key waits for the first and then returns its
// recorded result instead of calling the provider again. Across processes
// the provider's idempotency on the key (tools.Provider's contract) is what
// keeps a duplicate call harmless.
package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// State is where a record is in the state machine (see the package
// documentation).
type State string

const (
	Intended State = "intended"
	Reserved State = "reserved"
	Executed State = "executed"
	Recorded State = "recorded"
	Failed   State = "failed"
)

// moves is the state machine: the states a record may move to from each
// state. Every write checks its move against it. RECORDED and FAILED are
// final.
var moves = map[State][]State{
	Intended: {Reserved},
	Reserved: {Reserved, Executed, Failed},
	Executed: {Recorded},
}

// canMove reports whether the state machine allows from → to.
func canMove(from, to State) bool {
	for _, s := range moves[from] {
		if s == to {
			return true
		}
	}
	return false
}

// canRecord reports whether a receipt may take a record in state s through
// EXECUTED to RECORDED.
func canRecord(s State) bool {
	return (s == Executed || canMove(s, Executed)) && canMove(Executed, Recorded)
}

// Entry is one effect's record.
type Entry struct {
	Key      string // the stable idempotency key the provider sees
	Digest   string // hex SHA-256 of the payload, computed by the caller
	Tool     string
	Tenant   string
	ActionID string // the approved action, for the Resolver
	State    State
	// Receipt is the provider's receipt once RECORDED, redacted but for
	// its top-level reference ids.
	Receipt json.RawMessage
	// Error says why the record FAILED (the provider's Reason), or, while
	// it is RESERVED, the last transient failure (kind and Reason) or why
	// Reconcile wants a review (including the Resolver's error). A
	// provider's wrapped cause is never kept. It is redacted and cut to
	// maxReason characters.
	Error    string
	Attempts int // provider calls Execute has started
	// NeedsReview says Reconcile could not learn the outcome and a human
	// should look. It does not stop Execute, which asks by the same key;
	// it is cleared when the record is settled.
	NeedsReview bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

var (
	// ErrDigestMismatch means the key is already bound to another payload
	// (or tool, tenant or action): the call is refused and nothing changes.
	ErrDigestMismatch = errors.New("idempotency key bound to another payload")
	// ErrNotIntended means Execute was asked for a key that Intend never
	// recorded. It wraps store.ErrNotFound.
	ErrNotIntended = fmt.Errorf("effect was never intended: %w", store.ErrNotFound)
	// ErrOutcomeUnknown means an AtMostOnce tool's earlier attempt may
	// have reached the provider and its outcome was lost: the record stays
	// RESERVED, flagged for review, and the provider is not called again.
	ErrOutcomeUnknown = errors.New("the outcome of an earlier attempt is unknown and the provider takes no idempotency key: needs review")
	// ErrFailed marks the error of an effect that FAILED. The error is also
	// a Terminal *tools.Error, so tools.IsTransient says not to retry it.
	ErrFailed = errors.New("effect failed")
)

const (
	maxKeyLen = 255
	maxReason = 200 // characters of a stored reason

	// writeTimeout bounds the local write that follows a provider call.
	// That write does not inherit the caller's cancellation: once the
	// provider may have committed, recording what it said is worth more
	// than returning a moment sooner.
	writeTimeout = 10 * time.Second
)

var digestRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Intend records e as INTENDED inside tx, the transaction that approves
// the action. Key, Digest (lower-case hex SHA-256) and Tool are required;
// State, Receipt, Error, Attempts, NeedsReview and the times are ignored.
// Intending the same key with the same digest, tool, tenant and action
// again changes nothing, whatever state the record has reached; anything
// else under that key is refused with ErrDigestMismatch.
func Intend(ctx context.Context, tx *store.Tx, e Entry) error {
	if err := validate(e); err != nil {
		return fmt.Errorf("intend effect: %w", err)
	}
	now := store.Now()
	res, err := tx.ExecContext(ctx, `INSERT INTO effects
		(idempotency_key, payload_digest, tool, tenant, action_id, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
		e.Key, e.Digest, e.Tool, e.Tenant, e.ActionID, Intended, now, now)
	if err != nil {
		return fmt.Errorf("intend effect %s: %w", e.Key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("intend effect %s: %w", e.Key, err)
	}
	if n == 1 {
		return nil
	}
	stored, err := Get(ctx, tx, e.Key)
	if err != nil {
		return fmt.Errorf("intend effect %s: %w", e.Key, err)
	}
	if err := bound(stored, e.Digest, e.Tool, e.Tenant); err != nil {
		return fmt.Errorf("intend effect %s: %w", e.Key, err)
	}
	if stored.ActionID != e.ActionID {
		return fmt.Errorf("intend effect %s: %w: it belongs to another action", e.Key, ErrDigestMismatch)
	}
	return nil
}

func validate(e Entry) error {
	switch {
	case e.Key == "":
		return errors.New("no idempotency key")
	case len(e.Key) > maxKeyLen:
		return fmt.Errorf("idempotency key longer than %d bytes", maxKeyLen)
	case !digestRe.MatchString(e.Digest):
		return fmt.Errorf("payload digest %q is not a lower-case hex SHA-256", e.Digest)
	case e.Tool == "":
		return errors.New("no tool")
	}
	return nil
}

// bound checks that a call matches what the record's key is bound to.
func bound(e Entry, digest, tool, tenant string) error {
	switch {
	case e.Digest != digest:
		return fmt.Errorf("%w: the payload digest differs", ErrDigestMismatch)
	case e.Tool != tool:
		return fmt.Errorf("%w: it is bound to tool %s, not %s", ErrDigestMismatch, e.Tool, tool)
	case e.Tenant != tenant:
		return fmt.Errorf("%w: it belongs to another tenant", ErrDigestMismatch)
	}
	return nil
}

const selectEntry = `SELECT idempotency_key, payload_digest, tool, tenant, action_id, state, receipt, error,
	attempts, needs_review, created_at, updated_at FROM effects`

// Get returns the record of key, or an error wrapping store.ErrNotFound.
func Get(ctx context.Context, q store.Querier, key string) (Entry, error) {
	e, err := scan(q.QueryRowContext(ctx, selectEntry+` WHERE idempotency_key = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("effect %s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("effect %s: %w", key, err)
	}
	return e, nil
}

func scan(row interface{ Scan(...any) error }) (Entry, error) {
	var (
		e                Entry
		receipt, c, u    string
		state            string
		review, attempts int
	)
	if err := row.Scan(&e.Key, &e.Digest, &e.Tool, &e.Tenant, &e.ActionID, &state, &receipt, &e.Error,
		&attempts, &review, &c, &u); err != nil {
		return Entry{}, err
	}
	e.State, e.Attempts, e.NeedsReview = State(state), attempts, review != 0
	if receipt != "" {
		e.Receipt = json.RawMessage(receipt)
	}
	var err error
	if e.CreatedAt, err = time.Parse(time.RFC3339Nano, c); err != nil {
		return Entry{}, fmt.Errorf("created_at: %w", err)
	}
	if e.UpdatedAt, err = time.Parse(time.RFC3339Nano, u); err != nil {
		return Entry{}, fmt.Errorf("updated_at: %w", err)
	}
	return e, nil
}

// Execute performs the effect of call exactly once. call.IdempotencyKey
// names a record Intend wrote (else ErrNotIntended), and digest, the
// call's tool and its tenant must be the ones it is bound to (else
// ErrDigestMismatch); a refused call changes nothing.
//
//  1. In its own write transaction, Execute moves the record to RESERVED
//     and counts the attempt — or returns the stored receipt if it is
//     RECORDED, or the stored failure (ErrFailed) if it FAILED, without
//     calling the provider.
//  2. It calls p with call unchanged: the provider sees the record's key.
//  3. A receipt is written with RECORDED in one transaction, and the
//     RECORDED entry returned, with the receipt as stored (redacted). A
//     Terminal refusal is written as FAILED and returned as an error
//     wrapping ErrFailed and the provider's error.
//     Any other error — Transient, or unclassified, since an unclassified
//     failure does not prove that nothing happened — leaves the record
//     RESERVED and is returned as is: retry later with the same call, or
//     let Reconcile ask the provider.
//
// If the provider answered but the receipt could not be written, the
// returned Entry is EXECUTED, with the receipt, and the error says so; the
// record stays RESERVED and a later Execute or Reconcile records it.
//
// p should bound and retry its calls itself (tools.WithRetry). Execute
// holds no transaction while p runs.
func Execute(ctx context.Context, db *store.DB, p tools.Provider, t tools.Tool, call tools.Call, digest string) (Entry, error) {
	if call.IdempotencyKey == "" {
		return Entry{}, errors.New("execute effect: the call has no idempotency key")
	}
	unlock, err := lockEffect(ctx, db, call.IdempotencyKey)
	if err != nil {
		return Entry{}, fmt.Errorf("execute effect %s: %w", call.IdempotencyKey, err)
	}
	defer unlock()
	return execute(ctx, db, p, t, call, digest)
}

// execute is Execute for a caller that holds the key's lock.
func execute(ctx context.Context, db *store.DB, p tools.Provider, t tools.Tool, call tools.Call, digest string) (Entry, error) {
	key := call.IdempotencyKey
	name, err := tools.CallName(t, call)
	if err != nil {
		return Entry{}, fmt.Errorf("execute effect %s: %w", key, err)
	}
	e, err := reserve(ctx, db, key, digest, name, call.Tenant)
	if err != nil {
		return Entry{}, fmt.Errorf("execute effect %s: %w", key, err)
	}
	switch e.State {
	case Recorded:
		return e, nil
	case Failed:
		return e, failure(e)
	}
	if t.AtMostOnce && e.Attempts > 1 {
		// An earlier attempt was sent and its outcome lost (a crash): the
		// provider cannot be asked by key and must not get the call twice.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		why := "an earlier attempt may have reached " + t.Name + ", which takes no idempotency key: check with its owner whether it happened; it is never sent again"
		if _, err := setNote(wctx, db, key, "review: "+why, true); err != nil {
			return e, fmt.Errorf("execute effect %s: %w", key, err)
		}
		return e, fmt.Errorf("execute effect %s: %w", key, ErrOutcomeUnknown)
	}

	res, perr := p.Execute(ctx, t, call)

	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if perr == nil {
		e.State, e.Receipt = Executed, redactReceipt(redactorFor(db), res.Output)
		rec, err := record(wctx, db, key, res.Output)
		for tries := 1; err != nil && t.AtMostOnce && tries < 3 && wctx.Err() == nil; tries++ {
			// An AtMostOnce call that answered must not read as lost: a
			// rerun could only flag it for review.
			time.Sleep(time.Duration(tries) * 200 * time.Millisecond)
			rec, err = record(wctx, db, key, res.Output)
		}
		if err != nil && t.AtMostOnce {
			_ = note(wctx, db, key, "the provider answered, but its receipt could not be written: "+err.Error())
		}
		if err != nil {
			return e, fmt.Errorf("execute effect %s: the provider committed but the receipt was not recorded (the record stays reserved): %w", key, err)
		}
		return rec, nil
	}
	var pe *tools.Error
	if t.AtMostOnce && !(errors.As(perr, &pe) && pe.Kind == tools.Terminal) {
		// No retry may follow: whatever the failure, it is final.
		pe = &tools.Error{Kind: tools.Terminal, Reason: reason(perr)}
		perr = pe
	}
	if errors.As(perr, &pe) && pe.Kind == tools.Terminal {
		f, err := fail(wctx, db, key, pe.Reason)
		if err != nil {
			return e, fmt.Errorf("execute effect %s: record the provider's refusal: %w (refusal: %w)", key, err, perr)
		}
		return f, fmt.Errorf("execute effect %s: %w: %w", key, ErrFailed, perr)
	}
	// The record stays RESERVED whether or not the note is written: the
	// note is for people, the state is what recovery reads.
	e.Error = redactReason(redactorFor(db), reason(perr))
	_ = note(wctx, db, key, e.Error)
	return e, fmt.Errorf("execute effect %s: %w", key, perr)
}

// failure is the error Execute returns for a FAILED record.
func failure(e Entry) error {
	return fmt.Errorf("effect %s: %w: %w", e.Key, ErrFailed, &tools.Error{Kind: tools.Terminal, Reason: e.Error})
}

// reserve moves the record of key to RESERVED and counts the attempt, or
// returns it untouched when it is RECORDED or FAILED.
func reserve(ctx context.Context, db *store.DB, key, digest, tool, tenant string) (Entry, error) {
	var e Entry
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		e, err = Get(ctx, tx, key)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotIntended
		}
		if err != nil {
			return err
		}
		if err := bound(e, digest, tool, tenant); err != nil {
			return err
		}
		if e.State == Recorded || e.State == Failed {
			return nil
		}
		if !canMove(e.State, Reserved) {
			return fmt.Errorf("a record in state %s cannot be reserved", e.State)
		}
		now := time.Now()
		if _, err := tx.ExecContext(ctx,
			`UPDATE effects SET state = ?, attempts = attempts + 1, updated_at = ? WHERE idempotency_key = ?`,
			Reserved, store.FormatTime(now), key); err != nil {
			return err
		}
		e.State, e.Attempts, e.UpdatedAt = Reserved, e.Attempts+1, now.UTC()
		return nil
	})
	return e, err
}

// record writes the provider's receipt, redacted: RESERVED → EXECUTED →
// RECORDED in one statement. A record already RECORDED keeps its first
// receipt.
func record(ctx context.Context, db *store.DB, key string, receipt json.RawMessage) (Entry, error) {
	return recordAudited(ctx, db, key, receipt, "")
}

// recordAudited is record, and when how is set (what reconciliation
// found), an "effect.reconciled" event in the same transaction.
func recordAudited(ctx context.Context, db *store.DB, key string, receipt json.RawMessage, how string) (Entry, error) {
	receipt = redactReceipt(redactorFor(db), receipt)
	return update(ctx, db, key, func(tx *store.Tx, e Entry) (Entry, error) {
		if e.State == Recorded {
			return e, nil
		}
		if !canRecord(e.State) {
			return e, fmt.Errorf("a record in state %s cannot take a receipt", e.State)
		}
		now := time.Now()
		_, err := tx.ExecContext(ctx, `UPDATE effects SET state = ?, receipt = ?, error = '', needs_review = 0, updated_at = ?
			WHERE idempotency_key = ?`, Recorded, string(receipt), store.FormatTime(now), key)
		e.State, e.Receipt, e.Error, e.NeedsReview, e.UpdatedAt = Recorded, receipt, "", false, now.UTC()
		if err == nil && how != "" {
			err = auditReconciled(ctx, tx, e, how)
		}
		return e, err
	})
}

// auditReconciled records what reconciliation did with an effect.
func auditReconciled(ctx context.Context, tx *store.Tx, e Entry, how string) error {
	_, err := audit.Append(ctx, tx, audit.Event{
		Actor: audit.Actor{Type: audit.ActorSystem, ID: "reconciler"}, Tenant: e.Tenant, Verb: "effect.reconciled",
		Subject: audit.Subject{Type: "action", ID: e.ActionID},
		Details: map[string]any{"idempotency_key": e.Key, "tool": e.Tool, "outcome": how, "state": string(e.State), "note": e.Error},
	})
	return err
}

// fail writes a provider's refusal, redacted: RESERVED → FAILED. The
// outcome is known, so the record no longer needs review.
func fail(ctx context.Context, db *store.DB, key, why string) (Entry, error) {
	why = redactReason(redactorFor(db), why)
	return update(ctx, db, key, func(tx *store.Tx, e Entry) (Entry, error) {
		if e.State == Recorded || e.State == Failed {
			return e, nil
		}
		if !canMove(e.State, Failed) {
			return e, fmt.Errorf("a record in state %s cannot fail", e.State)
		}
		now := time.Now()
		_, err := tx.ExecContext(ctx, `UPDATE effects SET state = ?, error = ?, needs_review = 0, updated_at = ?
			WHERE idempotency_key = ?`, Failed, why, store.FormatTime(now), key)
		e.State, e.Error, e.NeedsReview, e.UpdatedAt = Failed, why, false, now.UTC()
		return e, err
	})
}

// NeedsReview flags a RESERVED record for a person, with why: its outcome
// cannot be learnt and its call must not be sent again (an AtMostOnce
// tool's record found reserved when the call can no longer run). A
// record already settled is left as it is.
func NeedsReview(ctx context.Context, db *store.DB, key, why string) error {
	_, err := setNote(ctx, db, key, "review: "+why, true)
	return err
}

// note keeps why a RESERVED record is still reserved, redacted. review
// also flags it for a human.
func note(ctx context.Context, db *store.DB, key, why string) error {
	_, err := setNote(ctx, db, key, why, false)
	return err
}

func setNote(ctx context.Context, db *store.DB, key, why string, review bool) (Entry, error) {
	why = redactReason(redactorFor(db), why)
	return update(ctx, db, key, func(tx *store.Tx, e Entry) (Entry, error) {
		if e.State != Reserved && e.State != Executed {
			return e, nil
		}
		flag := 0
		if review {
			flag = 1
		}
		now := time.Now()
		_, err := tx.ExecContext(ctx, `UPDATE effects SET error = ?, needs_review = CASE WHEN needs_review > ? THEN needs_review ELSE ? END, updated_at = ?
			WHERE idempotency_key = ?`, why, flag, flag, store.FormatTime(now), key)
		// A record flagged for review the first time is an event of the
		// trail; a note on one already flagged is not.
		if err == nil && review && !e.NeedsReview {
			e.Error = why
			err = auditReconciled(ctx, tx, e, "needs_review")
		}
		e.Error, e.NeedsReview, e.UpdatedAt = why, e.NeedsReview || review, now.UTC()
		return e, err
	})
}

// update runs fn on the current record of key in one write transaction.
func update(ctx context.Context, db *store.DB, key string, fn func(tx *store.Tx, e Entry) (Entry, error)) (Entry, error) {
	var out Entry
	err := db.Transact(ctx, func(tx *store.Tx) error {
		e, err := Get(ctx, tx, key)
		if err != nil {
			return err
		}
		out, err = fn(tx, e)
		return err
	})
	return out, err
}

// reason is what is kept of a provider's error: its kind and classified
// reason. The wrapped cause (a database or network error) may say
// anything and is not kept. Writing it redacts and shortens it.
func reason(err error) string {
	var pe *tools.Error
	if errors.As(err, &pe) {
		return string(pe.Kind) + ": " + pe.Reason
	}
	return "unclassified provider error"
}

func short(s string) string {
	s = strings.ToValidUTF8(s, "")
	if utf8.RuneCountInString(s) <= maxReason {
		return s
	}
	r := []rune(s)
	return string(r[:maxReason-1]) + "…"
}

// Package audit is Warden's tamper-evident audit log: an append-only chain
// of events in the audit_events table, each carrying the SHA-256 hash of its
// own fields and of the event before it (docs/audit-format.md).
//
// An event is written by Append inside the same transaction as the change it
// records, so the change and its evidence commit or roll back together.
// Verify walks the stored chain; VerifyEvents checks an in-memory one, such
// as an export. A chain alone cannot show that events were cut from its
// end, or that its tail was rewritten and rehashed: Checkpoint signs the
// head with the installation's key now and then (warden serve does it
// periodically, exports at every export), and Verify holds the chain to
// every signed checkpoint and to any head an auditor trusts.
package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// Actor types in use. The set is open; these are the ones Warden writes.
const (
	ActorPrincipal = "principal" // a console user (OIDC issuer + subject)
	ActorKey       = "key"       // an agent calling with a virtual key
	ActorSystem    = "system"    // Warden itself: jobs, start-up, expiry
	ActorAnonymous = "anonymous" // an unauthenticated caller, e.g. a failed login
)

// Limits on what Append accepts. Audit events are evidence, not payload
// storage: a large document belongs elsewhere, referenced by its digest.
const (
	MaxFieldBytes   = 512      // actor id, tenant, subject id
	MaxDetailsBytes = 64 << 10 // the canonical details JSON
)

// Actor is who caused the event.
type Actor struct {
	Type string // e.g. ActorPrincipal; required
	ID   string // the principal, key or job id; may be empty for anonymous
	// Name and Email name a console user (ActorPrincipal) as the
	// identity provider named them when the event was written. Append
	// records them in the event's details under "actor" (ActorDetailsKey),
	// inside the hashed content, so an export names who acted without a
	// lookup in tables that change later. When both are empty Append
	// reads them from the principals table in the event's transaction.
	// They are employees' names, not customers' data, and are not
	// redacted. Events written before Warden recorded them have neither.
	Name  string
	Email string
}

// ActorDetailsKey is the details key under which Append records a
// principal's name and e-mail: {"actor": {"email": "…", "name": "…"}},
// an empty one left out. Callers may not use the key themselves.
const ActorDetailsKey = "actor"

// Subject is what the event is about, e.g. {"tenant", "01J…"}. Both fields
// may be empty for events without one.
type Subject struct {
	Type string
	ID   string
}

// Event is one entry of the audit chain.
type Event struct {
	// Seq is the position in the chain, 1 for the first event. Append
	// assigns it.
	Seq int64
	// Time is when the event happened, stored in UTC with nanosecond
	// precision. Append uses the current time when it is zero, and the
	// previous event's time when Time is earlier than that: times never
	// decrease along seq.
	Time    time.Time
	Actor   Actor
	Tenant  string // the tenant affected; empty for events of no tenant
	Verb    string // what happened, dotted lower case: "auth.login", "tenant.create"
	Subject Subject
	// Details is further context as a JSON object. It is written to the
	// audit trail as given, so the caller must pass values that are
	// already redacted: no secrets, no raw PII, only keyed tokens for
	// them (docs/redaction.md). The chain makes a mistake here permanent:
	// an event cannot be edited later.
	//
	// It is stored and hashed as canonical JSON (docs/audit-format.md);
	// events returned by this package carry it decoded from that text,
	// with numbers as json.Number so that none loses precision.
	Details map[string]any
	// PrevHash is the Hash of the event before, or GenesisHash for the
	// first. Append assigns it.
	PrevHash string
	// Hash is the lowercase hex SHA-256 of the event's canonical encoding.
	// Append assigns it.
	Hash string
}

// Head names the newest event of a chain: what a checkpoint records and what
// a verifier that must detect a cut-off tail compares with. The head of the
// empty chain is {0, GenesisHash}.
type Head struct {
	Seq  int64
	Hash string
}

var (
	tokenRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	verbRe  = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
)

const maxVerbBytes = 128

// Append writes ev as the next event of the chain inside tx and returns it
// as stored, with Seq, Time, PrevHash and Hash filled in and Details in
// canonical form. Seq, PrevHash and Hash given by the caller are ignored.
//
// tx must be a write transaction from store.DB.Transact: Append reads the
// newest event and inserts after it, and two transactions doing that
// concurrently would fork the chain. On SQLite, BEGIN IMMEDIATE already
// admits one writer; on PostgreSQL, store.Serialize takes the chain's
// advisory lock until tx ends, so appends from every replica queue and
// seq stays gap-free. (If one got through anyway, the seq primary key
// would refuse the second insert.)
func Append(ctx context.Context, tx *store.Tx, ev Event) (Event, error) {
	if err := validate(ev); err != nil {
		return Event{}, fmt.Errorf("append audit event %q: %w", ev.Verb, err)
	}
	ev, err := withActorIdentity(ctx, tx, ev)
	if err != nil {
		return Event{}, fmt.Errorf("append audit event %q: %w", ev.Verb, err)
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if err := store.Serialize(ctx, tx, "audit_chain"); err != nil {
		return Event{}, fmt.Errorf("append audit event %q: %w", ev.Verb, err)
	}
	head := Head{Seq: 0, Hash: GenesisHash}
	var headTime string
	err = tx.QueryRowContext(ctx,
		`SELECT seq, hash, time FROM audit_events ORDER BY seq DESC LIMIT 1`).Scan(&head.Seq, &head.Hash, &headTime)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Event{}, fmt.Errorf("append audit event %q: read chain head: %w", ev.Verb, err)
	}
	ev.Seq = head.Seq + 1
	ev.PrevHash = head.Hash
	r, err := encode(ev)
	if err != nil {
		return Event{}, fmt.Errorf("append audit event %q: %w", ev.Verb, err)
	}
	if r.time < headTime {
		// The clock stepped back, or the caller gave an earlier time:
		// times never decrease along seq, so that a period of the trail
		// is one run of seqs.
		r.time = headTime
	}
	if len(r.details) > MaxDetailsBytes {
		return Event{}, fmt.Errorf("append audit event %q: details are %d bytes, limit %d",
			ev.Verb, len(r.details), MaxDetailsBytes)
	}
	r.hash = r.computeHash()
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_events
		(seq, time, actor_type, actor_id, tenant, verb, subject_type, subject_id, details, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.seq, r.time, r.actorType, r.actorID, r.tenant, r.verb,
		r.subjectType, r.subjectID, r.details, r.prevHash, r.hash)
	if err != nil {
		return Event{}, fmt.Errorf("append audit event %q: insert seq %d: %w", ev.Verb, r.seq, err)
	}
	out, err := r.event()
	if err != nil {
		return Event{}, fmt.Errorf("append audit event %q: %w", ev.Verb, err)
	}
	return out, nil
}

// withActorIdentity records a principal actor's name and e-mail in ev's
// details (a copy: the caller's map is not changed), reading them from
// the principals table when the caller gave neither. Other actors get no
// identity: a key's name and Warden's jobs are not people.
func withActorIdentity(ctx context.Context, tx *store.Tx, ev Event) (Event, error) {
	if _, taken := ev.Details[ActorDetailsKey]; taken {
		return ev, fmt.Errorf("details key %q is reserved for the actor's name and e-mail", ActorDetailsKey)
	}
	if ev.Actor.Type != ActorPrincipal {
		ev.Actor.Name, ev.Actor.Email = "", ""
		return ev, nil
	}
	if ev.Actor.Name == "" && ev.Actor.Email == "" && ev.Actor.ID != "" {
		name, email, err := principals.Identity(ctx, tx, ev.Actor.ID)
		if err != nil {
			return ev, err
		}
		ev.Actor.Name, ev.Actor.Email = name, email
	}
	ev.Actor.Name, ev.Actor.Email = printable(ev.Actor.Name), printable(ev.Actor.Email)
	who := map[string]any{}
	if ev.Actor.Name != "" {
		who["name"] = ev.Actor.Name
	}
	if ev.Actor.Email != "" {
		who["email"] = ev.Actor.Email
	}
	if len(who) == 0 {
		return ev, nil
	}
	details := make(map[string]any, len(ev.Details)+1)
	maps.Copy(details, ev.Details)
	details[ActorDetailsKey] = who
	ev.Details = details
	return ev, nil
}

// printable is a name as an identity provider sent it, made safe to
// print like the other fields (checkText): control characters become
// spaces, and it is cut to MaxFieldBytes at a character boundary. A
// strange name must not stop a person's action from being recorded.
func printable(s string) string {
	s = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, strings.ToValidUTF8(s, "\uFFFD"))
	for len(s) > MaxFieldBytes {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return strings.TrimSpace(s)
}

// validate checks the fields a caller supplies. The rules keep the trail
// readable and safe to print: identifiers are short, valid UTF-8 and free of
// control characters, so an exported line cannot fake another.
func validate(ev Event) error {
	if !tokenRe.MatchString(ev.Actor.Type) {
		return fmt.Errorf("actor type %q: want lower-case letters, digits and _", ev.Actor.Type)
	}
	if len(ev.Verb) > maxVerbBytes || !verbRe.MatchString(ev.Verb) {
		return fmt.Errorf("verb %q: want dotted lower-case words such as auth.login", ev.Verb)
	}
	if ev.Subject.Type != "" && !tokenRe.MatchString(ev.Subject.Type) {
		return fmt.Errorf("subject type %q: want lower-case letters, digits and _", ev.Subject.Type)
	}
	if ev.Subject.Type == "" && ev.Subject.ID != "" {
		return fmt.Errorf("subject id %q has no subject type", ev.Subject.ID)
	}
	for _, f := range []struct{ name, value string }{
		{"actor id", ev.Actor.ID},
		{"tenant", ev.Tenant},
		{"subject id", ev.Subject.ID},
	} {
		if err := checkText(f.value); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

func checkText(s string) error {
	if len(s) > MaxFieldBytes {
		return fmt.Errorf("%d bytes, limit %d", len(s), MaxFieldBytes)
	}
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return fmt.Errorf("control character %U", c)
		}
	}
	return nil
}

// RecordVerification writes the outcome of a verification of the chain to
// the chain itself, so the trail shows who checked it and what they found.
// head and verr are what Verify returned: audit.verify_ok records the
// verified head (its seq and hash); audit.verify_failed records the head of
// the intact part, the first bad seq and the reason. An error that is not a
// *ChainError is no verdict and is returned unrecorded.
func RecordVerification(ctx context.Context, db *store.DB, actor Actor, head Head, verr error) error {
	verb := "audit.verify_ok"
	detail := map[string]any{"verified_through_seq": head.Seq, "verified_through_hash": head.Hash}
	if verr != nil {
		var ce *ChainError
		if !errors.As(verr, &ce) {
			return fmt.Errorf("record audit verification: %w", verr)
		}
		verb = "audit.verify_failed"
		detail["first_bad_seq"] = ce.Seq
		detail["reason"] = ce.Reason
	}
	return db.Transact(ctx, func(tx *store.Tx) error {
		_, err := Append(ctx, tx, Event{Actor: actor, Verb: verb, Subject: Subject{Type: "audit_chain", ID: "main"}, Details: detail})
		return err
	})
}

// JobRetried is the record of a person retrying a failed job (jobs.Retry
// writes it in the retry's transaction): job.retried, with the job's kind.
func JobRetried(actor Actor, id int64) func(ctx context.Context, tx *store.Tx, kind string) error {
	return func(ctx context.Context, tx *store.Tx, kind string) error {
		_, err := Append(ctx, tx, Event{
			Actor: actor, Verb: "job.retried",
			Subject: Subject{Type: "job", ID: fmt.Sprint(id)}, Details: map[string]any{"kind": kind},
		})
		return err
	}
}

package audit

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/wardenhq/warden/platform/store"
)

// ChainError says where a chain stops being intact. Seq is the first seq at
// which verification failed; events before it are intact.
type ChainError struct {
	Seq    int64
	Reason string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("audit chain broken at seq %d: %s", e.Seq, e.Reason)
}

// ErrNoPublicKey is returned by Verify when the database holds signed
// checkpoints but Verify was given no public key to check them with.
var ErrNoPublicKey = errors.New("the database holds signed checkpoints but no public key was given to check them")

// Querier is what reading the chain needs; *sql.DB, *sql.Conn and *sql.Tx
// have it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Trust is what Verify holds the stored chain to besides its own links.
type Trust struct {
	// Key is the installation's public key (LoadPublicKey, or the text
	// `warden audit pubkey` printed, read with ParsePublicKey). Every
	// checkpoint stored with the chain must carry its valid signature.
	// It may be nil only while there are no checkpoints.
	Key ed25519.PublicKey
	// Head, when not nil, is a head kept outside the database (written
	// down by an auditor, or from an export's manifest): the chain must
	// reach Head.Seq and have Head.Hash there.
	Head *Head
}

// Verify walks the stored chain in seq order and returns its head. The error
// is a *ChainError naming the first bad seq when the chain is not intact
// (the head returned is then the last intact event), ErrNoPublicKey, or
// another error when the database cannot be read.
//
// "Intact" is section 4 of docs/audit-format.md: every row links to the
// one before and hashes to its stored hash; its columns are TEXT; its time
// and details are in canonical form, details within MaxDetailsBytes; times
// never decrease; and the chain agrees with every signed checkpoint in
// audit_checkpoints, and with trust.Head, and reaches the newest of them.
// The checkpoints are what expose events cut from the end, or a tail
// rewritten and rehashed, after they were signed.
//
// A nil trust checks the chain alone and fails with ErrNoPublicKey when
// there are checkpoints: a verification that skipped them would say less
// than it seemed to.
func Verify(ctx context.Context, q Querier, trust *Trust) (Head, error) {
	if trust == nil {
		trust = &Trust{}
	}
	anchors, err := readAnchors(ctx, q, trust)
	if err != nil {
		return Head{}, err
	}
	c := newChain(Head{Seq: 0, Hash: GenesisHash}, "", anchors)
	if err := c.start(); err != nil {
		return c.head, err
	}
	rows, err := q.QueryContext(ctx, verifyEvents(q)+` ORDER BY seq`)
	if err != nil {
		return Head{}, fmt.Errorf("verify audit chain: %w", err)
	}
	defer rows.Close()
	if err := c.addRows(rows); err != nil {
		return c.head, err
	}
	if err := rows.Err(); err != nil {
		return c.head, fmt.Errorf("verify audit chain after seq %d: %w", c.head.Seq, err)
	}
	return c.head, c.end()
}

// VerifyEvents checks an ordered slice of events, such as an export, the way
// Verify checks the table. It returns nil when the events form an intact
// chain from seq 1 (an empty slice is intact) and reach want when want is
// not nil, else a *ChainError naming the first bad seq.
func VerifyEvents(events []Event, want *Head) error {
	anchors, err := trustedHead(want)
	if err != nil {
		return err
	}
	c := newChain(Head{Seq: 0, Hash: GenesisHash}, "", anchors)
	if err := c.start(); err != nil {
		return err
	}
	for _, ev := range events {
		r, err := encode(ev)
		if err != nil {
			return &ChainError{Seq: c.head.Seq + 1, Reason: err.Error()}
		}
		if err := c.add(r, false); err != nil {
			return err
		}
	}
	return c.end()
}

var hashRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// anchor is a head the chain must agree with: a signed checkpoint or a
// trusted head.
type anchor struct {
	Head
	name string
	// check reports why the anchor itself cannot be relied on (a bad
	// signature), or "".
	check func() string
}

// readAnchors reads the stored checkpoints and adds trust.Head, sorted by
// seq.
func readAnchors(ctx context.Context, q Querier, trust *Trust) ([]anchor, error) {
	anchors, err := trustedHead(trust.Head)
	if err != nil {
		return nil, err
	}
	rows, err := checkpointRows(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("verify audit chain: %w", err)
	}
	if len(rows) > 0 && trust.Key == nil {
		return nil, fmt.Errorf("verify audit chain: %w", ErrNoPublicKey)
	}
	for _, cr := range rows {
		anchors = append(anchors, anchor{
			Head:  Head{Seq: cr.seq, Hash: cr.hash},
			name:  fmt.Sprintf("the checkpoint signed at %s", short(cr.time)),
			check: func() string { return cr.check(trust.Key) },
		})
	}
	sort.SliceStable(anchors, func(i, j int) bool { return anchors[i].Seq < anchors[j].Seq })
	return anchors, nil
}

func trustedHead(want *Head) ([]anchor, error) {
	if want == nil {
		return nil, nil
	}
	if want.Seq < 0 || !hashRe.MatchString(want.Hash) || (want.Seq == 0 && want.Hash != GenesisHash) {
		return nil, fmt.Errorf("verify audit chain: invalid trusted head %d %q", want.Seq, short(want.Hash))
	}
	return []anchor{{Head: *want, name: "the trusted head", check: func() string { return "" }}}, nil
}

// chain is the verification algorithm of docs/audit-format.md, fed one
// record at a time.
type chain struct {
	head    Head     // the last event accepted
	time    string   // its time, "" before the first event
	anchors []anchor // those not reached yet, by seq
	matched int64    // seq of the last anchor the chain agreed with
}

// newChain starts a chain after head, whose event has time t.
func newChain(head Head, t string, anchors []anchor) *chain {
	return &chain{head: head, time: t, anchors: anchors, matched: head.Seq}
}

// start checks the anchors at or before the chain's start (a checkpoint of
// the empty chain).
func (c *chain) start() error {
	return c.reach(c.head)
}

// reach checks the anchors up to h.Seq against h, the event the chain
// reached, and consumes them.
func (c *chain) reach(h Head) error {
	for len(c.anchors) > 0 && c.anchors[0].Seq <= h.Seq {
		a := c.anchors[0]
		if reason := a.check(); reason != "" {
			return &ChainError{Seq: a.Seq, Reason: reason}
		}
		if a.Head != h {
			return &ChainError{Seq: a.Seq, Reason: fmt.Sprintf(
				"hash differs from %s: the chain was rewritten and rehashed from a seq between %d and %d",
				a.name, c.matched+1, a.Seq)}
		}
		c.matched = a.Seq
		c.anchors = c.anchors[1:]
	}
	return nil
}

// add checks the next record. canonical asks for the canonical-form check,
// which records made by encode pass by construction.
// addRows adds each row of rows, as verifyEvents reads them, in order; it
// stops at the first that does not read or does not link. The rows' own
// error (rows.Err) is the caller's to check.
func (c *chain) addRows(rows *sql.Rows) error {
	for rows.Next() {
		r, err := scanVerifyRecord(rows)
		if err != nil {
			return &ChainError{Seq: c.head.Seq + 1, Reason: fmt.Sprintf("unreadable row: %v", err)}
		}
		if err := c.add(r, true); err != nil {
			return err
		}
	}
	return nil
}

func (c *chain) add(r record, canonical bool) error {
	seq := c.head.Seq + 1
	bad := func(format string, a ...any) error {
		return &ChainError{Seq: seq, Reason: fmt.Sprintf(format, a...)}
	}
	switch {
	case r.seq != seq:
		return bad("found seq %d where seq %d belongs", r.seq, seq)
	case r.badTypes != "":
		return bad("%s not stored as TEXT", r.badTypes)
	case r.invalidUTF8() != "":
		return bad("%s not valid UTF-8", r.invalidUTF8())
	case r.prevHash != c.head.Hash && seq == 1:
		return bad("prev_hash of the first event is not the genesis hash")
	case r.prevHash != c.head.Hash:
		return bad("prev_hash does not match the hash of seq %d", c.head.Seq)
	case r.computeHash() != r.hash:
		return bad("hash does not match the event's contents")
	}
	if canonical {
		if reason := r.checkCanonical(); reason != "" {
			return bad("%s", reason)
		}
	}
	switch {
	case len(r.details) > MaxDetailsBytes:
		return bad("details are %d bytes, limit %d", len(r.details), MaxDetailsBytes)
	case r.time < c.time: // canonical times sort as text
		return bad("time %s is earlier than seq %d's %s", r.time, c.head.Seq, c.time)
	}
	if err := c.reach(Head{Seq: r.seq, Hash: r.hash}); err != nil {
		return err
	}
	c.head, c.time = Head{Seq: r.seq, Hash: r.hash}, r.time
	return nil
}

// end checks, once every event is in, that the chain reached the newest
// checkpoint and the trusted head.
func (c *chain) end() error {
	if len(c.anchors) == 0 {
		return nil
	}
	a := c.anchors[0]
	if reason := a.check(); reason != "" {
		return &ChainError{Seq: a.Seq, Reason: reason}
	}
	return &ChainError{
		Seq: c.head.Seq + 1,
		Reason: fmt.Sprintf("chain ends at seq %d but %s is at seq %d: events were removed from the end",
			c.head.Seq, a.name, a.Seq),
	}
}

const selectEvents = `SELECT seq, time, actor_type, actor_id, tenant, verb,
	subject_type, subject_id, details, prev_hash, hash FROM audit_events`

func scanRecord(row store.Scanner) (record, error) {
	var r record
	err := row.Scan(&r.seq, &r.time, &r.actorType, &r.actorID, &r.tenant, &r.verb,
		&r.subjectType, &r.subjectID, &r.details, &r.prevHash, &r.hash)
	return r, err
}

// scanEvent reads an event as it is stored (List, Page, Trail: not
// verified), a row Warden did not write as its fields alone (shown).
func scanEvent(row store.Scanner) (Event, error) {
	r, err := scanRecord(row)
	if err != nil {
		return Event{}, err
	}
	return r.shown(), nil
}

// verifyEvents is the query that reads rows as a verifier must, on the
// engine q talks to: a NULL reads as "" and a BLOB as its bytes, and a
// last column is the bit mask of the columns that are not stored as
// TEXT, bit i for eventColumns[i].
func verifyEvents(q Querier) string {
	return `SELECT seq, ` + textColumns(store.DialectOf(q), eventColumns) + ` FROM audit_events`
}

var eventColumns = []string{"time", "actor_type", "actor_id", "tenant", "verb",
	"subject_type", "subject_id", "details", "prev_hash", "hash"}

// textColumns selects columns as text ("" for NULL), then the mask of those
// not stored as TEXT. On SQLite that is the storage class of each value
// (typeof): a TEXT column takes a BLOB, or NULL, as it is. On PostgreSQL a
// column's values all have its type, so the mask catches a NULL, or a
// column whose type was changed from text (pg_typeof).
func textColumns(d store.Dialect, columns []string) string {
	values := make([]string, len(columns))
	mask := make([]string, len(columns))
	for i, c := range columns {
		values[i] = fmt.Sprintf("COALESCE(%s, '')", c)
		notText := fmt.Sprintf("typeof(%s) <> 'text'", c)
		if d == store.Postgres {
			notText = fmt.Sprintf("%s IS NULL OR pg_typeof(%s) <> 'text'::regtype", c, c)
		}
		mask[i] = fmt.Sprintf("(CASE WHEN %s THEN %d ELSE 0 END)", notText, 1<<i)
	}
	return strings.Join(values, ", ") + ", " + strings.Join(mask, " + ")
}

func scanVerifyRecord(rows *sql.Rows) (record, error) {
	var r record
	var types int64
	err := rows.Scan(&r.seq, &r.time, &r.actorType, &r.actorID, &r.tenant, &r.verb,
		&r.subjectType, &r.subjectID, &r.details, &r.prevHash, &r.hash, &types)
	r.badTypes = columnList(eventColumns, types)
	return r, err
}

// columnList names the columns whose bits are set in mask.
func columnList(columns []string, mask int64) string {
	if mask == 0 {
		return ""
	}
	var names []string
	for i, c := range columns {
		if mask&(1<<i) != 0 {
			names = append(names, c)
		}
	}
	return strings.Join(names, ", ")
}

// short quotes s for a reason, cut to a readable length: reasons are
// recorded in the trail, and a tampered column can be of any length.
func short(s string) string {
	const limit = 80
	if len(s) > limit {
		return fmt.Sprintf("%q…", s[:limit])
	}
	return fmt.Sprintf("%q", s)
}

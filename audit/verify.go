package audit

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
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

// Querier is what reading the chain needs; *sql.DB, *sql.Conn and *sql.Tx
// have it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Verify walks the stored chain in seq order and returns its head. The error
// is a *ChainError naming the first bad seq when the chain is not intact
// (the head returned is then the last intact event), or another error when
// the database cannot be read.
//
// Without want, Verify cannot notice events cut from the end: what remains
// is a valid chain. With want, a trusted head recorded earlier (a
// checkpoint), the chain must reach want.Seq and have want.Hash there.
//
// Besides the checks every verifier makes (docs/audit-format.md), Verify
// requires each row's time and details to be in the canonical form Append
// writes.
func Verify(ctx context.Context, q Querier, want *Head) (Head, error) {
	c, err := newChain(want)
	if err != nil {
		return Head{}, err
	}
	rows, err := q.QueryContext(ctx, selectEvents+` ORDER BY seq`)
	if err != nil {
		return Head{}, fmt.Errorf("verify audit chain: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			// A column of the wrong type, such as a NULL where the
			// schema says NOT NULL: the table was rebuilt by hand.
			return c.head, &ChainError{Seq: c.head.Seq + 1, Reason: fmt.Sprintf("unreadable row: %v", err)}
		}
		if err := c.add(r); err != nil {
			return c.head, err
		}
		if reason := r.checkCanonical(); reason != "" {
			return c.prev, &ChainError{Seq: r.seq, Reason: reason}
		}
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
	c, err := newChain(want)
	if err != nil {
		return err
	}
	for _, ev := range events {
		r, err := encode(ev)
		if err != nil {
			return &ChainError{Seq: c.head.Seq + 1, Reason: err.Error()}
		}
		if err := c.add(r); err != nil {
			return err
		}
	}
	return c.end()
}

var hashRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// chain is the verification algorithm of docs/audit-format.md, fed one
// record at a time.
type chain struct {
	want *Head
	head Head // the last event accepted
	prev Head // the one before it
}

func newChain(want *Head) (*chain, error) {
	genesis := Head{Seq: 0, Hash: GenesisHash}
	if want != nil {
		if want.Seq < 0 || !hashRe.MatchString(want.Hash) || (want.Seq == 0 && want.Hash != GenesisHash) {
			return nil, fmt.Errorf("verify audit chain: invalid trusted head %d %q", want.Seq, want.Hash)
		}
	}
	return &chain{want: want, head: genesis, prev: genesis}, nil
}

func (c *chain) add(r record) error {
	seq := c.head.Seq + 1
	switch {
	case r.seq != seq:
		return &ChainError{Seq: seq, Reason: fmt.Sprintf("found seq %d where seq %d belongs", r.seq, seq)}
	case r.prevHash != c.head.Hash && seq == 1:
		return &ChainError{Seq: seq, Reason: "prev_hash of the first event is not the genesis hash"}
	case r.prevHash != c.head.Hash:
		return &ChainError{Seq: seq, Reason: fmt.Sprintf("prev_hash does not match the hash of seq %d", c.head.Seq)}
	case r.computeHash() != r.hash:
		return &ChainError{Seq: seq, Reason: "hash does not match the event's contents"}
	case c.want != nil && seq == c.want.Seq && r.hash != c.want.Hash:
		return &ChainError{Seq: seq, Reason: "hash differs from the trusted head's: the chain was rewritten"}
	}
	c.prev, c.head = c.head, Head{Seq: r.seq, Hash: r.hash}
	return nil
}

// end checks, once every event is in, that the chain reached the trusted
// head.
func (c *chain) end() error {
	if c.want != nil && c.head.Seq < c.want.Seq {
		return &ChainError{
			Seq:    c.head.Seq + 1,
			Reason: fmt.Sprintf("chain ends at seq %d but the trusted head is seq %d: events were removed from the end", c.head.Seq, c.want.Seq),
		}
	}
	return nil
}

const selectEvents = `SELECT seq, time, actor_type, actor_id, tenant, verb,
	subject_type, subject_id, details, prev_hash, hash FROM audit_events`

func scanRecord(rows *sql.Rows) (record, error) {
	var r record
	err := rows.Scan(&r.seq, &r.time, &r.actorType, &r.actorID, &r.tenant, &r.verb,
		&r.subjectType, &r.subjectID, &r.details, &r.prevHash, &r.hash)
	return r, err
}

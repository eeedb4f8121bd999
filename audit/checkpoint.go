package audit

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// CheckpointTag is the first line of every signed checkpoint message. It
// keeps a checkpoint signature from being valid for anything else the key
// signs, and names the message's version.
const CheckpointTag = "warden-audit-checkpoint/v1"

// SignedHead is a checkpoint: the chain's head at one moment, signed with
// the installation's key. Stored in audit_checkpoints, it lets Verify expose
// events cut from the end of the chain, or a tail rewritten and rehashed,
// after it was signed; kept outside the database (an export's manifest), it
// lets anyone check a copy of the chain with the public key alone.
type SignedHead struct {
	Head
	Time      time.Time         // when it was signed, UTC
	Signature []byte            // Ed25519 signature of Message()
	Key       ed25519.PublicKey // the key that signed
}

// Message is the exact bytes signed (docs/audit-format.md, section 7):
//
//	warden-audit-checkpoint/v1\n<seq>\n<hash>\n<time>
//
// with seq in decimal, hash as 64 lowercase hex digits, time in TimeFormat,
// and no newline at the end.
func (s SignedHead) Message() []byte {
	return checkpointMessage(s.Seq, s.Hash, s.Time.UTC().Format(TimeFormat))
}

func checkpointMessage(seq int64, hash, t string) []byte {
	return []byte(CheckpointTag + "\n" + strconv.FormatInt(seq, 10) + "\n" + hash + "\n" + t)
}

// Verify checks that s was signed by key.
func (s SignedHead) Verify(key ed25519.PublicKey) error {
	switch {
	case s.Seq < 0 || !hashRe.MatchString(s.Hash) || (s.Seq == 0 && s.Hash != GenesisHash):
		return fmt.Errorf("checkpoint of seq %d: not a valid head", s.Seq)
	case !s.Key.Equal(key):
		return fmt.Errorf("checkpoint of seq %d: signed by %s, not by the installation's key %s",
			s.Seq, FormatPublicKey(s.Key), FormatPublicKey(key))
	case !ed25519.Verify(key, s.Message(), s.Signature):
		return fmt.Errorf("checkpoint of seq %d: the signature does not verify", s.Seq)
	}
	return nil
}

// Checkpoint signs the chain's current head with signer and stores it in
// audit_checkpoints, dated now, and returns it. When the head has not moved
// since the newest checkpoint it returns that one and stores nothing.
//
// It signs only a chain it has checked: the events since the newest
// checkpoint (all of them, the first time) must extend that checkpoint
// intact, and the checkpoint must verify with signer's key. Otherwise it
// signs nothing and returns the *ChainError, so a tampered tail is never
// vouched for. Events before the newest checkpoint are the full Verify's
// concern.
//
// warden serve calls it at start-up and periodically, exports at every
// export; concurrent calls are safe and agree.
func Checkpoint(ctx context.Context, db *store.DB, signer *Signer, now time.Time) (SignedHead, error) {
	if now.IsZero() {
		now = time.Now()
	}
	key := signer.PublicKey()
	q := db.Read()
	from, fromTime := Head{Seq: 0, Hash: GenesisHash}, ""
	latest, err := LatestCheckpoint(ctx, q)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return SignedHead{}, fmt.Errorf("audit checkpoint: %w", err)
	default:
		if err := latest.Verify(key); err != nil {
			return SignedHead{}, fmt.Errorf("audit checkpoint: %w", &ChainError{Seq: latest.Seq, Reason: "the newest " + err.Error()})
		}
		from = latest.Head
		if from.Seq > 0 {
			var hash string
			err := q.QueryRowContext(ctx, `SELECT hash, time FROM audit_events WHERE seq = ?`, from.Seq).Scan(&hash, &fromTime)
			if errors.Is(err, sql.ErrNoRows) {
				return SignedHead{}, fmt.Errorf("audit checkpoint: %w", &ChainError{Seq: from.Seq,
					Reason: "the event of the newest checkpoint is missing: events were removed from the end"})
			}
			if err != nil {
				return SignedHead{}, fmt.Errorf("audit checkpoint: %w", err)
			}
			if hash != from.Hash {
				return SignedHead{}, fmt.Errorf("audit checkpoint: %w", &ChainError{Seq: from.Seq,
					Reason: "hash differs from the newest checkpoint: the chain was rewritten"})
			}
		}
	}
	head, err := verifySince(ctx, q, from, fromTime)
	if err != nil {
		return SignedHead{}, fmt.Errorf("audit checkpoint: %w", err)
	}
	if latest.Key != nil && head == latest.Head {
		return latest, nil
	}

	sh := SignedHead{Head: head, Time: now.UTC(), Key: key}
	// The stored time is the signed text; parsing it back gives Time the
	// precision the text has.
	t := sh.Time.Format(TimeFormat)
	sh.Time, _ = time.Parse(TimeFormat, t)
	sh.Signature = signer.Sign(sh.Message())
	var stored checkpointRow
	err = db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_checkpoints (seq, hash, time, signature, key)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (seq) DO NOTHING`,
			sh.Seq, sh.Hash, t, base64.StdEncoding.EncodeToString(sh.Signature), FormatPublicKey(key))
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, selectCheckpoints(tx)+` WHERE seq = ?`, sh.Seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			return errors.New("checkpoint not stored")
		}
		if stored, err = scanCheckpoint(rows); err != nil {
			return err
		}
		return rows.Close()
	})
	if err != nil {
		return SignedHead{}, fmt.Errorf("audit checkpoint of seq %d: %w", sh.Seq, err)
	}
	// Another call may have stored this head first; it signed the same.
	out, err := stored.signedHead()
	if err != nil {
		return SignedHead{}, fmt.Errorf("audit checkpoint: %w", err)
	}
	if out.Hash != sh.Hash {
		return SignedHead{}, fmt.Errorf("audit checkpoint: %w", &ChainError{Seq: sh.Seq,
			Reason: "a checkpoint of another hash is stored for this seq"})
	}
	return out, nil
}

// verifySince checks the events after from (whose event has time
// fromTime) and returns the head they reach.
func verifySince(ctx context.Context, q Querier, from Head, fromTime string) (Head, error) {
	c := newChain(from, fromTime, nil)
	rows, err := q.QueryContext(ctx, verifyEvents(q)+` WHERE seq > ? ORDER BY seq`, from.Seq)
	if err != nil {
		return Head{}, err
	}
	defer rows.Close()
	if err := c.addRows(rows); err != nil {
		return c.head, err
	}
	return c.head, rows.Err()
}

// Checkpoints returns the stored checkpoints, oldest first.
func Checkpoints(ctx context.Context, q Querier) ([]SignedHead, error) {
	rows, err := checkpointRows(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read audit checkpoints: %w", err)
	}
	out := make([]SignedHead, 0, len(rows))
	for _, r := range rows {
		sh, err := r.signedHead()
		if err != nil {
			return nil, fmt.Errorf("read audit checkpoints: %w", err)
		}
		out = append(out, sh)
	}
	return out, nil
}

// LatestCheckpoint returns the checkpoint of the highest seq, or an error
// wrapping store.ErrNotFound when there is none.
func LatestCheckpoint(ctx context.Context, q Querier) (SignedHead, error) {
	rows, err := q.QueryContext(ctx, selectCheckpoints(q)+` ORDER BY seq DESC LIMIT 1`)
	if err != nil {
		return SignedHead{}, fmt.Errorf("read the newest audit checkpoint: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return SignedHead{}, fmt.Errorf("read the newest audit checkpoint: %w", err)
		}
		return SignedHead{}, fmt.Errorf("no audit checkpoint: %w", store.ErrNotFound)
	}
	r, err := scanCheckpoint(rows)
	if err != nil {
		return SignedHead{}, fmt.Errorf("read the newest audit checkpoint: %w", err)
	}
	sh, err := r.signedHead()
	if err != nil {
		return SignedHead{}, fmt.Errorf("read the newest audit checkpoint: %w", err)
	}
	return sh, nil
}

// LoadPublicKey reads the installation's public key from the signing key in
// dir, the data directory, without creating one: for tools that verify a
// chain with the installation's own key. The error wraps os.ErrNotExist
// when dir holds no key.
func LoadPublicKey(dir string) (ed25519.PublicKey, error) {
	path := filepath.Join(dir, signingKeyFile)
	seed, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read audit signing key: %w", err)
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("audit signing key %s: want %d bytes, found %d", path, ed25519.SeedSize, len(seed))
	}
	return ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), nil
}

// InstallationKey is the public key of the installation that owns db: that
// of the signing key in the data directory, beside the database file. It is
// nil, without error, when the directory has no key yet; then there are no
// checkpoints either, and Verify needs no key.
func InstallationKey(db *store.DB) (ed25519.PublicKey, error) {
	key, err := LoadPublicKey(filepath.Dir(db.Path()))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return key, err
}

// checkpointRow is an audit_checkpoints row as stored, each column as the
// text a verifier reads.
type checkpointRow struct {
	seq                        int64
	hash, time, signature, key string
	badTypes                   string // columns not stored as TEXT
}

// selectCheckpoints reads rows the way verifyEvents does.
func selectCheckpoints(q Querier) string {
	return `SELECT seq, ` + textColumns(store.DialectOf(q), checkpointColumns) + ` FROM audit_checkpoints`
}

var checkpointColumns = []string{"hash", "time", "signature", "key"}

func scanCheckpoint(rows store.Scanner) (checkpointRow, error) {
	var r checkpointRow
	var types int64
	err := rows.Scan(&r.seq, &r.hash, &r.time, &r.signature, &r.key, &types)
	r.badTypes = columnList(checkpointColumns, types)
	return r, err
}

// checkpointRows reads every stored checkpoint, by seq. A database from
// before checkpoints (no audit_checkpoints table) has none.
func checkpointRows(ctx context.Context, q Querier) ([]checkpointRow, error) {
	if ok, err := store.TableExists(ctx, q, "audit_checkpoints"); err != nil || !ok {
		return nil, err
	}
	out, err := store.Query(ctx, q, scanCheckpoint, selectCheckpoints(q)+` ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// check reports why the stored checkpoint cannot be relied on under key,
// or "". It checks the stored texts as they are: the signed message is
// built from them.
func (r checkpointRow) check(key ed25519.PublicKey) string {
	what := fmt.Sprintf("checkpoint of seq %d", r.seq)
	sig, err := base64.StdEncoding.Strict().DecodeString(r.signature)
	switch {
	case r.badTypes != "":
		return fmt.Sprintf("%s: %s not stored as TEXT", what, r.badTypes)
	case r.seq < 0 || !hashRe.MatchString(r.hash) || (r.seq == 0 && r.hash != GenesisHash):
		return fmt.Sprintf("%s: hash %s is not a valid head", what, short(r.hash))
	case r.key != FormatPublicKey(key):
		return fmt.Sprintf("%s: signed by %s, not by the installation's key %s", what, short(r.key), FormatPublicKey(key))
	case err != nil || len(sig) != ed25519.SignatureSize:
		return fmt.Sprintf("%s: the signature is not the standard base64 of %d bytes", what, ed25519.SignatureSize)
	case !ed25519.Verify(key, checkpointMessage(r.seq, r.hash, r.time), sig):
		return fmt.Sprintf("%s: the signature does not verify: the checkpoint was forged or altered", what)
	}
	return ""
}

// signedHead parses the stored texts.
func (r checkpointRow) signedHead() (SignedHead, error) {
	what := fmt.Sprintf("checkpoint of seq %d", r.seq)
	if r.badTypes != "" {
		return SignedHead{}, fmt.Errorf("%s: %s not stored as TEXT", what, r.badTypes)
	}
	t, err := time.Parse(TimeFormat, r.time)
	if err != nil {
		return SignedHead{}, fmt.Errorf("%s: time %s is not in the form %s", what, short(r.time), TimeFormat)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(r.signature)
	if err != nil {
		return SignedHead{}, fmt.Errorf("%s: signature is not base64", what)
	}
	key, err := ParsePublicKey(r.key)
	if err != nil {
		return SignedHead{}, fmt.Errorf("%s: %w", what, err)
	}
	return SignedHead{Head: Head{Seq: r.seq, Hash: r.hash}, Time: t, Signature: sig, Key: key}, nil
}

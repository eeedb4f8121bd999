// Package idempotency makes a retried request return the first response:
// the first request with a given Idempotency-Key claims it, runs, and
// stores its response; a retry with the same body gets that response
// without running again, a retry with another body is refused, and a
// duplicate that arrives while the first still runs waits for it.
//
// A client may choose anything as its key, an e-mail address included, so
// the key is never stored: only its SHA-256, bound to the owner (the
// virtual key), is (docs/redaction.md). The same header from the same
// owner finds the same row; callers pass the header as it came.
package idempotency

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

var (
	// ErrMismatch: the key was used with a different request body.
	ErrMismatch = errors.New("idempotency key reused with a different request")
	// ErrInFlight: the first request with this key is still running.
	ErrInFlight = errors.New("a request with this idempotency key is still running")
)

// StaleAfter is how long a claim without a response is honoured: longer
// than any journey can run.
var StaleAfter = 10 * time.Minute

// Stored is a kept response.
type Stored struct {
	Status int
	Body   []byte
}

// Hash is the request fingerprint compared between retries.
func Hash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// keyDigest is what is stored of owner's Idempotency-Key. Binding the
// owner in (length-prefixed, so owner and key cannot run into each other)
// means a digest says nothing about the same key under another owner.
func keyDigest(owner, key string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "warden/idempotency-key\x00%d\x00%s%s", len(owner), owner, key))
	return hex.EncodeToString(sum[:])
}

// Begin claims (owner, key) for a request with the given hash. It returns
// (nil, nil) when the caller now owns the key and must run the request and
// then Complete or Abandon it; a stored response to replay; or an error.
// A duplicate of a running request polls until it finishes or wait passes.
func Begin(ctx context.Context, db *store.DB, owner, key, hash string, wait time.Duration) (*Stored, error) {
	key = keyDigest(owner, key)
	deadline := time.Now().Add(wait)
	for {
		var claimed bool
		err := db.Transact(ctx, func(tx *store.Tx) error {
			res, err := tx.ExecContext(ctx, `INSERT INTO idempotency (key_id, idem_key, request_hash, created_at)
				VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, owner, key, hash, store.Now())
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			claimed = n == 1
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("idempotency: %w", err)
		}
		if claimed {
			return nil, nil
		}
		var s Stored
		var storedHash, created string
		err = db.Read().QueryRowContext(ctx, `SELECT request_hash, status_code, response, created_at FROM idempotency WHERE key_id = ? AND idem_key = ?`,
			owner, key).Scan(&storedHash, &s.Status, &s.Body, &created)
		if errors.Is(err, sql.ErrNoRows) {
			continue // abandoned in between: claim it
		}
		if err != nil {
			return nil, fmt.Errorf("idempotency: %w", err)
		}
		if storedHash != hash {
			return nil, ErrMismatch
		}
		if s.Status != 0 {
			return &s, nil
		}
		// A claim that never completed (its process died) is taken over
		// once it is older than any request can run.
		if at, err := time.Parse(time.RFC3339Nano, created); err == nil && time.Since(at) > StaleAfter {
			if err := db.Transact(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE key_id = ? AND idem_key = ? AND status_code = 0 AND created_at = ?`, owner, key, created)
				return err
			}); err != nil {
				return nil, fmt.Errorf("idempotency: %w", err)
			}
			continue
		}
		if time.Now().After(deadline) {
			return nil, ErrInFlight
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Complete stores the response of the request that owns the key.
func Complete(ctx context.Context, db *store.DB, owner, key string, status int, body []byte) error {
	key = keyDigest(owner, key)
	return db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE idempotency SET status_code = ?, response = ? WHERE key_id = ? AND idem_key = ?`,
			status, body, owner, key)
		return err
	})
}

// Abandon releases the key when the request produced nothing worth
// replaying (it was refused before it ran, or failed on Warden's side), so
// a retry runs afresh.
func Abandon(ctx context.Context, db *store.DB, owner, key string) error {
	key = keyDigest(owner, key)
	return db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE key_id = ? AND idem_key = ? AND status_code = 0`, owner, key)
		return err
	})
}

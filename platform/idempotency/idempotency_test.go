package idempotency

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	return storetest.Open(t)
}

// TestKeyIsStoredHashed: an Idempotency-Key may be personal data (here an
// e-mail address). It is never stored, yet the same header from the same
// owner still finds its row: the replay, the mismatch, the release.
func TestKeyIsStoredHashed(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const owner, key = "key_1", "jane.roe@example.org"
	body := Hash([]byte(`{"input":"where is ORD-1003?"}`))

	if s, err := Begin(ctx, db, owner, key, body, time.Second); s != nil || err != nil {
		t.Fatalf("first Begin = %v, %v; want the claim", s, err)
	}
	if err := Complete(ctx, db, owner, key, 200, []byte(`{"id":"jrn_1"}`)); err != nil {
		t.Fatal(err)
	}
	s, err := Begin(ctx, db, owner, key, body, time.Second)
	if err != nil || s == nil || s.Status != 200 || string(s.Body) != `{"id":"jrn_1"}` {
		t.Fatalf("replay = %+v, %v; want the stored 200", s, err)
	}
	if _, err := Begin(ctx, db, owner, key, Hash([]byte(`{}`)), time.Second); !errors.Is(err, ErrMismatch) {
		t.Errorf("same key, other body = %v, want ErrMismatch", err)
	}
	// Another owner's identical key is another row.
	if s, err := Begin(ctx, db, "key_2", key, body, time.Second); s != nil || err != nil {
		t.Errorf("another owner's Begin = %v, %v; want its own claim", s, err)
	}
	// Abandon finds the claim by the same header.
	if err := Abandon(ctx, db, "key_2", key); err != nil {
		t.Fatal(err)
	}

	rows, err := db.Read().Query(`SELECT key_id, idem_key FROM idempotency`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, stored string
		if err := rows.Scan(&id, &stored); err != nil {
			t.Fatal(err)
		}
		n++
		if strings.Contains(stored, "jane") || stored != keyDigest(id, key) || len(stored) != 64 {
			t.Errorf("stored idem_key %q for %s, want the owner-bound SHA-256 of the key", stored, id)
		}
	}
	if n != 1 {
		t.Errorf("%d rows, want 1 (key_2's claim was abandoned)", n)
	}
}

func TestKeyDigest(t *testing.T) {
	a := keyDigest("key_1", "retry-1")
	switch {
	case a != keyDigest("key_1", "retry-1"):
		t.Error("keyDigest is not stable")
	case a == keyDigest("key_2", "retry-1"):
		t.Error("keyDigest ignores the owner")
	case keyDigest("key_1", "a\x00b") == keyDigest("key_1\x00a", "b"):
		t.Error("keyDigest lets owner and key run into each other")
	}
}

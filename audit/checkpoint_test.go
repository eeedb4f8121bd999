package audit_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

// signerFor is the installation's signer: its key in the data directory
// beside the database.
func signerFor(t testing.TB, db *store.DB) *audit.Signer {
	t.Helper()
	s, err := audit.LoadOrCreateSigner(filepath.Dir(db.Path()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func checkpoint(t testing.TB, db *store.DB, s *audit.Signer, now time.Time) audit.SignedHead {
	t.Helper()
	cp, err := audit.Checkpoint(context.Background(), db, s, now)
	if err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	return cp
}

// checkpointRow is an audit_checkpoints row as text.
type checkpointRow struct {
	Seq                        int64
	Hash, Time, Signature, Key string
}

func readCheckpointRows(t testing.TB, q *sql.DB) []checkpointRow {
	t.Helper()
	rs, err := q.Query(`SELECT seq, hash, time, signature, key FROM audit_checkpoints ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []checkpointRow
	for rs.Next() {
		var r checkpointRow
		if err := rs.Scan(&r.Seq, &r.Hash, &r.Time, &r.Signature, &r.Key); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// The signed bytes, the key text and the signature as docs/audit-format.md
// section 5 gives them for its worked example.
const (
	exampleSeed      = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	examplePublicKey = "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
	exampleSignature = "UzA7aCeZrzBhn2kwxo324PTmEtVCGFxpflJ1kDLEUg1gaSWARX5DUL16VG2BajzpxOkCSD/9NJw1D1XRFpujBg=="
	exampleMessage   = "warden-audit-checkpoint/v1\n2\n" + exampleHash2 + "\n2025-06-01T17:05:00.000000000Z"
)

func TestCheckpointKnownAnswer(t *testing.T) {
	seed, _ := hex.DecodeString(exampleSeed)
	s := audit.NewSigner(ed25519.NewKeyFromSeed(seed))
	sh := audit.SignedHead{
		Head: audit.Head{Seq: 2, Hash: exampleHash2},
		Time: time.Date(2025, 6, 1, 17, 5, 0, 0, time.UTC),
		Key:  s.PublicKey(),
	}
	if got := string(sh.Message()); got != exampleMessage || len(got) != 124 {
		t.Errorf("Message() = %q (%d bytes), want %q (124)", got, len(got), exampleMessage)
	}
	if got := s.PublicKeyText(); got != examplePublicKey {
		t.Errorf("PublicKeyText() = %s, want %s", got, examplePublicKey)
	}
	sh.Signature = s.Sign(sh.Message())
	if got := base64.StdEncoding.EncodeToString(sh.Signature); got != exampleSignature {
		t.Errorf("signature = %s, want %s", got, exampleSignature)
	}
	if err := sh.Verify(s.PublicKey()); err != nil {
		t.Errorf("Verify = %v", err)
	}
	other := audit.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err := sh.Verify(other.PublicKey()); err == nil {
		t.Error("Verify with another key succeeded")
	}
	moved := sh
	moved.Seq = 3
	if err := moved.Verify(s.PublicKey()); err == nil {
		t.Error("Verify of a checkpoint moved to another seq succeeded")
	}

	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{exampleSeed, examplePublicKey, exampleSignature, "```\n" + exampleMessage + "\n```", "124 bytes"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("%s does not contain %q", formatDoc, want)
		}
	}
}

func TestCheckpointSignsAndStoresTheHead(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := signerFor(t, db)
	if _, err := audit.LatestCheckpoint(ctx, db.Read()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LatestCheckpoint with none = %v, want store.ErrNotFound", err)
	}

	// The empty chain has a head too.
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	empty := checkpoint(t, db, s, t0)
	if empty.Head != (audit.Head{Seq: 0, Hash: audit.GenesisHash}) || !empty.Time.Equal(t0) || empty.Time.Location() != time.UTC {
		t.Errorf("checkpoint of the empty chain = %+v, want seq 0, the genesis hash, %v in UTC", empty, t0)
	}

	events := appendEvents(t, db, 3)
	t1 := t0.Add(time.Hour + 123456789*time.Nanosecond)
	cp := checkpoint(t, db, s, t1)
	if cp.Head != (audit.Head{Seq: 3, Hash: events[2].Hash}) || !cp.Time.Equal(t1) || !cp.Key.Equal(s.PublicKey()) {
		t.Errorf("checkpoint = %+v, want head 3 %s signed at %v by the installation's key", cp, events[2].Hash, t1)
	}
	if err := cp.Verify(s.PublicKey()); err != nil {
		t.Errorf("checkpoint does not verify: %v", err)
	}

	// Stored exactly as section 5 of the format says.
	rows := readCheckpointRows(t, db.Read())
	want := checkpointRow{
		Seq: 3, Hash: events[2].Hash, Time: "2025-06-01T08:00:00.123456789Z",
		Signature: base64.StdEncoding.EncodeToString(cp.Signature), Key: s.PublicKeyText(),
	}
	if len(rows) != 2 || rows[1] != want {
		t.Fatalf("stored checkpoints = %+v, want the empty chain's and %+v", rows, want)
	}
	msg := "warden-audit-checkpoint/v1\n3\n" + events[2].Hash + "\n2025-06-01T08:00:00.123456789Z"
	sig, _ := base64.StdEncoding.DecodeString(rows[1].Signature)
	if !ed25519.Verify(s.PublicKey(), []byte(msg), sig) {
		t.Errorf("stored signature does not verify over %q", msg)
	}

	// Idempotent while the head does not move.
	again := checkpoint(t, db, s, t1.Add(time.Hour))
	if again.Head != cp.Head || !again.Time.Equal(cp.Time) || !bytes.Equal(again.Signature, cp.Signature) {
		t.Errorf("second checkpoint of the same head = %+v, want the first %+v", again, cp)
	}
	if n := len(readCheckpointRows(t, db.Read())); n != 2 {
		t.Errorf("%d checkpoints stored after a repeat, want 2", n)
	}

	// A new head gets a new checkpoint.
	more := appendEvents(t, db, 2)
	next := checkpoint(t, db, s, t1.Add(2*time.Hour))
	if next.Head != (audit.Head{Seq: 5, Hash: more[1].Hash}) {
		t.Errorf("checkpoint after two more events = %v, want seq 5", next.Head)
	}
	all, err := audit.Checkpoints(ctx, db.Read())
	if err != nil || len(all) != 3 || all[0].Seq != 0 || all[1].Seq != 3 || all[2].Seq != 5 {
		t.Errorf("Checkpoints = %+v, %v; want seqs 0, 3, 5", all, err)
	}
	latest, err := audit.LatestCheckpoint(ctx, db.Read())
	if err != nil || latest.Head != next.Head || !latest.Time.Equal(next.Time) || !bytes.Equal(latest.Signature, next.Signature) {
		t.Errorf("LatestCheckpoint = %+v, %v; want %+v", latest, err, next)
	}
	if _, err := audit.Verify(ctx, db.Read(), &audit.Trust{Key: s.PublicKey()}); err != nil {
		t.Errorf("Verify = %v", err)
	}
}

func TestCheckpointConcurrentCallsAgree(t *testing.T) {
	db := openDB(t)
	s := signerFor(t, db)
	appendEvents(t, db, 4)
	var wg sync.WaitGroup
	got := make([]audit.SignedHead, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Go(func() {
			got[i], errs[i] = audit.Checkpoint(context.Background(), db, s, time.Now().Add(time.Duration(i)*time.Second))
		})
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i].Head != got[0].Head || !got[i].Time.Equal(got[0].Time) || got[i].Seq != 4 {
			t.Errorf("call %d = %+v, %v; want the same checkpoint of seq 4 as call 0 (%+v)", i, got[i], errs[i], got[0])
		}
	}
	if rows := readCheckpointRows(t, db.Read()); len(rows) != 1 {
		t.Errorf("%d checkpoints stored, want 1", len(rows))
	}
}

// TestCheckpointRefusesToSignATamperedChain: a checkpoint vouches for the
// chain, so it is never taken of a tail that does not extend the newest
// checkpoint intact.
func TestCheckpointRefusesToSignATamperedChain(t *testing.T) {
	tests := []struct {
		name    string
		tamper  func(t *testing.T, raw *sql.DB, rows []row)
		wantSeq int64
	}{
		{"event after the checkpoint edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 5`)
		}, 5},
		{"tail after the checkpoint rewritten and rehashed", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 2`)
			rehash(t, raw, 2, rows[0].Hash)
		}, 3},
		{"events removed back past the checkpoint", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events WHERE seq > 2`)
		}, 3},
		{"checkpoint signature forged", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_checkpoints SET time = '2030-01-01T00:00:00.000000000Z'`)
		}, 3},
		{"non-canonical details after the checkpoint, rehashed", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET details = replace(details, ',', ', ') WHERE seq = 4`)
			rehash(t, raw, 4, rows[2].Hash)
		}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			s := signerFor(t, db)
			appendEvents(t, db, 3)
			checkpoint(t, db, s, time.Now())
			appendEvents(t, db, 3)
			raw := tamperer(t, db)
			tt.tamper(t, raw, readRows(t, raw))
			before := readCheckpointRows(t, db.Read())

			_, err := audit.Checkpoint(ctx, db, s, time.Now())
			var ce *audit.ChainError
			if !errors.As(err, &ce) || ce.Seq != tt.wantSeq {
				t.Fatalf("Checkpoint of a tampered chain = %v, want a ChainError at seq %d", err, tt.wantSeq)
			}
			if after := readCheckpointRows(t, db.Read()); len(after) != len(before) {
				t.Errorf("Checkpoint stored %d checkpoints over a tampered chain", len(after)-len(before))
			}
		})
	}
}

func TestCheckpointTriggersRefuseUpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	appendEvents(t, db, 1)
	checkpoint(t, db, signerFor(t, db), time.Now())
	for _, stmt := range []string{
		`UPDATE audit_checkpoints SET hash = 'x'`,
		`DELETE FROM audit_checkpoints`,
	} {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, stmt)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only refusal", stmt, err)
		}
	}
}

// TestVerifyHoldsTheChainToCheckpoints is what checkpoints are for: the
// tampering a chain cannot see by itself.
func TestVerifyHoldsTheChainToCheckpoints(t *testing.T) {
	const n = 8 // checkpoints at seq 3 and 6
	attacker := audit.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	tests := []struct {
		name    string
		tamper  func(t *testing.T, raw *sql.DB, rows []row)
		wantSeq int64 // 0: still intact
		reason  string
	}{
		{"untouched", func(*testing.T, *sql.DB, []row) {}, 0, ""},
		{"tail truncated after a checkpoint", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events WHERE seq > 4`)
		}, 5, "chain ends at seq 4 but the checkpoint signed at"},
		{"whole chain deleted", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events`)
		}, 1, "events were removed from the end"},
		{"tail rewritten and rehashed from before a checkpoint", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 5`)
			rehash(t, raw, 5, rows[3].Hash)
		}, 6, "rewritten and rehashed from a seq between 4 and 6"},
		{"tail rewritten after the newest checkpoint is beyond them (section 8)", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 7`)
			rehash(t, raw, 7, rows[5].Hash)
		}, 0, ""},
		{"checkpoint signature forged", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_checkpoints SET signature = ? WHERE seq = 3`,
				base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 64)))
		}, 3, "signature does not verify"},
		{"checkpoint moved to another seq", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_checkpoints SET seq = 2, hash = ? WHERE seq = 3`, rows[1].Hash)
		}, 2, "signature does not verify"},
		{"rewrite re-signed with another key", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 2`)
			rehash(t, raw, 2, rows[0].Hash)
			resign(t, raw, attacker, attacker.PublicKeyText())
		}, 3, "signed by \"" + attacker.PublicKeyText() + "\", not by the installation's key"},
		{"rewrite re-signed with another key under the installation's name", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'initech' WHERE seq = 2`)
			rehash(t, raw, 2, rows[0].Hash)
			resign(t, raw, attacker, "")
		}, 3, "signature does not verify"},
		{"signature in non-canonical base64", func(t *testing.T, raw *sql.DB, _ []row) {
			// The last character before "==" carries 4 unused bits.
			mustExec(t, raw, `UPDATE audit_checkpoints SET signature = substr(signature, 1, 85) ||
				char(unicode(substr(signature, 86, 1)) + 1) || '==' WHERE seq = 6`)
		}, 6, "not the standard base64"},
		{"checkpoint signature stored as a BLOB", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_checkpoints SET signature = CAST(signature AS BLOB) WHERE seq = 3`)
		}, 3, "signature not stored as TEXT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			s := signerFor(t, db)
			appendEvents(t, db, 3)
			checkpoint(t, db, s, time.Now())
			appendEvents(t, db, 3)
			checkpoint(t, db, s, time.Now())
			appendEvents(t, db, n-6)
			raw := tamperer(t, db)
			tt.tamper(t, raw, readRows(t, raw))

			head, err := audit.Verify(ctx, db.Read(), &audit.Trust{Key: s.PublicKey()})
			if tt.wantSeq == 0 {
				if err != nil {
					t.Fatalf("Verify = %v, want intact", err)
				}
				return
			}
			var ce *audit.ChainError
			if !errors.As(err, &ce) || ce.Seq != tt.wantSeq || !strings.Contains(ce.Reason, tt.reason) {
				t.Fatalf("Verify = %v, want a ChainError at seq %d saying %q", err, tt.wantSeq, tt.reason)
			}
			if head.Seq >= tt.wantSeq {
				t.Errorf("Verify head = %v, want one before seq %d", head, tt.wantSeq)
			}
		})
	}
}

// resign replaces every checkpoint with one signed by s over the current
// chain, its key column set to keyText ("" keeps the stored one).
func resign(t *testing.T, raw *sql.DB, s *audit.Signer, keyText string) {
	t.Helper()
	rows := readRows(t, raw)
	for _, cp := range readCheckpointRows(t, raw) {
		h := rows[cp.Seq-1].Hash
		msg := "warden-audit-checkpoint/v1\n" + strconv.FormatInt(cp.Seq, 10) + "\n" + h + "\n" + cp.Time
		key := cp.Key
		if keyText != "" {
			key = keyText
		}
		mustExec(t, raw, `UPDATE audit_checkpoints SET hash = ?, signature = ?, key = ? WHERE seq = ?`,
			h, base64.StdEncoding.EncodeToString(s.Sign([]byte(msg))), key, cp.Seq)
	}
}

func TestVerifyNeedsTheKeyWhenThereAreCheckpoints(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	appendEvents(t, db, 2)
	if _, err := audit.Verify(ctx, db.Read(), nil); err != nil {
		t.Fatalf("Verify without checkpoints and without a key = %v, want intact", err)
	}
	checkpoint(t, db, signerFor(t, db), time.Now())
	if _, err := audit.Verify(ctx, db.Read(), nil); !errors.Is(err, audit.ErrNoPublicKey) {
		t.Errorf("Verify(nil) with checkpoints = %v, want ErrNoPublicKey", err)
	}
	if _, err := audit.Verify(ctx, db.Read(), &audit.Trust{Head: &audit.Head{Seq: 0, Hash: audit.GenesisHash}}); !errors.Is(err, audit.ErrNoPublicKey) {
		t.Errorf("Verify(head only) with checkpoints = %v, want ErrNoPublicKey", err)
	}
	key, err := audit.InstallationKey(db)
	if err != nil || key == nil {
		t.Fatalf("InstallationKey = %v, %v", key, err)
	}
	if _, err := audit.Verify(ctx, db.Read(), &audit.Trust{Key: key}); err != nil {
		t.Errorf("Verify with the installation's key = %v", err)
	}

	// No key file: no key, and no error.
	bare := openDB(t)
	if key, err := audit.InstallationKey(bare); key != nil || err != nil {
		t.Errorf("InstallationKey without a key file = %v, %v; want nil, nil", key, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(bare.Path()), "audit-signing.key")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("InstallationKey created a key file: %v", err)
	}
}

func TestRecordVerificationRecordsTheHead(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	events := appendEvents(t, db, 3)
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: "p1"}
	head := audit.Head{Seq: 3, Hash: events[2].Hash}
	if err := audit.RecordVerification(ctx, db, actor, head, nil); err != nil {
		t.Fatal(err)
	}
	broken := &audit.ChainError{Seq: 3, Reason: "hash does not match"}
	if err := audit.RecordVerification(ctx, db, actor, audit.Head{Seq: 2, Hash: events[1].Hash}, fmt.Errorf("wrapped: %w", broken)); err != nil {
		t.Fatal(err)
	}
	if err := audit.RecordVerification(ctx, db, actor, audit.Head{}, errors.New("disk on fire")); err == nil {
		t.Error("RecordVerification recorded an error that is no verdict")
	}
	rows := readRows(t, db.Read())
	if len(rows) != 5 {
		t.Fatalf("%d events, want 5", len(rows))
	}
	wantOK := `{"verified_through_hash":"` + events[2].Hash + `","verified_through_seq":3}`
	if r := rows[3]; r.Verb != "audit.verify_ok" || r.Details != wantOK || r.ActorID != "p1" || r.SubjectType != "audit_chain" || r.SubjectID != "main" {
		t.Errorf("verify_ok event = %+v, want details %s", r, wantOK)
	}
	wantFailed := `{"first_bad_seq":3,"reason":"hash does not match","verified_through_hash":"` + events[1].Hash + `","verified_through_seq":2}`
	if r := rows[4]; r.Verb != "audit.verify_failed" || r.Details != wantFailed {
		t.Errorf("verify_failed event = %+v, want details %s", r, wantFailed)
	}
}

package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

func testSealer(t *testing.T) *seal.Sealer {
	t.Helper()
	s, err := seal.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// callbackFixture is a database with tenant acme and one key.
func callbackFixture(t *testing.T, sealer *seal.Sealer) (*store.DB, Key, Secrets) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	var k Key
	var secrets Secrets
	err := db.Transact(ctx, func(tx *store.Tx) error {
		tenant, err := tenants.Insert(ctx, tx, "acme", "Acme")
		if err != nil {
			return err
		}
		k, secrets, err = Create(ctx, tx, sealer, NewSpec{TenantID: tenant.ID, Name: "refund-bot-7f3a", Scopes: []string{"tool:b"}, RatePerMin: 60, Burst: 5, CreatedBy: "t"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, k, secrets
}

func TestCreateGivesASealedCallbackSecret(t *testing.T) {
	ctx := context.Background()
	sealer := testSealer(t)
	db, k, secrets := callbackFixture(t, sealer)

	if !regexp.MustCompile(`^whsec_[a-km-np-z2-9]{40}$`).MatchString(secrets.Callback) {
		t.Fatalf("callback secret = %q, want whsec_ and 40 characters", secrets.Callback)
	}
	if !k.HasCallbackSecret || k.CallbackSecretSetAt == nil || k.PreviousCallbackUntil != nil {
		t.Errorf("created key = %+v, want a callback secret set now and no previous one", k)
	}
	got, err := CallbackSecrets(ctx, db.Read(), sealer, k.ID, time.Now())
	if err != nil || !slices.Equal(got, []string{secrets.Callback}) {
		t.Fatalf("CallbackSecrets = %q, %v; want the secret shown at creation", got, err)
	}
	loaded, err := ByID(ctx, db.Read(), k.ID)
	if err != nil || !loaded.HasCallbackSecret || loaded.CallbackSecretSetAt == nil {
		t.Errorf("ByID = %+v, %v; want HasCallbackSecret and its time", loaded, err)
	}
	// Another installation's key, or the sealed value moved to another
	// key, opens nothing.
	other, _ := seal.New(bytes.Repeat([]byte{1}, 32))
	if _, err := CallbackSecrets(ctx, db.Read(), other, k.ID, time.Now()); err == nil {
		t.Error("another installation's key opened the callback secret")
	}
	if _, err := CallbackSecrets(ctx, db.Read(), sealer, "nope", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CallbackSecrets(unknown key) = %v, want ErrNotFound", err)
	}

	// The database holds neither secret in the clear. The key's name is
	// found, so the search reads the right bytes.
	raw := databaseBytes(t, db)
	if !bytes.Contains(raw, []byte("refund-bot-7f3a")) {
		t.Fatal("the key's name is not in the database file: the search reads the wrong bytes")
	}
	for name, secret := range map[string]string{"callback secret": secrets.Callback, "key": secrets.Key} {
		body := secret[strings.IndexByte(secret, '_')+1:]
		if bytes.Contains(raw, []byte(body)) {
			t.Errorf("the database file contains the %s in the clear", name)
		}
	}
}

// databaseBytes is everything db holds: on SQLite the bytes of its files
// (closing it), on PostgreSQL every value of every table in its schema.
func databaseBytes(t *testing.T, db *store.DB) []byte {
	t.Helper()
	var raw []byte
	if !storetest.Postgres() {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			b, err := os.ReadFile(db.Path() + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			raw = append(raw, b...)
		}
		return raw
	}
	ctx := context.Background()
	rows, err := db.Read().QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("no tables in the test's schema")
	}
	for _, table := range tables {
		rows, err := db.Read().QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					raw = append(raw, b...)
				} else {
					raw = fmt.Appendf(raw, "%v", v)
				}
				raw = append(raw, 0)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return raw
}

func TestRotateCallbackSecretKeepsThePreviousForTheGracePeriod(t *testing.T) {
	ctx := context.Background()
	sealer := testSealer(t)
	db, k, secrets := callbackFixture(t, sealer)
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: "p-erin"}
	t0 := time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

	rotated, fresh, err := RotateCallbackSecret(ctx, db, sealer, k.ID, actor, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fresh, "whsec_") || fresh == secrets.Callback {
		t.Fatalf("rotated secret = %q, want a new whsec_ secret", fresh)
	}
	if rotated.CallbackSecretSetAt == nil || !rotated.CallbackSecretSetAt.Equal(t0) ||
		rotated.PreviousCallbackUntil == nil || !rotated.PreviousCallbackUntil.Equal(t0.Add(CallbackGrace)) {
		t.Errorf("rotated key = set %v, previous until %v; want %v and %v", rotated.CallbackSecretSetAt, rotated.PreviousCallbackUntil, t0, t0.Add(CallbackGrace))
	}
	tests := []struct {
		at   time.Time
		want []string
	}{
		{t0, []string{fresh, secrets.Callback}},
		{t0.Add(CallbackGrace - time.Second), []string{fresh, secrets.Callback}},
		{t0.Add(CallbackGrace), []string{fresh}},
		{t0.Add(30 * 24 * time.Hour), []string{fresh}},
	}
	for _, tt := range tests {
		got, err := CallbackSecrets(ctx, db.Read(), sealer, k.ID, tt.at)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("CallbackSecrets(t0+%v) = %d secrets, %v; want %d (new first)", tt.at.Sub(t0), len(got), err, len(tt.want))
		}
		if got, want := rotated.PreviousCallbackValid(tt.at), len(tt.want) == 2; got != want {
			t.Errorf("PreviousCallbackValid(t0+%v) = %v, want %v", tt.at.Sub(t0), got, want)
		}
	}

	evs, err := audit.List(ctx, db.Read(), audit.Filter{Limit: 1})
	if err != nil || len(evs) != 1 {
		t.Fatalf("audit = %v, %v", evs, err)
	}
	ev := evs[0]
	raw, _ := json.Marshal(ev)
	if ev.Verb != "key.callback_secret_rotated" || ev.Actor != actor || ev.Tenant != "acme" || ev.Subject.ID != k.ID ||
		ev.Details["prefix"] != k.Prefix || ev.Details["previous_valid_until"] != store.FormatTime(t0.Add(CallbackGrace)) {
		t.Errorf("audit event = %s", raw)
	}
	for _, secret := range []string{fresh, secrets.Callback} {
		if strings.Contains(string(raw), strings.TrimPrefix(secret, "whsec_")) {
			t.Errorf("the audit event carries a callback secret: %s", raw)
		}
	}

	// Rotating again within the grace period keeps only the secret it
	// replaces: the first one stops signing at once.
	t1 := t0.Add(time.Hour)
	_, third, err := RotateCallbackSecret(ctx, db, sealer, k.ID, actor, t1)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := CallbackSecrets(ctx, db.Read(), sealer, k.ID, t1); !slices.Equal(got, []string{third, fresh}) {
		t.Errorf("after a second rotation, %d secrets sign; want the new one and the one it replaced", len(got))
	}

	if _, _, err := RotateCallbackSecret(ctx, db, sealer, "nope", actor, t1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rotating an unknown key = %v, want ErrNotFound", err)
	}
}

// A key created before callback secrets existed has none: nothing signs
// its callbacks until a rotation gives it one, with no grace for nothing.
func TestKeyWithoutCallbackSecret(t *testing.T) {
	ctx := context.Background()
	sealer := testSealer(t)
	db, k, _ := callbackFixture(t, sealer)
	if _, err := db.Read().Exec(`UPDATE virtual_keys SET callback_secret_sealed = NULL, callback_secret_set_at = NULL WHERE id = ?`, k.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := ByID(ctx, db.Read(), k.ID); got.HasCallbackSecret || got.CallbackSecretSetAt != nil {
		t.Errorf("legacy key = %+v, want no callback secret", got)
	}
	if _, err := CallbackSecrets(ctx, db.Read(), sealer, k.ID, time.Now()); !errors.Is(err, ErrNoCallbackSecret) {
		t.Fatalf("CallbackSecrets(legacy key) = %v, want ErrNoCallbackSecret", err)
	}
	now := time.Now()
	rotated, fresh, err := RotateCallbackSecret(ctx, db, sealer, k.ID, audit.Actor{Type: audit.ActorPrincipal, ID: "p-erin"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !rotated.HasCallbackSecret || rotated.PreviousCallbackUntil != nil {
		t.Errorf("after the first rotation = %+v, want a secret and no previous one", rotated)
	}
	if got, err := CallbackSecrets(ctx, db.Read(), sealer, k.ID, now); err != nil || !slices.Equal(got, []string{fresh}) {
		t.Errorf("CallbackSecrets = %d secrets, %v; want the generated one alone", len(got), err)
	}
}

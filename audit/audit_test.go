package audit_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/audit"
)

func TestAppendChainsCommittedEvents(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	got := appendEvents(t, db, 3)
	// Several events in one transaction chain as well.
	err := db.Transact(ctx, func(tx *store.Tx) error {
		for i := 3; i < 5; i++ {
			ev, err := audit.Append(ctx, tx, sampleEvent(i))
			if err != nil {
				return err
			}
			got = append(got, ev)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("append in one transaction: %v", err)
	}

	prev := audit.GenesisHash
	for i, ev := range got {
		if ev.Seq != int64(i+1) {
			t.Errorf("event %d: Seq = %d, want %d", i, ev.Seq, i+1)
		}
		if ev.PrevHash != prev {
			t.Errorf("event %d: PrevHash = %s, want %s", ev.Seq, ev.PrevHash, prev)
		}
		if h, err := audit.Hash(ev); err != nil || ev.Hash != h {
			t.Errorf("event %d: Hash = %s, want audit.Hash = %s (err %v)", ev.Seq, ev.Hash, h, err)
		}
		if ev.Time.IsZero() || ev.Time.Location() != time.UTC || time.Since(ev.Time) > time.Minute {
			t.Errorf("event %d: Time = %v, want now in UTC", ev.Seq, ev.Time)
		}
		want := sampleEvent(i)
		if ev.Actor != want.Actor || ev.Tenant != want.Tenant || ev.Verb != want.Verb || ev.Subject != want.Subject {
			t.Errorf("event %d = %+v, want fields of %+v", ev.Seq, ev, want)
		}
		if ev.Details["n"] != json.Number(fmt.Sprint(i)) || ev.Details["method"] != "oidc" {
			t.Errorf("event %d: Details = %v, want n=%d method=oidc", ev.Seq, ev.Details, i)
		}
		prev = ev.Hash
	}

	listed, err := audit.List(ctx, db.Read(), audit.Filter{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for i, ev := range listed {
		if want := got[len(got)-1-i]; !reflect.DeepEqual(ev, want) {
			t.Errorf("List()[%d] = %+v, want what Append returned: %+v", i, ev, want)
		}
	}
	if len(listed) != len(got) {
		t.Errorf("List() returned %d events, want %d", len(listed), len(got))
	}
	head, err := audit.Verify(ctx, db.Read(), nil)
	if want := (audit.Head{Seq: 5, Hash: got[4].Hash}); err != nil || head != want {
		t.Errorf("Verify() = %v, %v; want %v, nil", head, err, want)
	}
}

func TestAppendRolledBackLeavesNoEvent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	boom := errors.New("the change failed")
	err := db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := audit.Append(ctx, tx, sampleEvent(0)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Transact = %v, want %v", err, boom)
	}
	if n, err := audit.Count(ctx, db.Read()); err != nil || n != 0 {
		t.Errorf("Count after rollback = %d, %v; want 0", n, err)
	}
	// The next event is the first of the chain, not the second.
	got := appendEvents(t, db, 1)
	if got[0].Seq != 1 || got[0].PrevHash != audit.GenesisHash {
		t.Errorf("first committed event: Seq %d PrevHash %s, want 1 and genesis", got[0].Seq, got[0].PrevHash)
	}
}

func TestAppendKeepsGivenTimeInUTC(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	when := time.Date(2025, 6, 1, 15, 0, 0, 7, zone)
	ev := sampleEvent(0)
	ev.Time = when
	var got audit.Event
	err := db.Transact(ctx, func(tx *store.Tx) (err error) {
		got, err = audit.Append(ctx, tx, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Time.Equal(when) || got.Time.Location() != time.UTC {
		t.Errorf("Time = %v, want %v in UTC", got.Time, when)
	}
	if r := readRows(t, db.Read()); r[0].Time != "2025-06-01T09:30:00.000000007Z" {
		t.Errorf("stored time = %q, want %q", r[0].Time, "2025-06-01T09:30:00.000000007Z")
	}
}

func TestAppendKeepsTimesInOrder(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	base := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		given time.Time
		want  string
	}{
		{base, "2025-06-01T09:00:00.000000000Z"},
		{base.Add(time.Second), "2025-06-01T09:00:01.000000000Z"},
		{base.Add(-time.Hour), "2025-06-01T09:00:01.000000000Z"}, // the clock stepped back
		{base.Add(time.Second), "2025-06-01T09:00:01.000000000Z"},
		{base.Add(2 * time.Second), "2025-06-01T09:00:02.000000000Z"},
	}
	for i, tt := range tests {
		ev := sampleEvent(i)
		ev.Time = tt.given
		var got audit.Event
		err := db.Transact(ctx, func(tx *store.Tx) (err error) {
			got, err = audit.Append(ctx, tx, ev)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if stored := readRows(t, db.Read())[i].Time; stored != tt.want || got.Time.Format(audit.TimeFormat) != tt.want {
			t.Errorf("event %d given %v: stored time %s, returned %v; want %s", i+1, tt.given, stored, got.Time, tt.want)
		}
		if h, err := audit.Hash(got); err != nil || h != got.Hash {
			t.Errorf("event %d: returned event hashes to %s, %v; want %s", i+1, h, err, got.Hash)
		}
	}
	if _, err := audit.Verify(ctx, db.Read(), nil); err != nil {
		t.Errorf("Verify = %v", err)
	}
}

func TestAppendStoresCanonicalDetails(t *testing.T) {
	type order struct {
		Zeta  string
		Alpha int
	}
	tests := []struct {
		name    string
		details map[string]any
		want    string
	}{
		{"nil", nil, `{}`},
		{"empty", map[string]any{}, `{}`},
		{"keys sorted at every level", map[string]any{"b": 1, "a": map[string]any{"y": true, "x": nil}}, `{"a":{"x":null,"y":true},"b":1}`},
		{"struct fields sorted too", map[string]any{"o": order{Zeta: "z", Alpha: 1}}, `{"o":{"Alpha":1,"Zeta":"z"}}`},
		{"integer keys sorted as text", map[string]any{"m": map[int]string{10: "a", 9: "b"}}, `{"m":{"10":"a","9":"b"}}`},
		{"large integer keeps its digits", map[string]any{"n": int64(math.MaxInt64)}, `{"n":9223372036854775807}`},
		{"floats in shortest form", map[string]any{"f": 0.1, "g": 1e21, "h": 1e-7, "i": 100.0, "j": 1e20}, `{"f":0.1,"g":1e+21,"h":1e-7,"i":100,"j":100000000000000000000}`},
		{"number literals normalised", map[string]any{"n": []any{json.Number("1.0"), json.Number("1E5"), json.Number("2.50"),
			json.Number("1e-07"), json.Number("-0"), json.Number("-0.0"), json.Number("0.1e1"), json.Number("1E+21")}},
			`{"n":[1,100000,2.5,1e-7,0,0,1,1e+21]}`},
		{"integer literals keep every digit", map[string]any{"n": json.Number("123456789012345678901234567890"), "m": json.Number("-7")},
			`{"m":-7,"n":123456789012345678901234567890}`},
		{"raw JSON normalised too", map[string]any{"r": json.RawMessage(`{"b":1.50,"a":1E2}`)}, `{"r":{"a":100,"b":1.5}}`},
		{"nested to the limit", map[string]any{"a": nestArrays(audit.MaxDetailsDepth - 1)},
			`{"a":` + strings.Repeat("[", audit.MaxDetailsDepth-1) + strings.Repeat("]", audit.MaxDetailsDepth-1) + `}`},
		{"no HTML escaping", map[string]any{"s": "<b>&</b>"}, `{"s":"<b>&</b>"}`},
		{"unicode as UTF-8", map[string]any{"s": "Zürich ☕ 𝄞"}, `{"s":"Zürich ☕ 𝄞"}`},
		{"control characters and line separators escaped", map[string]any{"s": "a\nb\u2028"}, `{"s":"a\nb\u2028"}`},
		{"invalid UTF-8 replaced", map[string]any{"s": "\xff"}, `{"s":"` + "\ufffd" + `"}`},
		{"nested arrays", map[string]any{"a": []any{1, "x", []string{"y"}, map[string]int{"k": 2}}}, `{"a":[1,"x",["y"],{"k":2}]}`},
	}
	ctx := context.Background()
	db := openDB(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := sampleEvent(0)
			ev.Details = tt.details
			var got audit.Event
			err := db.Transact(ctx, func(tx *store.Tx) (err error) {
				got, err = audit.Append(ctx, tx, ev)
				return err
			})
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			if stored := readRows(t, db.Read())[i].Details; stored != tt.want {
				t.Errorf("stored details = %s, want %s", stored, tt.want)
			}
			// What Append returns encodes to the stored text again.
			if h, err := audit.Hash(got); err != nil || h != got.Hash {
				t.Errorf("Hash(returned event) = %s, %v; want %s", h, err, got.Hash)
			}
		})
	}
	if _, err := audit.Verify(ctx, db.Read(), nil); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestAppendRejectsBadEvents(t *testing.T) {
	ok := sampleEvent(0)
	tests := []struct {
		name   string
		change func(*audit.Event)
		want   string
	}{
		{"no actor type", func(e *audit.Event) { e.Actor.Type = "" }, "actor type"},
		{"actor type upper case", func(e *audit.Event) { e.Actor.Type = "Principal" }, "actor type"},
		{"no verb", func(e *audit.Event) { e.Verb = "" }, "verb"},
		{"verb upper case", func(e *audit.Event) { e.Verb = "Auth.Login" }, "verb"},
		{"verb empty segment", func(e *audit.Event) { e.Verb = "auth..login" }, "verb"},
		{"verb too long", func(e *audit.Event) { e.Verb = "a." + strings.Repeat("b", 130) }, "verb"},
		{"subject type with space", func(e *audit.Event) { e.Subject.Type = "a b" }, "subject type"},
		{"subject id without type", func(e *audit.Event) { e.Subject = audit.Subject{ID: "x"} }, "no subject type"},
		{"newline in actor id", func(e *audit.Event) { e.Actor.ID = "p1\nseq 9 ok" }, "actor id: control character"},
		{"invalid UTF-8 in tenant", func(e *audit.Event) { e.Tenant = "ac\xffme" }, "tenant: not valid UTF-8"},
		{"tenant too long", func(e *audit.Event) { e.Tenant = strings.Repeat("t", audit.MaxFieldBytes+1) }, "tenant: 513 bytes"},
		{"NaN in details", func(e *audit.Event) { e.Details = map[string]any{"x": math.NaN()} }, "encode details"},
		{"channel in details", func(e *audit.Event) { e.Details = map[string]any{"x": make(chan int)} }, "encode details"},
		{"details too large", func(e *audit.Event) {
			e.Details = map[string]any{"x": strings.Repeat("a", audit.MaxDetailsBytes)}
		}, "details are 65544 bytes"},
		{"number beyond float64", func(e *audit.Event) { e.Details = map[string]any{"x": json.Number("1e400")} }, "beyond the range"},
		{"nested too deep", func(e *audit.Event) { e.Details = map[string]any{"x": nestArrays(audit.MaxDetailsDepth)} }, "nested more than 32 levels"},
		{"time after year 9999", func(e *audit.Event) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "outside years"},
	}
	ctx := context.Background()
	db := openDB(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := ok
			tt.change(&ev)
			err := db.Transact(ctx, func(tx *store.Tx) error {
				_, err := audit.Append(ctx, tx, ev)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Append(%s) = %v, want an error containing %q", tt.name, err, tt.want)
			}
			if n, err := audit.Count(ctx, db.Read()); err != nil || n != 0 {
				t.Errorf("Count after rejected event = %d, %v; want 0", n, err)
			}
		})
	}
}

func TestTriggersRefuseUpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	before := appendEvents(t, db, 2)
	for _, stmt := range []string{
		`UPDATE audit_events SET verb = 'auth.logout' WHERE seq = 1`,
		`UPDATE audit_events SET hash = prev_hash`,
		`DELETE FROM audit_events WHERE seq = 2`,
		`DELETE FROM audit_events`,
	} {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, stmt)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only refusal", stmt, err)
		}
	}
	after, err := audit.List(ctx, db.Read(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || !reflect.DeepEqual(after[0], before[1]) || !reflect.DeepEqual(after[1], before[0]) {
		t.Errorf("events after refused changes = %+v, want unchanged %+v", after, before)
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	const n = 5
	tests := []struct {
		name    string
		tamper  func(t *testing.T, raw *sql.DB, rows []row)
		head    bool // verify against the head recorded before tampering
		wantSeq int64
	}{
		{"time edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET time = '2030-01-01T00:00:00.000000000Z' WHERE seq = 3`)
		}, false, 3},
		{"actor type edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET actor_type = 'system' WHERE seq = 3`)
		}, false, 3},
		{"actor id edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET actor_id = 'someone-else' WHERE seq = 3`)
		}, false, 3},
		{"tenant edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'globex' WHERE seq = 3`)
		}, false, 3},
		{"verb edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET verb = 'auth.login_failed' WHERE seq = 3`)
		}, false, 3},
		{"subject type edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET subject_type = 'key' WHERE seq = 3`)
		}, false, 3},
		{"subject id edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET subject_id = 'x' WHERE seq = 3`)
		}, false, 3},
		{"details edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET details = replace(details, 'oidc', 'saml') WHERE seq = 3`)
		}, false, 3},
		{"prev_hash edited", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET prev_hash = ? WHERE seq = 3`, rows[0].Hash)
		}, false, 3},
		{"hash edited", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET hash = ? WHERE seq = 3`, strings.ToUpper(rows[2].Hash))
		}, false, 3},
		{"seq edited", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET seq = 9 WHERE seq = 3`)
		}, false, 3},
		{"edited and rehashed", func(t *testing.T, raw *sql.DB, rows []row) {
			r := rows[2]
			r.Tenant = "globex"
			mustExec(t, raw, `UPDATE audit_events SET tenant = ?, hash = ? WHERE seq = 3`, r.Tenant, docHash(r))
		}, false, 4},
		{"edited and the rest of the chain rewritten, caught by the trusted head", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET tenant = 'globex' WHERE seq = 3`)
			rehash(t, raw, 3, rows[1].Hash)
		}, true, 5},
		{"details rewritten in non-canonical form with matching hashes", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET details = replace(details, ',', ', ') WHERE seq = 3`)
			rehash(t, raw, 3, rows[1].Hash)
		}, false, 3},
		{"time rewritten in non-canonical form with matching hashes", func(t *testing.T, raw *sql.DB, rows []row) {
			mustExec(t, raw, `UPDATE audit_events SET time = replace(time, 'Z', '+00:00') WHERE seq = 3`)
			rehash(t, raw, 3, rows[1].Hash)
		}, false, 3},
		{"middle row deleted", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events WHERE seq = 3`)
		}, false, 3},
		{"first row deleted", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events WHERE seq = 1`)
		}, false, 1},
		{"forged row inserted with a consistent hash, later rows renumbered", func(t *testing.T, raw *sql.DB, rows []row) {
			for seq := n; seq >= 3; seq-- {
				mustExec(t, raw, `UPDATE audit_events SET seq = seq + 1 WHERE seq = ?`, seq)
			}
			forged := rows[2]
			forged.Verb, forged.Details = "tenant.create", `{"forged":true}`
			forged.Hash = docHash(forged)
			insertRow(t, raw, forged)
		}, false, 4},
		{"forged row appended over a wrong prev_hash", func(t *testing.T, raw *sql.DB, rows []row) {
			forged := rows[n-1]
			forged.Seq, forged.PrevHash = n+1, rows[n-2].Hash
			forged.Hash = docHash(forged)
			insertRow(t, raw, forged)
		}, false, n + 1},
		{"rows swapped", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `UPDATE audit_events SET seq = 100 WHERE seq = 2`)
			mustExec(t, raw, `UPDATE audit_events SET seq = 2 WHERE seq = 4`)
			mustExec(t, raw, `UPDATE audit_events SET seq = 4 WHERE seq = 100`)
		}, false, 2},
		{"first row's prev_hash not genesis, chain otherwise consistent", func(t *testing.T, raw *sql.DB, _ []row) {
			rehash(t, raw, 1, strings.Repeat("ab", 32))
		}, false, 1},
		{"tail truncated, caught by the trusted head", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events WHERE seq > 3`)
		}, true, 4},
		{"whole chain deleted, caught by the trusted head", func(t *testing.T, raw *sql.DB, _ []row) {
			mustExec(t, raw, `DELETE FROM audit_events`)
		}, true, 1},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			events := appendEvents(t, db, n)
			head, err := audit.Verify(ctx, db.Read(), nil)
			if err != nil {
				t.Fatalf("Verify before tampering: %v", err)
			}
			if want := (audit.Head{Seq: n, Hash: events[n-1].Hash}); head != want {
				t.Fatalf("Verify before tampering = %v, want head %v", head, want)
			}
			raw := tamperer(t, db)
			tt.tamper(t, raw, readRows(t, raw))

			trust := &audit.Trust{}
			if tt.head {
				trust.Head = &head
			}
			got, err := audit.Verify(ctx, db.Read(), trust)
			var ce *audit.ChainError
			if !errors.As(err, &ce) || ce.Seq != tt.wantSeq {
				t.Fatalf("Verify after tampering = %v, want a ChainError at seq %d", err, tt.wantSeq)
			}
			// The head returned is the last event before the break.
			if tt.wantSeq > 1 && got.Seq != tt.wantSeq-1 {
				t.Errorf("Verify head = %v, want seq %d", got, tt.wantSeq-1)
			}
		})
	}
}

func TestVerifyWithTrustedHead(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	events := appendEvents(t, db, 3)
	tests := []struct {
		name    string
		want    audit.Head
		wantErr string
	}{
		{"at the end", audit.Head{Seq: 3, Hash: events[2].Hash}, ""},
		{"earlier: events appended since are fine", audit.Head{Seq: 2, Hash: events[1].Hash}, ""},
		{"empty chain", audit.Head{Seq: 0, Hash: audit.GenesisHash}, ""},
		{"hash differs", audit.Head{Seq: 2, Hash: events[2].Hash}, "broken at seq 2"},
		{"beyond the end", audit.Head{Seq: 4, Hash: events[2].Hash}, "broken at seq 4"},
		{"malformed hash", audit.Head{Seq: 2, Hash: "abc"}, "invalid trusted head"},
		{"negative seq", audit.Head{Seq: -1, Hash: audit.GenesisHash}, "invalid trusted head"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := audit.Verify(ctx, db.Read(), &audit.Trust{Head: &tt.want})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Verify(want %v) = %v, want error %q", tt.want, err, tt.wantErr)
			}
		})
	}
}

func TestAppendConcurrent(t *testing.T) {
	const n = 50
	ctx := context.Background()
	db := openDB(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- db.Transact(ctx, func(tx *store.Tx) error {
				_, err := audit.Append(ctx, tx, sampleEvent(i))
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Append: %v", err)
		}
	}
	rows := readRows(t, db.Read())
	for i, r := range rows {
		if r.Seq != int64(i+1) {
			t.Fatalf("row %d has seq %d, want %d", i, r.Seq, i+1)
		}
	}
	if len(rows) != n {
		t.Errorf("%d events, want %d", len(rows), n)
	}
	if head, err := audit.Verify(ctx, db.Read(), nil); err != nil || head.Seq != n {
		t.Errorf("Verify = %v, %v; want head at seq %d", head, err, n)
	}
}

func TestListAndCount(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	appendEvents(t, db, 12) // tenants cycle acme, globex, "": acme has seq 1, 4, 7, 10
	tests := []struct {
		name    string
		f       audit.Filter
		want    []int64
		wantErr bool
	}{
		{"default", audit.Filter{}, []int64{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, false},
		{"limit", audit.Filter{Limit: 5}, []int64{12, 11, 10, 9, 8}, false},
		{"before", audit.Filter{Before: 8, Limit: 5}, []int64{7, 6, 5, 4, 3}, false},
		{"offset", audit.Filter{Limit: 5, Offset: 10}, []int64{2, 1}, false},
		{"tenant", audit.Filter{Tenant: "acme"}, []int64{10, 7, 4, 1}, false},
		{"tenant before", audit.Filter{Tenant: "acme", Before: 7}, []int64{4, 1}, false},
		{"past the end", audit.Filter{Before: 1}, nil, false},
		{"negative limit", audit.Filter{Limit: -1}, nil, true},
		{"limit too large", audit.Filter{Limit: audit.MaxLimit + 1}, nil, true},
		{"negative offset", audit.Filter{Offset: -1}, nil, true},
		{"negative before", audit.Filter{Before: -1}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := audit.List(ctx, db.Read(), tt.f)
			if (err != nil) != tt.wantErr {
				t.Fatalf("List(%+v) error = %v, want error %v", tt.f, err, tt.wantErr)
			}
			var seqs []int64
			for _, ev := range events {
				seqs = append(seqs, ev.Seq)
				if tt.f.Tenant != "" && ev.Tenant != tt.f.Tenant {
					t.Errorf("List(%+v) returned seq %d of tenant %q", tt.f, ev.Seq, ev.Tenant)
				}
			}
			if !reflect.DeepEqual(seqs, tt.want) {
				t.Errorf("List(%+v) seqs = %v, want %v", tt.f, seqs, tt.want)
			}
		})
	}
	if n, err := audit.Count(ctx, db.Read()); err != nil || n != 12 {
		t.Errorf("Count = %d, %v; want 12", n, err)
	}
}

// nestArrays is n empty arrays, each inside the one before.
func nestArrays(n int) any {
	v := []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}

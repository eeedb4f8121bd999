package audit_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/wardenhq/warden/audit"
)

// The generators draw arbitrary Unicode for every text field: Hash must
// separate fields by length, not by any character a field could contain.
var (
	genText = rapid.OneOf(
		rapid.SampledFrom([]string{"", "acme", "principal", "auth.login", "tenant.create"}),
		rapid.StringN(0, 12, -1),
	)
	genHex  = rapid.StringMatching(`[0-9a-f]{64}`)
	genTime = rapid.Custom(func(t *rapid.T) time.Time {
		// Years 0000 to 9999, any nanosecond.
		sec := rapid.Int64Range(-62167219200, 253402300799).Draw(t, "sec")
		nsec := rapid.Int64Range(0, 999999999).Draw(t, "nsec")
		return time.Unix(sec, nsec).UTC()
	})
	genLeaf = rapid.OneOf(
		rapid.Just[any](nil),
		rapid.Bool().AsAny(),
		rapid.Int64().AsAny(),
		rapid.Float64().Filter(func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }).AsAny(),
		rapid.StringN(0, 12, -1).AsAny(),
	)
	genDetails = rapid.MapOfN(rapid.StringN(0, 8, -1), genValue(2), 0, 5)
)

// genValue draws a JSON value nested at most depth levels.
func genValue(depth int) *rapid.Generator[any] {
	if depth == 0 {
		return genLeaf
	}
	return rapid.OneOf(
		genLeaf,
		rapid.SliceOfN(genValue(depth-1), 0, 4).AsAny(),
		rapid.MapOfN(rapid.StringN(0, 8, -1), genValue(depth-1), 0, 4).AsAny(),
	)
}

var genEvent = rapid.Custom(func(t *rapid.T) audit.Event {
	return audit.Event{
		Time:    genTime.Draw(t, "time"),
		Actor:   audit.Actor{Type: genText.Draw(t, "actor type"), ID: genText.Draw(t, "actor id")},
		Tenant:  genText.Draw(t, "tenant"),
		Verb:    genText.Draw(t, "verb"),
		Subject: audit.Subject{Type: genText.Draw(t, "subject type"), ID: genText.Draw(t, "subject id")},
		Details: genDetails.Draw(t, "details"),
	}
})

// seal links events into a chain the way Append does, times in order.
func seal(t *rapid.T, events []audit.Event) []audit.Event {
	slices.SortStableFunc(events, func(a, b audit.Event) int { return a.Time.Compare(b.Time) })
	prev := audit.GenesisHash
	for i := range events {
		events[i].Seq = int64(i + 1)
		events[i].PrevHash = prev
		h, err := audit.Hash(events[i])
		if err != nil {
			t.Fatalf("Hash(event %d): %v", i+1, err)
		}
		events[i].Hash = h
		prev = h
	}
	return events
}

func TestVerifyEventsDetectsEveryMutation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		chain := seal(t, rapid.SliceOfN(genEvent, 1, 50).Draw(t, "events"))
		n := len(chain)
		head := audit.Head{Seq: int64(n), Hash: chain[n-1].Hash}
		if err := audit.VerifyEvents(chain, nil); err != nil {
			t.Fatalf("VerifyEvents(unmutated) = %v", err)
		}
		if err := audit.VerifyEvents(chain, &head); err != nil {
			t.Fatalf("VerifyEvents(unmutated, head) = %v", err)
		}

		mutations := []string{"edit", "insert", "truncate"}
		if n >= 2 {
			mutations = append(mutations, "delete", "swap")
		}
		events := slices.Clone(chain)
		var want *audit.Head // only truncation needs the trusted head
		var wantSeq int64
		switch m := rapid.SampledFrom(mutations).Draw(t, "mutation"); m {
		case "edit":
			i := rapid.IntRange(0, n-1).Draw(t, "index")
			events[i] = editField(t, events[i])
			wantSeq = int64(i + 1)
		case "delete":
			// Not the last event: losing that is truncation.
			i := rapid.IntRange(0, n-2).Draw(t, "index")
			events = slices.Delete(events, i, i+1)
			wantSeq = int64(i + 1)
		case "insert":
			p := rapid.IntRange(0, n).Draw(t, "position")
			forged := genEvent.Draw(t, "forged")
			forged.Seq = int64(p + 1)
			if !rapid.Bool().Draw(t, "seq of its position") {
				forged.Seq = rapid.Int64().Draw(t, "seq")
			}
			rightPrev := audit.GenesisHash
			if p > 0 {
				rightPrev = events[p-1].Hash
			}
			forged.PrevHash = rightPrev
			if rapid.Bool().Draw(t, "wrong prev") || (p == n && forged.Seq == int64(n+1)) {
				// At the end, seq n+1 over the right prev is a valid
				// new event, not a forgery a chain can detect.
				forged.PrevHash = genHex.Filter(func(h string) bool { return h != rightPrev }).Draw(t, "prev")
			}
			h, err := audit.Hash(forged)
			if err != nil {
				t.Fatalf("Hash(forged): %v", err)
			}
			forged.Hash = h
			events = slices.Insert(events, p, forged)
			wantSeq = int64(p + 1)
			if forged.Seq == int64(p+1) && forged.PrevHash == rightPrev && (p == 0 || !forged.Time.Before(events[p-1].Time)) {
				// The forgery fits its place; the event it displaced does not.
				wantSeq = int64(p + 2)
			}
		case "swap":
			i := rapid.IntRange(0, n-2).Draw(t, "i")
			j := rapid.IntRange(i+1, n-1).Draw(t, "j")
			events[i], events[j] = events[j], events[i]
			wantSeq = int64(i + 1)
		case "truncate":
			k := rapid.IntRange(0, n-1).Draw(t, "kept")
			events = events[:k]
			// What is left is a valid chain; only the head tells.
			if err := audit.VerifyEvents(events, nil); err != nil {
				t.Fatalf("VerifyEvents(prefix of %d) = %v, want nil", k, err)
			}
			want = &head
			wantSeq = int64(k + 1)
		default:
			t.Fatalf("unknown mutation %q", m)
		}

		err := audit.VerifyEvents(events, want)
		var ce *audit.ChainError
		if !errors.As(err, &ce) || ce.Seq != wantSeq {
			t.Fatalf("VerifyEvents(mutated) = %v, want a ChainError at seq %d", err, wantSeq)
		}
	})
}

// editField changes one field of ev to a different value.
func editField(t *rapid.T, ev audit.Event) audit.Event {
	other := func(old string) string {
		return genText.Filter(func(s string) bool { return s != old }).Draw(t, "new value")
	}
	otherHex := func(old string) string {
		return genHex.Filter(func(s string) bool { return s != old }).Draw(t, "new hash")
	}
	switch f := rapid.SampledFrom([]string{"seq", "time", "actor type", "actor id", "tenant", "verb",
		"subject type", "subject id", "details", "prev hash", "hash"}).Draw(t, "field"); f {
	case "seq":
		ev.Seq = rapid.Int64().Filter(func(s int64) bool { return s != ev.Seq }).Draw(t, "new seq")
	case "time":
		ev.Time = genTime.Filter(func(tm time.Time) bool { return !tm.Equal(ev.Time) }).Draw(t, "new time")
	case "actor type":
		ev.Actor.Type = other(ev.Actor.Type)
	case "actor id":
		ev.Actor.ID = other(ev.Actor.ID)
	case "tenant":
		ev.Tenant = other(ev.Tenant)
	case "verb":
		ev.Verb = other(ev.Verb)
	case "subject type":
		ev.Subject.Type = other(ev.Subject.Type)
	case "subject id":
		ev.Subject.ID = other(ev.Subject.ID)
	case "details":
		before, _ := json.Marshal(ev.Details)
		ev.Details = mutateValue(t, deepCopy(ev.Details)).(map[string]any)
		after, _ := json.Marshal(ev.Details)
		if string(before) == string(after) {
			t.Fatalf("mutateValue left details unchanged: %s", before)
		}
	case "prev hash":
		ev.PrevHash = otherHex(ev.PrevHash)
	case "hash":
		ev.Hash = otherHex(ev.Hash)
	default:
		t.Fatalf("unknown field %q", f)
	}
	return ev
}

// mutateValue changes v somewhere, possibly deep inside, so that its JSON
// differs.
func mutateValue(t *rapid.T, v any) any {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range v {
				if !yield(k) {
					return
				}
			}
		})
		if len(keys) > 0 && rapid.Bool().Draw(t, "into map") {
			k := rapid.SampledFrom(keys).Draw(t, "key")
			v[k] = mutateValue(t, v[k])
			return v
		}
		k := rapid.StringN(0, 8, -1).Filter(func(k string) bool { _, ok := v[k]; return !ok }).Draw(t, "new key")
		v[k] = genValue(1).Draw(t, "new value")
		return v
	case []any:
		if len(v) > 0 && rapid.Bool().Draw(t, "into slice") {
			i := rapid.IntRange(0, len(v)-1).Draw(t, "element")
			v[i] = mutateValue(t, v[i])
			return v
		}
		return append(v, genValue(1).Draw(t, "new element"))
	case string:
		return v + "·"
	default: // nil, bool, number
		return "tampered"
	}
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

package changes

import (
	"encoding/json"
	"testing"
)

// TestMovedTo: the out-of-date sentence names the object and says, in the
// diff's words, what it was and what it is now, only for what moved.
func TestMovedTo(t *testing.T) {
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	tests := []struct {
		name        string
		kind        string
		before, now any
		want        Moved
		sentence    string
	}{
		{"threshold lowered", DualControl,
			Threshold{Currency: "USD", Set: true, Minor: 100000, Shown: "$1,000.00"}, Threshold{Currency: "USD", Set: true, Minor: 50000, Shown: "$500.00"},
			Moved{Kind: DualControl, Was: "threshold (two approvers from): $1,000.00", Now: "threshold (two approvers from): $500.00"},
			"This dual-control threshold changed since the change was asked: it was threshold (two approvers from): $1,000.00 and is now threshold (two approvers from): $500.00. Reject this change and ask again."},
		{"two fields of a key", KeyRequestRate, KeyRequestRateValue{PerMinute: 600, Burst: 60}, KeyRequestRateValue{PerMinute: 300, Burst: 30},
			Moved{Kind: KeyRequestRate, Was: "burst: 60; requests a minute: 600", Now: "burst: 30; requests a minute: 300"},
			"This key changed since the change was asked: it was burst: 60; requests a minute: 600 and is now burst: 30; requests a minute: 300. Reject this change and ask again."},
		{"an owner set where none was", OwnerChange, Owner{Object: "tool", Key: "issue_refund"}, Owner{Object: "tool", Key: "issue_refund", Owner: "ana@example.com"},
			Moved{Kind: OwnerChange, Was: "owner: none", Now: "owner: ana@example.com"},
			"This object's owner changed since the change was asked: it was owner: none and is now owner: ana@example.com. Reject this change and ask again."},
		{"only a whole definition moved", ModelUpstream, Upstream{BaseURL: "https://a", Key: "stored", Deployment: json.RawMessage(`{"priority":1}`)},
			Upstream{BaseURL: "https://a", Key: "stored", Deployment: json.RawMessage(`{"priority":2}`)},
			Moved{Kind: ModelUpstream, Was: "as the diff's before shows", Now: "different"},
			"This model deployment changed since the change was asked: it was as the diff's before shows and is now different. Reject this change and ask again."},
	}
	for _, tt := range tests {
		got := MovedTo(Change{Kind: tt.kind, Before: raw(tt.before)}, raw(tt.now))
		if *got != tt.want {
			t.Errorf("%s: MovedTo = %+v, want %+v", tt.name, *got, tt.want)
		}
		if s := got.Sentence(); s != tt.sentence {
			t.Errorf("%s: Sentence() = %q, want %q", tt.name, s, tt.sentence)
		}
	}
}

// TestEveryKindNamesItsObject: the out-of-date sentence has a name for
// every kind's object.
func TestEveryKindNamesItsObject(t *testing.T) {
	for _, k := range Table {
		if _, ok := objectNames[k.Name]; !ok {
			t.Errorf("kind %s has no object name", k.Name)
		}
	}
}

package approvals

import (
	"reflect"
	"testing"

	"github.com/wardenhq/warden/audit"
)

func TestTrailWarnings(t *testing.T) {
	events := func(verbs ...string) []audit.Event {
		var out []audit.Event
		for _, v := range verbs {
			out = append(out, audit.Event{Verb: v})
		}
		return out
	}
	approve := Decided{Decision: Approve}
	tests := []struct {
		name      string
		events    []audit.Event
		decisions []Decided
		want      []string
	}{
		{"dual control, both recorded", events("action.requested", "action.approval_recorded", "action.approved"), []Decided{approve, approve}, nil},
		{"rejected", events("action.requested", "action.rejected"), []Decided{{Decision: Reject}}, nil},
		{"requested only", events("action.requested", "action.expired"), nil, nil},
		{"a decision row missing", events("action.requested", "action.approval_recorded", "action.approved"), []Decided{approve},
			[]string{"The action has 1 recorded decisions but the audit chain records 2. Verify the chain."}},
		{"a decision event missing", events("action.requested", "action.approved", "action.executed"), []Decided{approve, approve},
			[]string{"The action has 2 recorded decisions but the audit chain records 1. Verify the chain."}},
		{"no events", nil, nil, []string{"The audit chain records no event for this action, not even its request. Verify the chain."}},
		{"no events, one decision", nil, []Decided{approve}, []string{
			"The action has 1 recorded decisions but the audit chain records 0. Verify the chain.",
			"The audit chain records no event for this action, not even its request. Verify the chain.",
		}},
	}
	for _, tt := range tests {
		if got := TrailWarnings(tt.events, tt.decisions); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: TrailWarnings = %q, want %q", tt.name, got, tt.want)
		}
	}
}

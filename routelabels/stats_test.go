package routelabels

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

func TestSampleIsStratifiedPerSkillAndStable(t *testing.T) {
	var traffic []Routed
	for i := range 100 {
		traffic = append(traffic, Routed{ID: fmt.Sprintf("jrn_s%03d", i), Skill: "order_status"})
	}
	for i := range 3 {
		traffic = append(traffic, Routed{ID: fmt.Sprintf("jrn_r%03d", i), Skill: "refunds"})
	}
	traffic = append(traffic, Routed{ID: "jrn_none", Skill: ""})
	count := func(rs []Routed) map[string]int {
		out := map[string]int{}
		for _, r := range rs {
			out[r.Skill]++
		}
		return out
	}
	for _, tc := range []struct {
		percent               int
		status, refunds, none int
	}{
		{5, 5, 1, 1},     // ceil(5) of 100, at least one of 3 and of 1
		{50, 50, 2, 1},   // ceil(1.5)
		{100, 100, 3, 1}, // everything
		{0, 0, 0, 0},     // sampling off
	} {
		got := count(Sample(traffic, tc.percent))
		if got["order_status"] != tc.status || got["refunds"] != tc.refunds || got[""] != tc.none {
			t.Errorf("Sample(%d%%) = %v, want order_status %d, refunds %d, refused %d", tc.percent, got, tc.status, tc.refunds, tc.none)
		}
	}
	a := Sample(traffic, 5)
	reversed := slices.Clone(traffic)
	slices.Reverse(reversed)
	b := Sample(reversed, 5)
	ids := func(rs []Routed) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(ids(a), ids(b)) {
		t.Errorf("the sample depends on the order journeys were read: %v vs %v", ids(a), ids(b))
	}
}

func TestWeekOf(t *testing.T) {
	for _, tc := range []struct{ at, want string }{
		{"2026-03-05T10:00:00Z", "2026-03-02"}, // Thursday
		{"2026-03-02T00:00:00Z", "2026-03-02"}, // Monday midnight
		{"2026-03-08T23:59:59Z", "2026-03-02"}, // Sunday
		{"2026-03-09T00:00:00Z", "2026-03-09"},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		if got := WeekOf(at).Format(time.DateOnly); got != tc.want {
			t.Errorf("WeekOf(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	known := []string{"order_status", "refunds"}
	for _, tc := range []struct {
		name, verdict, expected, routed string
		want                            Verdict
		field                           string
	}{
		{"right", "right", "refunds", "order_status", Verdict{Correct: true, Expected: "order_status"}, ""},
		{"wrong to a skill", "wrong", "refunds", "order_status", Verdict{Expected: "refunds"}, ""},
		{"wrong: refuse", "wrong", NoSkill, "order_status", Verdict{Expected: ""}, ""},
		{"refused, belonged to a skill", "wrong", "refunds", "", Verdict{Expected: "refunds"}, ""},
		{"no verdict", "", "", "order_status", Verdict{}, "verdict"},
		{"wrong without where", "wrong", " ", "order_status", Verdict{}, "expected"},
		{"unknown skill", "wrong", "nope", "order_status", Verdict{}, "expected"},
		{"wrong but the same", "wrong", "order_status", "order_status", Verdict{}, "expected"},
		{"refused, should refuse", "wrong", NoSkill, "", Verdict{}, "expected"},
	} {
		got, err := ParseVerdict(tc.verdict, tc.expected, tc.routed, known)
		var inv *store.ValidationError
		switch {
		case tc.field == "" && (err != nil || got != tc.want):
			t.Errorf("%s: ParseVerdict = %+v, %v; want %+v", tc.name, got, err, tc.want)
		case tc.field != "" && (!errors.As(err, &inv) || inv.Fields[tc.field] == ""):
			t.Errorf("%s: ParseVerdict error %v, want one on %s", tc.name, err, tc.field)
		}
	}
}

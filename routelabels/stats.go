package routelabels

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"
	"time"
)

// Count is labelled journeys and how many were routed right.
type Count struct {
	Labelled, Right int
}

// Percent is the accuracy in whole percent, rounded down (0 with no
// labels).
func (c Count) Percent() int {
	if c.Labelled == 0 {
		return 0
	}
	return c.Right * 100 / c.Labelled
}

// Rate is the accuracy as a fraction (0 with no labels).
func (c Count) Rate() float64 {
	if c.Labelled == 0 {
		return 0
	}
	return float64(c.Right) / float64(c.Labelled)
}

// SkillCount is one skill's line of the confusion table: Routed is how
// many labelled journeys went to it, Right how many of those belonged
// there; a false positive went to it but belonged elsewhere (or should
// have been refused), a false negative belonged to it but went elsewhere.
type SkillCount struct {
	Skill          string // "" is "no skill (refused)"
	Routed, Right  int
	FalsePositives int
	FalseNegatives int
}

// Week is one week's accuracy, by the week the journeys ran (Monday, UTC).
type Week struct {
	Start time.Time
	Count
}

// ReleaseCount is one release's accuracy over the journeys that ran under it.
type ReleaseCount struct {
	Release string
	Count
}

// Cell is one cell of the confusion table: journeys routed to Routed that
// belonged to Expected.
type Cell struct {
	Routed, Expected string
	N                int
}

// Stats is route accuracy from a set of labels.
type Stats struct {
	Count
	Skills    []SkillCount   // by skill name, "" (refused) first
	Weeks     []Week         // oldest first, weeks without labels left out
	Releases  []ReleaseCount // most labelled first
	Confusion []Cell         // wrong routes only, most frequent first
}

// Accuracy counts labels (pure: the caller reads them with Of).
func Accuracy(labels []Label) Stats {
	var st Stats
	skills := map[string]*SkillCount{}
	sk := func(name string) *SkillCount {
		if s, ok := skills[name]; ok {
			return s
		}
		s := &SkillCount{Skill: name}
		skills[name] = s
		return s
	}
	weeks := map[time.Time]*Week{}
	rels := map[string]*ReleaseCount{}
	cells := map[[2]string]int{}
	for _, l := range labels {
		right := 0
		if l.Correct {
			right = 1
		}
		st.Labelled++
		st.Right += right
		r := sk(l.Routed)
		r.Routed++
		r.Right += right
		if !l.Correct {
			r.FalsePositives++
			sk(l.Expected).FalseNegatives++
			cells[[2]string{l.Routed, l.Expected}]++
		}
		ws := WeekOf(l.At)
		if weeks[ws] == nil {
			weeks[ws] = &Week{Start: ws}
		}
		weeks[ws].Labelled++
		weeks[ws].Right += right
		if rels[l.Release] == nil {
			rels[l.Release] = &ReleaseCount{Release: l.Release}
		}
		rels[l.Release].Labelled++
		rels[l.Release].Right += right
	}
	for _, s := range skills {
		st.Skills = append(st.Skills, *s)
	}
	sort.Slice(st.Skills, func(i, j int) bool { return st.Skills[i].Skill < st.Skills[j].Skill })
	for _, w := range weeks {
		st.Weeks = append(st.Weeks, *w)
	}
	sort.Slice(st.Weeks, func(i, j int) bool { return st.Weeks[i].Start.Before(st.Weeks[j].Start) })
	for _, r := range rels {
		st.Releases = append(st.Releases, *r)
	}
	sort.Slice(st.Releases, func(i, j int) bool {
		if st.Releases[i].Labelled != st.Releases[j].Labelled {
			return st.Releases[i].Labelled > st.Releases[j].Labelled
		}
		return st.Releases[i].Release < st.Releases[j].Release
	})
	for k, n := range cells {
		st.Confusion = append(st.Confusion, Cell{Routed: k[0], Expected: k[1], N: n})
	}
	sort.Slice(st.Confusion, func(i, j int) bool {
		a, b := st.Confusion[i], st.Confusion[j]
		if a.N != b.N {
			return a.N > b.N
		}
		if a.Routed != b.Routed {
			return a.Routed < b.Routed
		}
		return a.Expected < b.Expected
	})
	return st
}

// WeekOf is the Monday 00:00 UTC that starts t's week.
func WeekOf(t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	back := (int(day.Weekday()) + 6) % 7 // days since Monday
	return day.AddDate(0, 0, -back)
}

// Routed is one journey of a day's traffic as the sample sees it.
type Routed struct {
	ID    string
	Skill string // "" for refused journeys
}

// Sample picks percent of traffic for labelling, per skill (refused
// journeys are a stratum of their own): ceil(percent × n / 100) of each
// skill's n journeys, at least one, chosen by the SHA-256 of their ids so
// the same day always proposes the same journeys, whoever looks. The
// sample keeps traffic's order within each skill's pick; skills come in
// name order.
func Sample(traffic []Routed, percent int) []Routed {
	if percent <= 0 {
		return nil
	}
	by := map[string][]Routed{}
	for _, r := range traffic {
		by[r.Skill] = append(by[r.Skill], r)
	}
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Routed
	for _, name := range names {
		rs := by[name]
		k := (len(rs)*percent + 99) / 100
		k = max(1, min(k, len(rs)))
		ranked := append([]Routed(nil), rs...)
		sort.SliceStable(ranked, func(i, j int) bool { return rank(ranked[i].ID) < rank(ranked[j].ID) })
		pick := map[string]bool{}
		for _, r := range ranked[:k] {
			pick[r.ID] = true
		}
		for _, r := range rs {
			if pick[r.ID] {
				out = append(out, r)
			}
		}
	}
	return out
}

func rank(id string) uint64 {
	sum := sha256.Sum256([]byte("route-sample:" + id))
	return binary.BigEndian.Uint64(sum[:8])
}

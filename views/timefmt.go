package views

import (
	"strconv"
	"time"
)

// Times on the pages: one readable format that names its zone, and how
// long ago it was where that helps ("2026-03-09 12:05 UTC · 3 min ago").
// Warden keeps and shows time in UTC, so every page reads the same.

// Stamp formats a time to the minute in UTC, naming the zone: "2026-03-09
// 12:05 UTC". The zero time is "—".
func Stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// StampSeconds is Stamp to the second, for the audit trail where the order
// within a minute matters: "2026-03-09 12:05:07 UTC".
func StampSeconds(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// Ago says how long before now t was, in the largest unit that fits:
// "just now", "5 min ago", "3 h ago", "2 days ago"; a time after now reads
// "in 5 min". Past a month it is empty: the date says it better.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		s = strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		s = strconv.Itoa(int(d/time.Hour)) + " h"
	case d < 31*24*time.Hour:
		s = strconv.Itoa(int(d/(24*time.Hour))) + " days"
	default:
		return ""
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// isoUTC is a time as a <time datetime> attribute takes it.
func isoUTC(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// stampOr is Stamp of an optional time, or none when it is nil.
func stampOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return Stamp(*t)
}

package views

import (
	"strconv"
	"time"
)

// Times on the pages: one readable format that names its zone,
// "2026-03-09 12:05:07 UTC", in a <time datetime> element so the machine
// value is there too, plus how long ago it was where that helps (lists and
// home: "· 3 min ago"). Warden keeps and shows time in UTC, so every page
// reads the same.

// When formats a time the one way pages show it: UTC, to the second,
// naming the zone: "2026-03-09 12:05:07 UTC". The zero time is "—".
func When(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// whenDate and whenClock are When's two halves, "2026-03-09" and
// "12:05:07 UTC", so a narrow column breaks between them.
func whenDate(t time.Time) string  { return t.UTC().Format("2006-01-02") }
func whenClock(t time.Time) string { return t.UTC().Format("15:04:05 UTC") }

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

// storedTime reads a time kept as text (RFC 3339, as the store writes
// it); text that is not one is the zero time, shown as "—".
func storedTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// shownTime reads back a value When wrote, so that a labelled field
// holding a time is shown in <time datetime> too.
func shownTime(s string) (time.Time, bool) {
	t, err := time.Parse("2006-01-02 15:04:05 UTC", s)
	return t, err == nil
}

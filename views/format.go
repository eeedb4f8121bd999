package views

import (
	"strconv"
	"strings"
	"time"
)

// microsPerUnit is how many micro-units make one currency unit.
const microsPerUnit = 1_000_000

// Money formats micro-units as dollars for reading: "$1,234.50". Whole
// cents show two decimals; smaller amounts (a journey's cost is often a
// fraction of a cent) show as many as they need, up to six, so nothing is
// rounded away.
func Money(micros int64) string {
	sign := ""
	u := uint64(micros)
	if micros < 0 {
		sign = "-"
		u = uint64(-(micros + 1)) + 1 // safe for math.MinInt64
	}
	whole, frac := u/microsPerUnit, u%microsPerUnit
	return sign + "$" + groupThousands(strconv.FormatUint(whole, 10)) + "." + fraction(frac)
}

// MoneyInput formats micro-units the way a money input field takes them
// back: "250.00", no currency sign or separators.
func MoneyInput(micros int64) string {
	sign := ""
	u := uint64(micros)
	if micros < 0 {
		sign = "-"
		u = uint64(-(micros + 1)) + 1
	}
	return sign + strconv.FormatUint(u/microsPerUnit, 10) + "." + fraction(u%microsPerUnit)
}

// fraction renders the micro part with at least two and at most six digits.
func fraction(frac uint64) string {
	s := strconv.FormatUint(frac+microsPerUnit, 10)[1:] // six digits, zero-padded
	s = strings.TrimRight(s, "0")
	for len(s) < 2 {
		s += "0"
	}
	return s
}

func groupThousands(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	lead := len(digits) % 3
	if lead > 0 {
		b.WriteString(digits[:lead])
	}
	for i := lead; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

// When formats a time for tables: UTC, to the second. The zero time is "—".
func When(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// WhenOpt formats an optional time, or none when it is nil.
func WhenOpt(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return When(*t)
}

// Day formats a time as its UTC date, as a date input takes it.
func Day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}

// Latency formats a duration for people: "850 ms", "1.25 s", "2m5s".
func Latency(d time.Duration) string {
	switch {
	case d < 0:
		return "—"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64) + " s"
	default:
		return d.Round(time.Second).String()
	}
}

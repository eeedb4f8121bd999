package views

import (
	"strconv"
	"time"

	"github.com/wardenhq/warden/platform/money"
)

// usd is the currency of budgets, tool unit costs and journey costs, which
// are kept in micro-units of US dollars.
var usd = money.MustCurrency("USD")

// Money formats micro-units as dollars for reading: "$1,234.50". Whole
// cents show two decimals; smaller amounts (a journey's cost is often a
// fraction of a cent) show as many as they need, up to six, so nothing is
// rounded away.
func Money(micros int64) string { return money.FormatMicros(micros, usd) }

// MoneyInput formats micro-units the way a money input field takes them
// back: "250.00", no currency sign or separators.
func MoneyInput(micros int64) string { return money.MicrosInput(micros, usd) }

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

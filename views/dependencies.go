package views

import (
	"strconv"
	"time"
)

func breakerWord(state string) string {
	switch state {
	case "closed":
		return "Closed · calling"
	case "half-open":
		return "Half-open · probing"
	case "open":
		return "Open · not calling"
	}
	return state
}

func breakerBadge(state string) string {
	switch state {
	case "closed":
		return "badge-ok"
	case "open":
		return "badge-bad"
	}
	return "badge-warn"
}

func depPercent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + " %" }

func depMillis(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}

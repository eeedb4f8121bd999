package views

import (
	"net/url"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/routelabels"
)

// LabelForm is the trace page's route label form as the reviewer filled
// it in.
type LabelForm struct {
	Verdict, Expected string
	Errors            FieldErrors
}

// LabelQueueView is the Labelling page: the day's sample still to label.
type LabelQueueView struct {
	Queue    journeys.LabelQueue
	Items    []journeys.QueueItem // this page of the queue
	Day      string               // YYYY-MM-DD
	PrevDay  string
	NextDay  string // "" for today
	Pager    PagerView
	Settings routelabels.Settings
	// CanConfigure shows the settings form (admins); Form and Errors are
	// the form as sent when it was refused.
	CanConfigure bool
	Form         LabelSettingsForm
	Notice       string
	Now          time.Time
	// Pending are the route accuracy alert changes waiting for a second
	// admin.
	Pending []changes.Change
}

// LabelSettingsForm is the labelling settings form as typed.
type LabelSettingsForm struct {
	SamplePercent, AlertPercent, AlertLastN string
	Errors                                  FieldErrors
}

// RouteAccuracyView is the Releases page's route accuracy section for one
// agent in one environment.
type RouteAccuracyView struct {
	Stats    routelabels.Stats
	Settings routelabels.Settings
}

// SkillName is a skill as the label pages show it ("" is a refusal).
func SkillName(s string) string {
	if s == "" {
		return "no skill (refused)"
	}
	return s
}

// Percent is a count's accuracy as people read it.
func Percent(c routelabels.Count) string {
	if c.Labelled == 0 {
		return "no labels"
	}
	return strconv.FormatFloat(c.Rate()*100, 'f', 1, 64) + " %"
}

// chartBar is one week's bar of the accuracy chart (SVG units).
type chartBar struct {
	X, Y, W, H int
	Label      string // the week, "2 Mar"
	Value      string // "87.5 % of 16"
}

const chartHeight, chartBarW, chartGap = 120, 36, 12

// weekBars lays out the newest 12 weeks as bars whose height is the
// accuracy (the chart is server-drawn SVG: no script).
func weekBars(ws []routelabels.Week) []chartBar {
	if len(ws) > 12 {
		ws = ws[len(ws)-12:]
	}
	out := make([]chartBar, len(ws))
	for i, w := range ws {
		h := int(w.Rate() * chartHeight)
		out[i] = chartBar{X: i * (chartBarW + chartGap), Y: chartHeight - h, W: chartBarW, H: h,
			Label: w.Start.Format("2 Jan"), Value: Percent(w.Count) + " of " + strconv.Itoa(w.Labelled)}
	}
	return out
}

func chartWidth(n int) string {
	return strconv.Itoa(max(1, min(n, 12))*(chartBarW+chartGap) + chartGap)
}

func labelQueueURL(day string) templ.SafeURL {
	return templ.SafeURL("/labels?" + url.Values{"day": {day}}.Encode())
}

func labelSkillSelected(form LabelForm, s string) bool { return form.Expected == s }

package journeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
)

var labeller = routelabels.Who{Actor: audit.Actor{Type: audit.ActorPrincipal, ID: "p-otto"}, Name: "Otto"}

// publishRouting publishes a release whose routing allows skills (at the
// built-in keyword router's threshold 0.40), with note telling twins apart.
func (r *rig) publishRouting(note string, skills []string) string {
	r.t.Helper()
	contents, err := releases.ContentsOf(map[string]any{
		"routing": releases.RoutingPolicy{Router: "keyword", Threshold: 0.40},
		"skills":  skills,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	b := releases.Bundle{Model: "builtin:keyword-router", Prompt: "sha256:" + note, Tools: "sha256:t", Approval: "sha256:a"}
	b.Routing, _ = releases.ContentID(contents["routing"])
	b.Skills, _ = releases.ContentID(contents["skills"])
	by := releases.Author{Actor: labeller.Actor, Name: labeller.Name}
	d, _, err := releases.Publish(r.ctx, r.db, by, b, contents, note)
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// ran runs input and returns the journey it recorded, whether it
// completed or ended with an error.
func (r *rig) ran(input string) Journey {
	r.t.Helper()
	out, err := r.run(input)
	var je *JourneyError
	switch {
	case err == nil:
		return out.Journey
	case errors.As(err, &je) && je.Journey.ID != "":
		return je.Journey
	}
	r.t.Fatalf("run %q: %v", input, err)
	return Journey{}
}

func (r *rig) label(id, verdict, expected string) {
	r.t.Helper()
	if _, err := r.svc.LabelRoute(r.ctx, labeller, r.journey(id), verdict, expected); err != nil {
		r.t.Fatalf("label %s %s %s: %v", id, verdict, expected, err)
	}
}

func (r *rig) accuracy() routelabels.Stats {
	r.t.Helper()
	ls, err := routelabels.Of(r.ctx, r.db.Read(), releases.DefaultAgent, releases.DefaultEnv, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return routelabels.Accuracy(ls)
}

// Labels decide accuracy: marking a route wrong lowers it, relabelling
// replaces the label (the latest counts) and the audit chain keeps both;
// a wrong route counts as a false positive of where it went and a false
// negative of where it belonged.
func TestLabelsChangeRouteAccuracy(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: labeller.Actor, Name: labeller.Name}
	full := r.publishRouting("full", r.svc.o.Router.Names())
	if _, _, err := releases.Activate(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, full, ""); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range []string{"Where is my order ORD-1003?", "Where is my order ORD-1001?", "Email the customer of ORD-1001 about the delay"} {
		ids = append(ids, r.ran(in).ID)
	}
	r.label(ids[0], "right", "")
	r.label(ids[1], "right", "")
	r.label(ids[2], "right", "")
	if st := r.accuracy(); st.Labelled != 3 || st.Right != 3 || st.Percent() != 100 {
		t.Fatalf("all right: accuracy %d/%d (%d%%), want 3/3 (100%%)", st.Right, st.Labelled, st.Percent())
	}
	// Relabelled: the email should have been refused.
	r.label(ids[2], "wrong", routelabels.NoSkill)
	st := r.accuracy()
	if st.Labelled != 3 || st.Right != 2 || st.Percent() != 66 {
		t.Fatalf("after relabelling: accuracy %d/%d (%d%%), want 2/3 (66%%)", st.Right, st.Labelled, st.Percent())
	}
	got := map[string]routelabels.SkillCount{}
	for _, s := range st.Skills {
		got[s.Skill] = s
	}
	if e := got["customer_email"]; e.Routed != 1 || e.Right != 0 || e.FalsePositives != 1 || e.FalseNegatives != 0 {
		t.Errorf("customer_email line = %+v, want 1 routed, 0 right, 1 false positive", e)
	}
	if n := got[""]; n.FalseNegatives != 1 || n.Routed != 0 {
		t.Errorf("refusal line = %+v, want 1 false negative", n)
	}
	if s := got["order_status"]; s.Routed != 2 || s.Right != 2 || s.FalsePositives != 0 || s.FalseNegatives != 0 {
		t.Errorf("order_status line = %+v, want 2 routed, 2 right", s)
	}
	if len(st.Confusion) != 1 || st.Confusion[0] != (routelabels.Cell{Routed: "customer_email", Expected: "", N: 1}) {
		t.Errorf("confusion = %+v, want one customer_email → refused", st.Confusion)
	}
	if len(st.Weeks) != 1 || st.Weeks[0].Labelled != 3 || st.Weeks[0].Start.Weekday().String() != "Monday" {
		t.Errorf("weeks = %+v, want one week from a Monday with 3 labels", st.Weeks)
	}
	if len(st.Releases) != 1 || st.Releases[0].Release != full || st.Releases[0].Right != 2 {
		t.Errorf("releases = %+v, want %s with 2 right", st.Releases, full)
	}
	var events int
	if err := r.db.Read().QueryRowContext(r.ctx, `SELECT COUNT(*) FROM audit_events WHERE verb = 'route.labelled' AND subject_id = ?`, ids[2]).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if events != 2 {
		t.Errorf("route.labelled events of the relabelled journey = %d, want 2 (history kept)", events)
	}
	// The same label again records nothing.
	if changed, err := r.svc.LabelRoute(r.ctx, labeller, r.journey(ids[2]), "wrong", routelabels.NoSkill); err != nil || changed {
		t.Errorf("labelling the same again: changed %v, %v; want unchanged", changed, err)
	}

	// Bad labels are refused and change nothing.
	for _, tc := range []struct{ verdict, expected, field string }{
		{"", "", "verdict"},
		{"maybe", "", "verdict"},
		{"wrong", "", "expected"},
		{"wrong", "no_such_skill", "expected"},
		{"wrong", "order_status", "expected"}, // where it went
	} {
		_, err := r.svc.LabelRoute(r.ctx, labeller, r.journey(ids[0]), tc.verdict, tc.expected)
		var inv *store.ValidationError
		if !errors.As(err, &inv) || inv.Fields[tc.field] == "" {
			t.Errorf("label %q %q: %v, want a validation error on %s", tc.verdict, tc.expected, err, tc.field)
		}
	}
	if st := r.accuracy(); st.Right != 2 || st.Labelled != 3 {
		t.Errorf("after refused labels: %d/%d, want 2/3 unchanged", st.Right, st.Labelled)
	}
}

// A candidate that routes the labelled journeys worse than the active
// release is held by a canary that requires labels, even though route
// agreement alone says nothing about which routes were right; an equal
// candidate passes the label part of the gate.
func TestCanaryLabelGateHoldsAWorseCandidate(t *testing.T) {
	r := newRig(t)
	by := releases.Author{Actor: labeller.Actor, Name: labeller.Name}
	all := r.svc.o.Router.Names()
	full := r.publishRouting("full", all)
	noStatus := r.publishRouting("no-status", []string{"refunds", "order_support", "customer_email"})
	twin := r.publishRouting("twin", all)
	if _, _, err := releases.Activate(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, full, ""); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"Where is my order ORD-1003?", "Where is my order ORD-1001?"} {
		out, err := r.run(in)
		if err != nil {
			t.Fatal(err)
		}
		r.label(out.Journey.ID, "right", "")
	}
	// Without a replay against labels the gate holds.
	if _, _, err := releases.StartCanary(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, noStatus, 10, 0.5, "try",
		releases.CanaryOptions{RequireLabels: true}); err != nil {
		t.Fatal(err)
	}
	v, err := releases.EvaluateCanary(r.ctx, r.db.Read(), releases.DefaultAgent, releases.DefaultEnv)
	if err != nil {
		t.Fatal(err)
	}
	if v.Promote || !strings.Contains(strings.Join(v.Reasons, "; "), "no replay of the candidate against labelled journeys") {
		t.Errorf("no replay yet: promote %v, reasons %q; want held for want of a replay", v.Promote, v.Reasons)
	}

	rep, err := r.svc.Replay(r.ctx, noStatus, "order_status", 10)
	if err != nil {
		t.Fatal(err)
	}
	if l := rep.Labels; l.Active != full || l.Labelled != 2 || l.CandidateRight != 0 || l.ActiveRight != 2 {
		t.Fatalf("replay against labels = %+v, want active %s, 2 labelled, candidate 0 right, active 2", l, full)
	}
	id, err := r.svc.RecordReplay(r.ctx, by, noStatus, "order_status", 10)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := releases.GetReplay(r.ctx, r.db.Read(), id)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Labelled != 2 || kept.LabelledRight != 0 || kept.ActiveRight != 2 || kept.LabelRate() != 0 || kept.ActiveLabelRate() != 1 {
		t.Errorf("kept replay = %+v, want 2 labelled, 0 and 2 right", kept)
	}
	v, err = releases.EvaluateCanary(r.ctx, r.db.Read(), releases.DefaultAgent, releases.DefaultEnv)
	if err != nil {
		t.Fatal(err)
	}
	if v.Promote || v.Labels == nil || !strings.Contains(strings.Join(v.Reasons, "; "), "routes 0 of 2 labelled journeys right, worse than the active release's 2") {
		t.Errorf("worse candidate: promote %v, reasons %q; want held as worse", v.Promote, v.Reasons)
	}
	_, _, err = releases.Promote(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, noStatus, "ship")
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != "canary_held" || !strings.Contains(pe.Message, "worse than the active release") {
		t.Errorf("promoting the worse candidate: %v, want canary_held naming the labels", err)
	}
	if _, _, err := releases.StopCanary(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, noStatus, "worse"); err != nil {
		t.Fatal(err)
	}

	// A candidate that routes them as well passes the label part.
	if _, err := r.svc.RecordReplay(r.ctx, by, twin, "order_status", 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := releases.StartCanary(r.ctx, r.db, by, releases.DefaultAgent, releases.DefaultEnv, twin, 10, 0.5, "try",
		releases.CanaryOptions{RequireLabels: true}); err != nil {
		t.Fatal(err)
	}
	v, err = releases.EvaluateCanary(r.ctx, r.db.Read(), releases.DefaultAgent, releases.DefaultEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pointer.LabelGate || !strings.Contains(strings.Join(v.Reasons, "; "), "routes 2 of 2 labelled journeys right, no worse") {
		t.Errorf("equal candidate: label gate %v, reasons %q; want no worse", v.Pointer.LabelGate, v.Reasons)
	}
}

// The export carries the labels, the release digests and the inputs as
// redacted; the e-mail address in an input never appears in the clear,
// nor does the reviewer.
func TestExportLabelsIsRedacted(t *testing.T) {
	r := newRig(t)
	const email = "jane.doe@example.com"
	out, err := r.run("Where is my order ORD-1003? Write to " + email)
	if err != nil {
		t.Fatal(err)
	}
	r.label(out.Journey.ID, "wrong", "order_support")
	var buf bytes.Buffer
	n, err := r.svc.ExportLabels(r.ctx, &buf, releases.DefaultAgent, releases.DefaultEnv, nil)
	if err != nil || n != 1 {
		t.Fatalf("ExportLabels = %d, %v; want 1 row", n, err)
	}
	if strings.Contains(buf.String(), email) || strings.Contains(buf.String(), "Otto") || strings.Contains(buf.String(), "p-otto") {
		t.Fatalf("export has PII or the reviewer in the clear: %s", buf.String())
	}
	var row ExportRow
	if err := json.Unmarshal(buf.Bytes(), &row); err != nil {
		t.Fatal(err)
	}
	if row.Journey != out.Journey.ID || row.Verdict != "wrong" || row.Expected != "order_support" || row.Routed != out.Journey.Skill ||
		row.Release != out.Journey.Release || row.Tenant != "acme" || !strings.Contains(row.Input, "ORD-1003") || !strings.Contains(row.Input, "[email:") {
		t.Errorf("export row = %+v", row)
	}
	// A reviewer outside the journey's tenant exports nothing of it.
	buf.Reset()
	if n, err := r.svc.ExportLabels(r.ctx, &buf, releases.DefaultAgent, releases.DefaultEnv, func(string) bool { return false }); err != nil || n != 0 || buf.Len() != 0 {
		t.Errorf("out-of-scope export = %d rows, %v: %q", n, err, buf.String())
	}
}

// The day's queue proposes the sampled journeys nobody labelled yet.
func TestLabelQueueProposesTheUnlabelledSample(t *testing.T) {
	r := newRig(t)
	var ids []string
	for _, in := range []string{"Where is my order ORD-1003?", "Where is my order ORD-1001?", "Email the customer of ORD-1001 about the delay"} {
		ids = append(ids, r.ran(in).ID)
	}
	q, err := LabelQueueOf(r.ctx, r.db.Read(), r.clock(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Sampled != 3 || q.Done != 0 || len(q.Items) != 3 {
		t.Fatalf("queue = %d sampled, %d done, %d items; want 3, 0, 3", q.Sampled, q.Done, len(q.Items))
	}
	r.label(ids[0], "right", "")
	q, err = LabelQueueOf(r.ctx, r.db.Read(), r.clock(), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Done != 1 || len(q.Items) != 2 || q.Items[0].ID == ids[0] || q.Items[1].ID == ids[0] {
		t.Errorf("after one label: %d done, items %+v; want 1 done and the other two", q.Done, q.Items)
	}
	// One percent still proposes one journey of each skill.
	q, err = LabelQueueOf(r.ctx, r.db.Read(), r.clock(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Sampled != 2 {
		t.Errorf("1%% sample = %d journeys, want 2 (one per skill)", q.Sampled)
	}
	// Another day is empty.
	q, err = LabelQueueOf(r.ctx, r.db.Read(), r.clock().AddDate(0, 0, -1), 100, nil)
	if err != nil || q.Sampled != 0 || len(q.Items) != 0 {
		t.Errorf("the day before: %+v, %v; want empty", q, err)
	}
}

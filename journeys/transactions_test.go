package journeys

import (
	"testing"
)

// TestReadJourneyTakesTwoWriteTransactions: the demo's read journey
// (admission, routing, one low-impact lookup, settlement) writes in two
// transactions, admission and settlement; its step journal goes with the
// settlement.
func TestReadJourneyTakesTwoWriteTransactions(t *testing.T) {
	r := newRig(t)
	before := r.db.TxStats()
	out, err := r.run("Where is my order ORD-1003?")
	if err != nil {
		t.Fatal(err)
	}
	if out.Journey.Status != StatusCompleted {
		t.Fatalf("journey %s, want completed", out.Journey.Status)
	}
	got := r.db.TxStats().Sub(before)
	t.Logf("write transactions: %d", got.Commits)
	if got.Commits > 2 {
		t.Errorf("the read journey committed %d write transactions, want at most 2 (admission, settlement)", got.Commits)
	}
	// Nothing of the journal is lost by writing it late.
	j := r.journey(out.Journey.ID)
	if steps := stepsOf(j); len(steps) != len(out.Journey.Steps) || len(steps) < 2 {
		t.Errorf("stored steps %v, answered %d steps", steps, len(out.Journey.Steps))
	}
}

// TestRefusedJourneyTakesTwoWriteTransactions: a journey policy refuses
// (a tool outside the key's scopes) writes its journal and the
// violation's audit event with its end: two write transactions, and
// both the refused step and the event are stored.
func TestRefusedJourneyTakesTwoWriteTransactions(t *testing.T) {
	r := newRig(t)
	r.caller = r.newCaller(r.tenant, "skill:order_status")
	before := r.db.TxStats()
	out, err := r.run("Where is my order ORD-1003?")
	if err == nil {
		t.Fatal("journey ran, want refused")
	}
	got := r.db.TxStats().Sub(before)
	if got.Commits > 2 {
		t.Errorf("the refused journey committed %d write transactions, want at most 2", got.Commits)
	}
	j := r.journey(out.Journey.ID)
	if steps := stepsOf(j); len(steps) != 2 || steps[1] != "tool lookup_order refused" {
		t.Errorf("stored steps %v, want the route and the refused lookup", steps)
	}
	if v := violations(t, r, j.ID); len(v) != 1 {
		t.Errorf("policy violations audited: %v, want one", v)
	}
}

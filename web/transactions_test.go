package web

import (
	"context"
	"net/http"
	"testing"
)

// requestTransactions is how many write transactions the database
// committed while do ran, the fewest of several runs: the server's own
// background writes (heartbeats, sweeps) may fall in one run, never in
// all of them.
func requestTransactions(t *testing.T, in *instance, do func()) (fewest int64) {
	t.Helper()
	fewest = -1
	for range 5 {
		before := in.DB.TxStats()
		do()
		n := in.DB.TxStats().Sub(before).Commits
		if fewest < 0 || n < fewest {
			fewest = n
		}
	}
	return fewest
}

// TestReadJourneyTakesTwoWriteTransactions: the demo's read journey over
// HTTP, authentication included, commits two write transactions:
// admission (the budget's reservation with the journey) and settlement
// (the journal, the journey's end, the charge).
func TestReadJourneyTakesTwoWriteTransactions(t *testing.T) {
	in := startWardenDemo(t, nil)
	n := requestTransactions(t, in, func() {
		r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
		if r.Status != http.StatusOK || r.str("status") != "completed" {
			t.Fatalf("POST /v1/journeys = %d %s", r.Status, r.Raw)
		}
	})
	t.Logf("write transactions per read journey: %d", n)
	if n > 2 {
		t.Errorf("a read journey committed %d write transactions, want at most 2", n)
	}
}

// TestModelCallTakesTwoWriteTransactions: a call to
// /v1/chat/completions, streamed or not, commits two write transactions:
// the reservation, and the settlement with the call's record.
func TestModelCallTakesTwoWriteTransactions(t *testing.T) {
	r := newModelRig(t, 1_000_000_000, deployment("fake-a", "fake", 0))
	ctx := context.Background()
	n := requestTransactions(t, r.in, func() {
		if _, err := r.client.Chat.Completions.New(ctx, userChat("hello there")); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("write transactions per model call: %d", n)
	if n > 2 {
		t.Errorf("a model call committed %d write transactions, want at most 2", n)
	}
	n = requestTransactions(t, r.in, func() {
		s := r.client.Chat.Completions.NewStreaming(ctx, userChat("hello there"))
		for s.Next() {
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("write transactions per streamed model call: %d", n)
	if n > 2 {
		t.Errorf("a streamed model call committed %d write transactions, want at most 2", n)
	}
}

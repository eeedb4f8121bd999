package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/store"
)

// TestPageLinksCannotBeForged: lists page by cursors Warden writes. A
// page number, however large (the key list used to panic slicing at a
// negative offset, the queue to wrap its SQL offset), is no longer read;
// a cursor that Warden did not write gets a clear 400 on every paged list,
// never a 500.
func TestPageLinksCannotBeForged(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	admin := newBrowser(t, in.URL)
	admin.loginDev("erin")
	approver := newBrowser(t, in.URL)
	approver.loginDev("alice")
	auditor := newBrowser(t, in.URL)
	auditor.loginDev("dave")

	const refusal = "The page link is not one Warden wrote"
	huge := strings.Repeat("A", 10_000)
	tests := []struct {
		name   string
		b      *browser
		path   string
		status int
	}{
		{"keys, huge page number", admin, "/keys?page=184467440737095518", http.StatusOK},
		{"keys, garbage cursor", admin, "/keys?after=%21%21", http.StatusBadRequest},
		{"keys, huge cursor", admin, "/keys?after=" + huge, http.StatusBadRequest},
		{"keys, both directions", admin, "/keys?after=YQBi&before=YQBi", http.StatusBadRequest},
		{"approvals, huge page number", approver, "/approvals?page=9223372036854775807", http.StatusOK},
		{"approvals, cursor without an id", approver, "/approvals?after=bm8tbnVs", http.StatusBadRequest},
		{"approvals by amount, key beyond int64", approver, "/approvals?sort=amount&after=" + (&store.Cursor{Key: "99999999999999999999999", ID: "x"}).String(), http.StatusOK},
		{"approval rows, garbage cursor", approver, "/approvals/rows?before=%25%25", http.StatusBadRequest},
		{"audit, garbage cursor", auditor, "/audit?after=%21", http.StatusBadRequest},
		{"audit, non-numeric key", auditor, "/audit?after=" + (&store.Cursor{Key: "x", ID: "y"}).String(), http.StatusOK},
		{"traces, garbage cursor", auditor, "/traces?before=%21", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.b.get(tt.path)
			if p.Status != tt.status {
				t.Fatalf("GET %s = %d, want %d", tt.path[:min(len(tt.path), 80)], p.Status, tt.status)
			}
			if tt.status == http.StatusBadRequest && !strings.Contains(p.Body, refusal) {
				t.Errorf("GET %s: the page does not say %q", tt.path[:min(len(tt.path), 80)], refusal)
			}
		})
	}
	if logs := in.Logs.String(); strings.Contains(logs, "panic") || strings.Contains(logs, "request failed") {
		t.Errorf("the server logged a failure:\n%s", logs)
	}
}

// TestLongPollAnswersBeforeTheWriteTimeout: an agent that asks to wait 60 s
// for a decision gets its answer ("still pending") instead of a connection
// the server's write timeout cuts off.
func TestLongPollAnswersBeforeTheWriteTimeout(t *testing.T) {
	// The answer has to be written after the wait ends and before the
	// write deadline; leave room for the last poll, the read and the write.
	if margin := writeTimeout - handlers.MaxWait; margin < 5*time.Second {
		t.Fatalf("handlers.MaxWait = %v is within %v of the server's write timeout %v; a long poll would be cut off", handlers.MaxWait, margin, writeTimeout)
	}
	// Shorten the cap so the test does not take 50 s; set before the
	// server starts, restored after it stops.
	saved := handlers.MaxWait
	handlers.MaxWait = time.Second
	t.Cleanup(func() { handlers.MaxWait = saved })

	in := startWardenDemo(t, nil)
	r := propose(t, in, in.DemoKey, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"order_id": "ORD-1005", "amount_minor": 4550, "currency": "USD", "account": "FR7630004008230001234567819"},
		"summary": "Refund $45.50 for ORD-1005", "reason": "double charge", "amount": 4550, "currency": "USD",
	}, nil)
	if r.Status != http.StatusAccepted || r.str("status") != "pending" {
		t.Fatalf("propose = %d %s", r.Status, r.Raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	g := callAPI(t, ctx, http.MethodGet, in.URL+"/v1/actions/"+r.str("id")+"?wait=60s", in.DemoKey, nil, nil)
	took := time.Since(began)
	if g.Status != http.StatusOK || g.str("status") != "pending" {
		t.Fatalf("long poll with wait=60s = %d %s, want 200 pending", g.Status, g.Raw)
	}
	if took < handlers.MaxWait || took > handlers.MaxWait+10*time.Second {
		t.Errorf("long poll with wait=60s answered after %v, want about the cap %v", took, handlers.MaxWait)
	}
}

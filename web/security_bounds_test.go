package web

import (
	"net/http"
	"strings"
	"testing"
)

// TestHugePageNumbersAreRefused: a page number whose offset would overflow
// gets a clear 400 on every paged list, never a 500 (the key list used to
// panic slicing at a negative offset, the queue to wrap its SQL offset).
func TestHugePageNumbersAreRefused(t *testing.T) {
	in := startWarden(t, nil)
	in.waitReady(t)
	admin := newBrowser(t, in.URL)
	admin.loginDev("erin")
	approver := newBrowser(t, in.URL)
	approver.loginDev("alice")

	const refusal = "The page parameter must be a whole number from 1 to 1000000."
	tests := []struct {
		name   string
		b      *browser
		path   string
		status int
	}{
		{"keys, offset overflows int64", admin, "/keys?page=184467440737095518", http.StatusBadRequest},
		{"keys, largest int64", admin, "/keys?page=9223372036854775807", http.StatusBadRequest},
		{"keys, beyond int64", admin, "/keys?page=99999999999999999999999", http.StatusBadRequest},
		{"keys, just past the bound", admin, "/keys?page=1000001", http.StatusBadRequest},
		{"keys, negative", admin, "/keys?page=-3", http.StatusBadRequest},
		{"keys, highest page allowed", admin, "/keys?page=1000000", http.StatusOK},
		{"approvals, offset overflows int64", approver, "/approvals?page=184467440737095518", http.StatusBadRequest},
		{"approvals, largest int64", approver, "/approvals?page=9223372036854775807", http.StatusBadRequest},
		{"approval rows, offset overflows int64", approver, "/approvals/rows?page=184467440737095518", http.StatusBadRequest},
		{"approvals, highest page allowed", approver, "/approvals?page=1000000", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.b.get(tt.path)
			if p.Status != tt.status {
				t.Fatalf("GET %s = %d, want %d", tt.path, p.Status, tt.status)
			}
			if tt.status == http.StatusBadRequest && !strings.Contains(p.Body, refusal) {
				t.Errorf("GET %s: the page does not say %q", tt.path, refusal)
			}
		})
	}
	if logs := in.Logs.String(); strings.Contains(logs, "panic") || strings.Contains(logs, "request failed") {
		t.Errorf("the server logged a failure:\n%s", logs)
	}
}

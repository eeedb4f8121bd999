package web

import (
	"net/http"
	"strings"
	"testing"
)

// A client's X-Request-Id was stored with the journey and echoed as sent,
// so personal data put there reached journeys.request_id and the
// idempotent responses. Warden now always makes its own id, in a form
// the log redactor leaves intact, so logs and journeys match.
func TestClientRequestIDIsNotTakenAndLogsMatchJourneys(t *testing.T) {
	in := startWardenDemo(t, nil)
	const planted = "jane.doe@example.com"
	r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", map[string]string{"X-Request-Id": planted})
	if r.Status != http.StatusOK {
		t.Fatalf("journey = %d %s", r.Status, r.Raw)
	}
	id := r.str("request_id")
	if !strings.HasPrefix(id, "req_") || strings.Contains(string(r.Raw), planted) {
		t.Errorf("request_id = %q in %s, want Warden's own id and no trace of the client's", id, r.Raw)
	}
	if n := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys WHERE request_id LIKE ?`, "%jane%"); n != 0 {
		t.Errorf("%d journeys store the client's request id", n)
	}
	if !strings.Contains(in.Logs.String(), id) {
		t.Errorf("the log has no line with the journey's request id %s", id)
	}
}

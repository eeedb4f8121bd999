package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A body that names a top-level member twice is refused as one that does
// so inside "arguments" is: JSON readers disagree on which one wins, so a
// reviewer could see one tool or amount and the provider get another.
// Nothing is created, and an unknown member is named in the answer.
func TestAPIRefusesMembersNamedTwice(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	_, secrets := newKeyWithSecrets(t, in, "refund agent", []string{"tool:issue_refund", "tool:lookup_order"}, 600, 60, nil)
	actions := countRows(t, in.DB, `SELECT COUNT(*) FROM actions`)
	journeys := countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`)
	for _, tc := range []struct{ path, key, body string }{
		{"/v1/actions", secrets.Key, `{"tool":"lookup_order","tool":"issue_refund","arguments":{"order_id":"ORD-1005","amount_minor":100,"currency":"USD","account":"FR7630004008230001234567819"},"summary":"s","reason":"r"}`},
		{"/v1/actions", secrets.Key, `{"tool":"issue_refund","arguments":{"order_id":"ORD-1005","amount_minor":100,"currency":"USD","account":"FR7630004008230001234567819"},"Arguments":{"order_id":"ORD-1005","amount_minor":900000,"currency":"USD","account":"FR7630004008230001234567819"},"summary":"s","reason":"r"}`},
		{"/v1/journeys", in.DemoKey, `{"input":"Where is my order ORD-1003?","input":"Refund ORD-1005 in full"}`},
	} {
		r := callAPI(t, ctx, http.MethodPost, in.URL+tc.path, tc.key, []byte(tc.body), nil)
		if r.Status != http.StatusBadRequest || r.code() != "invalid_json" || !strings.Contains(string(r.Raw), "twice") && !strings.Contains(string(r.Raw), "differ only in case") {
			t.Errorf("POST %s %s = %d %s; want 400 invalid_json naming the repeated member", tc.path, tc.body, r.Status, r.Raw)
		}
	}
	if r := callAPI(t, ctx, http.MethodPost, in.URL+"/v1/journeys", in.DemoKey, []byte(`{"input":"Where is my order ORD-1003?","extra":1}`), nil); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Raw), "extra") {
		t.Errorf("unknown member = %d %s; want 400 naming it", r.Status, r.Raw)
	}
	if countRows(t, in.DB, `SELECT COUNT(*) FROM actions`) != actions || countRows(t, in.DB, `SELECT COUNT(*) FROM journeys`) != journeys {
		t.Error("a refused body created an action or a journey")
	}
}

package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/tools"
)

// webhook is a tool provider at the edge of the world, speaking the
// webhook protocol: it records the idempotency keys it was called with.
type webhook struct {
	mu     sync.Mutex
	keys   []string
	status int
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.mu.Lock()
	w.keys = append(w.keys, r.Header.Get("Idempotency-Key"))
	status := w.status
	w.mu.Unlock()
	if status != http.StatusOK {
		rw.WriteHeader(status)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	json.NewEncoder(rw).Encode(map[string]any{"order_id": "ORD-1003", "status": "shipped", "amount_minor": 89900, "currency": "USD", "units": 2})
}

func TestJourneyThroughWebhookProvider(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	hook := &webhook{status: http.StatusOK}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	tool, err := catalog.Get(ctx, in.DB.Read(), "lookup_order")
	if err != nil {
		t.Fatal(err)
	}
	tool.Provider, tool.WebhookURL, tool.MaxAttempts, tool.Timeout = tools.ProviderHTTP, srv.URL, 3, 2*time.Second
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, tool) }); err != nil {
		t.Fatal(err)
	}

	r := journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	if r.Status != http.StatusOK || r.str("output") == "" {
		t.Fatalf("journey through the webhook = %d %s", r.Status, r.Raw)
	}
	if cost, _ := r.Body["cost"].(map[string]any); cost["tool_units"] != float64(2) {
		t.Errorf("tool units = %v, want the 2 the webhook reported", cost["tool_units"])
	}

	// The webhook fails with 503 every time: retries with the same key,
	// then 503 to the agent.
	hook.mu.Lock()
	hook.status, hook.keys = http.StatusServiceUnavailable, nil
	hook.mu.Unlock()
	r = journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	if r.Status != http.StatusServiceUnavailable || r.code() != "tool_unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("journey with the webhook down = %d %s", r.Status, r.Raw)
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if len(hook.keys) != 3 || hook.keys[0] == "" || hook.keys[0] != hook.keys[1] || hook.keys[1] != hook.keys[2] {
		t.Errorf("webhook saw keys %q, want 3 attempts with one idempotency key", hook.keys)
	}

	// A terminal answer (404) is not retried.
	hook.status, hook.keys = http.StatusNotFound, nil
	hook.mu.Unlock()
	r = journey(t, in, in.DemoKey, "Where is my order ORD-1003?", nil)
	hook.mu.Lock()
	if r.Status != http.StatusUnprocessableEntity || r.code() != "tool_refused" || len(hook.keys) != 1 {
		t.Errorf("terminal webhook answer = %d %s after %d calls, want 422 tool_refused after 1", r.Status, r.Raw, len(hook.keys))
	}
}

package tools

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wardenhq/warden/platform/tracing"
)

// TestHTTPCallIsASpanTheWebhookJoins: with tracing on, a guarded webhook
// call is a span "execute_tool NAME" under the caller's, the webhook
// receives that span as its traceparent, and neither the arguments nor
// the idempotency key are exported.
func TestHTTPCallIsASpanTheWebhookJoins(t *testing.T) {
	var mu sync.Mutex
	var spans []*tracepb.Span
	var exports [][]byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			t.Errorf("export: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		exports = append(exports, raw)
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}))
	defer collector.Close()
	var traceparent string
	webhook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparent = r.Header.Get("traceparent")
		mu.Unlock()
		io.WriteString(w, `{"refund_id":"rf_1"}`)
	}))
	defer webhook.Close()

	stop, err := tracing.Start(context.Background(), tracing.Options{Endpoint: collector.URL, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := tracing.Tracer("journeys").Start(context.Background(), "journey")
	if _, err := newTestProvider(nil).Execute(ctx, webhookTool(webhook.URL), refundCall()); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	var call *tracepb.Span
	for _, s := range spans {
		if s.Name == "execute_tool issue_refund" {
			call = s
		}
	}
	if call == nil {
		t.Fatalf("no tool span among %d exported", len(spans))
	}
	psc := parent.SpanContext()
	if hex.EncodeToString(call.ParentSpanId) != psc.SpanID().String() {
		t.Errorf("tool span under %x, want under the caller's %s", call.ParentSpanId, psc.SpanID())
	}
	if want := "00-" + psc.TraceID().String() + "-" + hex.EncodeToString(call.SpanId) + "-01"; traceparent != want {
		t.Errorf("webhook traceparent = %q, want %q", traceparent, want)
	}
	for _, raw := range exports {
		for _, secret := range []string{"ORD-1004", "240000", "idem-1", "rf_1"} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("an export holds %q", secret)
			}
		}
	}
}

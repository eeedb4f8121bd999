package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// toolsTracer is taken before any Start, as packages take theirs.
var toolsTracer = Tracer("tools")

func TestTracesURL(t *testing.T) {
	tests := []struct{ endpoint, want string }{
		{"http://localhost:4318", "http://localhost:4318/v1/traces"},
		{"http://localhost:4318/", "http://localhost:4318/v1/traces"},
		{"https://cloud.langfuse.com/api/public/otel", "https://cloud.langfuse.com/api/public/otel/v1/traces"},
		{"https://otlp.example.com/v1/traces", "https://otlp.example.com/v1/traces"},
	}
	for _, tt := range tests {
		if got := TracesURL(tt.endpoint); got != tt.want {
			t.Errorf("TracesURL(%q) = %q, want %q", tt.endpoint, got, tt.want)
		}
	}
}

// TestStartExportsOwnSpansAndPropagates runs the exporter against a
// collector on loopback: Warden's spans arrive on shutdown, another
// library's do not, and the transport sends the span's traceparent
// while tracing is on and none once it is off.
func TestStartExportsOwnSpansAndPropagates(t *testing.T) {
	var mu sync.Mutex
	var names []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			t.Errorf("export: %v", err)
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, ss.Scope.GetName()+" "+s.Name)
				}
			}
		}
		mu.Unlock()
	}))
	defer collector.Close()
	var got []string
	webhook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("traceparent"))
		mu.Unlock()
	}))
	defer webhook.Close()
	client := &http.Client{Transport: Transport(nil)}
	send := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, webhook.URL, nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if req.Header.Get("traceparent") != "" {
			t.Error("the transport changed the caller's request")
		}
	}

	stop, err := Start(context.Background(), Options{Endpoint: collector.URL, Version: "v-test"})
	if err != nil {
		t.Fatal(err)
	}
	if !Enabled() {
		t.Fatal("Enabled() = false after Start")
	}
	ctx, span := toolsTracer.Start(context.Background(), "execute_tool lookup_order")
	sc := span.SpanContext()
	send(ctx)
	send(context.Background()) // no span: nothing to send
	span.End()
	_, other := otel.Tracer("github.com/zitadel/oidc/pkg/op").Start(context.Background(), "SigAlgorithms")
	other.End()
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if Enabled() {
		t.Error("Enabled() = true after shutdown")
	}
	ctx, span = Tracer("tools").Start(context.Background(), "after")
	send(ctx)
	span.End()

	// Started again (another server in the process), the tracers handed
	// out before export to the new provider.
	stop, err = Start(context.Background(), Options{Endpoint: collector.URL, Version: "v-test"})
	if err != nil {
		t.Fatal(err)
	}
	_, span = toolsTracer.Start(context.Background(), "again")
	span.End()
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if len(got) != 3 || got[0] != want || got[1] != "" || got[2] != "" {
		t.Fatalf("traceparents sent = %q, want %q, then none", got, want)
	}
	if len(names) != 2 || names[0] != "github.com/wardenhq/warden/tools execute_tool lookup_order" || names[1] != "github.com/wardenhq/warden/tools again" {
		t.Errorf("exported spans = %q, want Warden's two only", names)
	}
}

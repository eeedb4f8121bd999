package web

import (
	"context"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/platform/tracing"
)

// startTracing installs the OTLP exporter when WARDEN_OTLP_ENDPOINT is
// set; Serve flushes it as it returns (stopTracing).
func (s *Server) startTracing() error {
	if s.cfg.OTLPEndpoint == "" {
		return nil
	}
	stop, err := tracing.Start(context.Background(), tracing.Options{
		Endpoint: s.cfg.OTLPEndpoint, Headers: s.cfg.OTLPHeaders, Version: s.version, Log: s.log})
	if err != nil {
		return err
	}
	s.stopTraces = stop
	// The endpoint is logged; the headers (credentials) never are.
	s.log.Info("traces are exported", "endpoint", tracing.TracesURL(s.cfg.OTLPEndpoint), "headers", len(s.cfg.OTLPHeaders))
	return nil
}

// traceFlushTimeout bounds the last export on shutdown.
const traceFlushTimeout = 5 * time.Second

// stopTracing sends the spans still buffered and stops the exporter.
func (s *Server) stopTracing() {
	if s.stopTraces == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := s.stopTraces(ctx); err != nil {
		s.log.Warn("the last traces were not exported", "err", err)
	}
	s.stopTraces = nil
}

// traceContext makes an agent's W3C traceparent on /v1/* the parent of
// the spans its request starts (a journey, a model call, an approval
// wait). The console's requests carry none: a browser is not a traced
// agent.
func (s *Server) traceContext() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if tracing.Enabled() && strings.HasPrefix(r.URL.Path, "/v1/") {
				c.SetRequest(r.WithContext(tracing.Extract(r.Context(), r.Header)))
			}
			return next(c)
		}
	}
}

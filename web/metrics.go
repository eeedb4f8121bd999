package web

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Prometheus metrics (/metrics): the model gateway's traffic
// (model_metrics.go), the Go runtime's and the process's (go_*,
// process_*), and per tool dependency — breaker state,
// calls, failures, retries, timeouts, retry-budget denials, bulkhead
// rejections, calls refused while the breaker was open, calls in flight —
// and the agent API's load shedding. Breaker transitions are also log
// lines (never audit events).
var (
	descBreaker  = prometheus.NewDesc("warden_dependency_breaker_state", "Circuit breaker state per dependency: 0 closed, 1 half-open, 2 open.", []string{"dependency"}, nil)
	descInFlight = prometheus.NewDesc("warden_dependency_in_flight", "Calls in flight per dependency (its bulkhead's use).", []string{"dependency"}, nil)
	descBulkhead = prometheus.NewDesc("warden_dependency_bulkhead_capacity", "Bulkhead capacity per dependency.", []string{"dependency"}, nil)
	descCounters = map[string]*prometheus.Desc{}
	counterHelp  = [][2]string{
		{"calls_total", "Calls per dependency (a call's retries included in one call)."},
		{"failures_total", "Calls that failed after their retries."},
		{"timeouts_total", "Attempts that ran out of time."},
		{"retries_total", "Retries made."},
		{"retry_budget_denied_total", "Retries the retry budget refused."},
		{"bulkhead_rejections_total", "Calls refused at once because the bulkhead was full."},
		{"short_circuited_total", "Calls refused at once because the breaker was open or probing."},
	}
	descShed    = prometheus.NewDesc("warden_api_shed_total", "Agent API requests shed with 503 because too many were in flight.", nil, nil)
	descRefused = prometheus.NewDesc("warden_auth_refused_callbacks_total", "Sign-in callbacks refused before any audit: no state, or one matching no sign-in in progress.", nil, nil)
)

func init() {
	for _, c := range counterHelp {
		descCounters[c[0]] = prometheus.NewDesc("warden_dependency_"+c[0], c[1], []string{"dependency"}, nil)
	}
}

type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descShed, prometheus.CounterValue, float64(c.s.shed.Load()))
	ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(c.s.refusedCallbacks.Load()))
	if c.s.runtime == nil {
		return
	}
	for _, d := range c.s.runtime.Dependencies() {
		state := map[string]float64{"closed": 0, "half-open": 1, "open": 2}[d.State]
		ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, state, d.Name)
		ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(d.InFlight), d.Name)
		ch <- prometheus.MustNewConstMetric(descBulkhead, prometheus.GaugeValue, float64(d.MaxConcurrent), d.Name)
		for name, v := range map[string]int64{
			"calls_total": d.Calls, "failures_total": d.Failures, "timeouts_total": d.Timeouts, "retries_total": d.Retries,
			"retry_budget_denied_total": d.BudgetDenied, "bulkhead_rejections_total": d.Rejected, "short_circuited_total": d.ShortCircuited,
		} {
			ch <- prometheus.MustNewConstMetric(descCounters[name], prometheus.CounterValue, float64(v), d.Name)
		}
	}
}

// metricsHandler serves the registry to a scraper on loopback, or to one
// that sends WARDEN_METRICS_TOKEN as a bearer token; anyone else gets 404,
// as if there were nothing here.
func (s *Server) metricsHandler() echo.HandlerFunc {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{s}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(s.modelMetrics.collectors()...)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return func(c echo.Context) error {
		if !s.mayScrape(c.Request()) {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

func (s *Server) mayScrape(r *http.Request) bool {
	if tok := s.cfg.MetricsToken; tok != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(got), []byte(tok)) == 1 {
			return true
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

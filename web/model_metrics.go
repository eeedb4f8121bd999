package web

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wardenhq/warden/models"
)

// modelMetrics is the model gateway's traffic in Prometheus: the
// gateway's observer (models.Observer), fed once per call where the call
// is settled, so every door (chat, and the doors built on it) counts.
// Labels are the alias and the deployment (both set by admins, so
// bounded) and the outcome; never a tenant or a key.
type modelMetrics struct {
	requests     *prometheus.CounterVec
	inputTokens  *prometheus.CounterVec
	outputTokens *prometheus.CounterVec
	cost         *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	ttft         *prometheus.HistogramVec
	fallbacks    *prometheus.CounterVec
	cacheHits    *prometheus.CounterVec
	reserved     *prometheus.GaugeVec
}

// Outcomes of warden_model_requests_total: a call's status, or cache_hit
// for an answer served from the cache.
const outcomeCacheHit = "cache_hit"

func newModelMetrics() *modelMetrics {
	ad := []string{"alias", "deployment"}
	// Model calls take from tens of milliseconds to minutes.
	buckets := []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	return &modelMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_model_requests_total",
			Help: "Model calls by operation (chat, responses, embeddings) and outcome: ok, cut (a stream ended early), rejected (the upstream refused, 4xx), failed (no deployment answered), cache_hit. The deployment is the one that answered; empty when none did."},
			[]string{"alias", "deployment", "operation", "outcome"}),
		inputTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_model_input_tokens_total",
			Help: "Input (prompt) tokens charged, per deployment that answered (every answer of a cascade)."}, ad),
		outputTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_model_output_tokens_total",
			Help: "Output (completion) tokens charged, per deployment that answered."}, ad),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_model_cost_micros_total",
			Help: "Cost charged to tenants' budgets, in micro-units of the budget currency."}, ad),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "warden_model_upstream_latency_seconds",
			Help: "Time a deployment took to answer an attempt: the whole body, or a stream's first event. Failed attempts included.", Buckets: buckets}, ad),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "warden_model_time_to_first_token_seconds",
			Help: "Streamed calls: time from the request to the first event sent to the agent.", Buckets: buckets}, ad),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_model_fallbacks_total",
			Help: "Attempts that failed (or, in a cascade, failed their check) and moved on to the next deployment; the deployment is the one left."}, ad),
		cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "warden_model_cache_hits_total",
			Help: "Calls answered from the alias's cache: not sent upstream, charged nothing. The deployment is the one whose answer was kept."}, ad),
		reserved: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "warden_model_reserved_micros",
			Help: "Budget held by model calls in flight: their worst cases, reserved before the upstream call, released when they settle."}, []string{"alias"}),
	}
}

func (m *modelMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.inputTokens, m.outputTokens, m.cost, m.latency, m.ttft, m.fallbacks, m.cacheHits, m.reserved}
}

func (m *modelMetrics) Reserved(alias string, micros int64) {
	m.reserved.WithLabelValues(alias).Add(float64(micros))
}

func (m *modelMetrics) Settled(c models.Call) {
	if c.ReservedMicros > 0 {
		m.reserved.WithLabelValues(c.Alias).Sub(float64(c.ReservedMicros))
	}
	outcome := c.Status
	if c.CacheHit {
		outcome = outcomeCacheHit
		m.cacheHits.WithLabelValues(c.Alias, c.Deployment).Inc()
	}
	op := c.Operation
	if op == "" {
		op = models.OpChat
	}
	m.requests.WithLabelValues(c.Alias, c.Deployment, op, outcome).Inc()
	for i, a := range c.Attempts {
		m.latency.WithLabelValues(c.Alias, a.Deployment).Observe((time.Duration(a.LatencyMS) * time.Millisecond).Seconds())
		if a.InputTokens > 0 || a.OutputTokens > 0 || a.CostMicros > 0 {
			m.inputTokens.WithLabelValues(c.Alias, a.Deployment).Add(float64(a.InputTokens))
			m.outputTokens.WithLabelValues(c.Alias, a.Deployment).Add(float64(a.OutputTokens))
			m.cost.WithLabelValues(c.Alias, a.Deployment).Add(float64(a.CostMicros))
		}
		if a.Error != "" && i < len(c.Attempts)-1 {
			m.fallbacks.WithLabelValues(c.Alias, a.Deployment).Inc()
		}
	}
	if c.Stream && !c.CacheHit && c.HTTPStatus == 200 && c.Deployment != "" {
		m.ttft.WithLabelValues(c.Alias, c.Deployment).Observe(c.TTFT.Seconds())
	}
}

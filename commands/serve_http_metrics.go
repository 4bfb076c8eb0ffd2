package commands

import (
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcphttp"
)

// httpMetrics are serve-http's Prometheus metrics, served on their own
// listener (--metrics-listen), never on the MCP one.
type httpMetrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	requests *prometheus.HistogramVec
	inFlight prometheus.Gauge
	refused  *prometheus.CounterVec
	authFail *prometheus.CounterVec
}

func newHTTPMetrics() *httpMetrics {
	m := &httpMetrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rukh_tool_calls_total",
			Help: "tools/call invocations by endpoint, command and outcome."}, []string{"endpoint", "command", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rukh_tool_call_duration_seconds",
			Help: "tools/call invocation time by endpoint and command.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)},
			[]string{"endpoint", "command"}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rukh_http_request_duration_seconds",
			Help: "MCP HTTP request time by HTTP status.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)},
			[]string{"code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rukh_http_requests_in_flight",
			Help: "MCP HTTP requests being served (listen streams included)."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rukh_http_rejected_total",
			Help: "Requests refused before anything ran, by endpoint and reason (auth, scope, rate, host, origin)."}, []string{"endpoint", "reason"}),
		authFail: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rukh_http_auth_failures_total",
			Help: "Requests refused for a missing, bad or too weak credential, by endpoint."}, []string{"endpoint"}),
	}
	m.reg.MustRegister(m.calls, m.latency, m.requests, m.inFlight, m.refused, m.authFail)
	return m
}

// rejected counts a request refused before anything ran.
func (m *httpMetrics) rejected(endpoint, reason string) {
	m.refused.WithLabelValues(endpoint, reason).Inc()
	if reason == "auth" || reason == "scope" {
		m.authFail.WithLabelValues(endpoint).Inc()
	}
}

// called records a finished invocation.
func (m *httpMetrics) called(endpoint string, inv *kernel.Invocation, res kernel.Result, d time.Duration) {
	m.calls.WithLabelValues(endpoint, inv.Command.ID, string(res.Outcome)).Inc()
	m.latency.WithLabelValues(endpoint, inv.Command.ID).Observe(d.Seconds())
}

// wrap measures every MCP request.
func (m *httpMetrics) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, mcphttp.PathPrefix) {
			h.ServeHTTP(w, r)
			return
		}
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		start := time.Now()
		h.ServeHTTP(sw, r)
		m.requests.WithLabelValues(http.StatusText(sw.code)).Observe(time.Since(start).Seconds())
	})
}

// handler serves /metrics and the health checks on the metrics listener.
func (m *httpMetrics) handler(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /healthz", h)
	mux.Handle("GET /readyz", h)
	return mux
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (flush, write
// deadlines).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

package serve

import (
	"bytes"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcphttp"
)

// httpMetrics are serve-http's Prometheus metrics, served on their own
// listener (--metrics-listen), never on the MCP one, in the text exposition
// format (version 0.0.4). Written here rather than with the Prometheus
// client library: its package initialisation (a default registry with Go
// and process collectors, protobuf descriptors) would cost every rukh
// process, the CLI and serve-mcp included, time at start
// (docs/performance.md).
type httpMetrics struct {
	calls    *metricVec
	byCred   *metricVec
	latency  *metricVec
	requests *metricVec
	inFlight *metricVec
	refused  *metricVec
	authFail *metricVec
	all      []*metricVec // in exposition order: by name
}

func newHTTPMetrics() *httpMetrics {
	m := &httpMetrics{
		calls: newMetricVec("rukh_tool_calls_total", "counter",
			"tools/call invocations by endpoint, command and outcome.", nil, "endpoint", "command", "outcome"),
		byCred: newMetricVec("rukh_tool_calls_by_credential_total", "counter",
			"tools/call invocations by endpoint and credential kind (static, short-lived, one-time, oauth, none).", nil, "endpoint", "credential"),
		latency: newMetricVec("rukh_tool_call_duration_seconds", "histogram",
			"tools/call invocation time by endpoint and command.", exponentialBuckets(0.001, 4, 10), "endpoint", "command"),
		requests: newMetricVec("rukh_http_request_duration_seconds", "histogram",
			"MCP HTTP request time by HTTP status.", exponentialBuckets(0.0005, 4, 10), "code"),
		inFlight: newMetricVec("rukh_http_requests_in_flight", "gauge",
			"MCP HTTP requests being served (listen streams included).", nil),
		refused: newMetricVec("rukh_http_rejected_total", "counter",
			"Requests refused before anything ran, by endpoint and reason (auth, scope, rate, host, origin, unavailable).", nil, "endpoint", "reason"),
		authFail: newMetricVec("rukh_http_auth_failures_total", "counter",
			"Requests refused for a missing, bad or too weak credential, by endpoint.", nil, "endpoint"),
	}
	m.inFlight.add(0) // an unlabelled gauge is exposed from the start
	m.all = []*metricVec{m.calls, m.byCred, m.latency, m.requests, m.inFlight, m.refused, m.authFail}
	slices.SortFunc(m.all, func(a, b *metricVec) int { return strings.Compare(a.name, b.name) })
	return m
}

// rejected counts a request refused before anything ran.
func (m *httpMetrics) rejected(endpoint, reason string) {
	m.refused.add(1, endpoint, reason)
	if reason == "auth" || reason == "scope" {
		m.authFail.add(1, endpoint)
	}
}

// called records a finished invocation.
func (m *httpMetrics) called(endpoint string, inv *kernel.Invocation, res kernel.Result, d time.Duration) {
	m.calls.add(1, endpoint, inv.Command.ID, string(res.Outcome))
	cred := inv.Caller.Credential
	if cred == "" {
		cred = kernel.CredentialNone
	}
	m.byCred.add(1, endpoint, cred)
	m.latency.observe(d.Seconds(), endpoint, inv.Command.ID)
}

// wrap measures every MCP request.
func (m *httpMetrics) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, mcphttp.PathPrefix) {
			h.ServeHTTP(w, r)
			return
		}
		m.inFlight.add(1)
		defer m.inFlight.add(-1)
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		start := time.Now()
		h.ServeHTTP(sw, r)
		m.requests.observe(time.Since(start).Seconds(), http.StatusText(sw.code))
	})
}

// handler serves /metrics and the health checks on the metrics listener.
func (m *httpMetrics) handler(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		var b bytes.Buffer
		for _, v := range m.all {
			v.write(&b)
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(b.Bytes())
	})
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

// metricVec is one metric family: a counter, gauge or histogram with a
// value (or bucket counts) per label set.
type metricVec struct {
	name, kind, help string
	labels           []string  // as given to add/observe
	order            []int     // indexes of labels sorted by name: exposition order
	buckets          []float64 // upper bounds, histograms only

	mu     sync.Mutex
	series map[string]*series // by the NUL-joined label values
}

type series struct {
	values []string
	value  float64  // counter, gauge; the sum of a histogram
	counts []uint64 // per bucket (not cumulative), then the count of all
}

func newMetricVec(name, kind, help string, buckets []float64, labels ...string) *metricVec {
	v := &metricVec{name: name, kind: kind, help: help, labels: labels, buckets: buckets, series: map[string]*series{}}
	for i := range labels {
		v.order = append(v.order, i)
	}
	slices.SortFunc(v.order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return v
}

func (v *metricVec) get(values []string) *series {
	k := strings.Join(values, "\x00")
	s := v.series[k]
	if s == nil {
		s = &series{values: slices.Clone(values)}
		if v.buckets != nil {
			s.counts = make([]uint64, len(v.buckets)+1)
		}
		v.series[k] = s
	}
	return s
}

func (v *metricVec) add(d float64, values ...string) {
	v.mu.Lock()
	v.get(values).value += d
	v.mu.Unlock()
}

func (v *metricVec) observe(x float64, values ...string) {
	v.mu.Lock()
	s := v.get(values)
	s.value += x
	i, _ := slices.BinarySearch(v.buckets, x) // first bound ≥ x
	s.counts[i]++
	v.mu.Unlock()
}

// write appends the family in the text format; a family with no series
// yet is left out, as the Prometheus client does.
func (v *metricVec) write(b *bytes.Buffer) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.series) == 0 {
		return
	}
	b.WriteString("# HELP " + v.name + " " + escapeHelp(v.help) + "\n")
	b.WriteString("# TYPE " + v.name + " " + v.kind + "\n")
	var all []*series
	for _, s := range v.series {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b *series) int {
		for _, i := range v.order {
			if c := strings.Compare(a.values[i], b.values[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	for _, s := range all {
		if v.buckets == nil {
			b.WriteString(v.name + v.labelText(s, "") + " " + formatFloat(s.value) + "\n")
			continue
		}
		var n uint64
		for i, le := range v.buckets {
			n += s.counts[i]
			b.WriteString(v.name + "_bucket" + v.labelText(s, formatFloat(le)) + " " + strconv.FormatUint(n, 10) + "\n")
		}
		n += s.counts[len(v.buckets)]
		b.WriteString(v.name + "_bucket" + v.labelText(s, "+Inf") + " " + strconv.FormatUint(n, 10) + "\n")
		b.WriteString(v.name + "_sum" + v.labelText(s, "") + " " + formatFloat(s.value) + "\n")
		b.WriteString(v.name + "_count" + v.labelText(s, "") + " " + strconv.FormatUint(n, 10) + "\n")
	}
}

// labelText is {name="value",…} in label-name order, then le when given.
func (v *metricVec) labelText(s *series, le string) string {
	var pairs []string
	for _, i := range v.order {
		pairs = append(pairs, v.labels[i]+`="`+escapeLabel(s.values[i])+`"`)
	}
	if le != "" {
		pairs = append(pairs, `le="`+le+`"`)
	}
	if len(pairs) == 0 {
		return ""
	}
	return "{" + strings.Join(pairs, ",") + "}"
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// exponentialBuckets is n upper bounds from start, each factor times the last.
func exponentialBuckets(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

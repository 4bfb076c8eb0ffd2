package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// The exposition is what Prometheus scrapes: families by name, label
// names sorted, series sorted by label values, cumulative buckets with
// le last, escaped label values, and no family before its first sample
// (but the unlabelled gauge).
func TestHTTPMetricsExposition(t *testing.T) {
	m := newHTTPMetrics()
	rec := httptest.NewRecorder()
	m.handler(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if got, want := rec.Body.String(), "# HELP rukh_http_requests_in_flight MCP HTTP requests being served (listen streams included).\n"+
		"# TYPE rukh_http_requests_in_flight gauge\nrukh_http_requests_in_flight 0\n"; got != want {
		t.Fatalf("fresh metrics:\n%s\nwant:\n%s", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}

	m.rejected("remote", "scope")
	m.rejected("remote", "scope")
	m.rejected("open", "rate")
	m.rejected(`we"ird\`+"\n", "auth")
	inv := &kernel.Invocation{Command: &kernel.Command{ID: "site.build"}}
	oauthInv := &kernel.Invocation{Command: inv.Command, Caller: kernel.Caller{Credential: "oauth", Issuer: "https://idp.example"}}
	m.called("local", oauthInv, kernel.Result{Outcome: kernel.Succeeded}, 3*time.Millisecond)
	m.called("local", inv, kernel.Result{Outcome: kernel.Succeeded}, time.Millisecond) // on a bound: counted in it
	m.called("local", inv, kernel.Result{Outcome: kernel.CommandFailed}, 10*time.Minute)
	m.inFlight.add(1)

	rec = httptest.NewRecorder()
	m.handler(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	want := `# HELP rukh_http_auth_failures_total Requests refused for a missing, bad or too weak credential, by endpoint.
# TYPE rukh_http_auth_failures_total counter
rukh_http_auth_failures_total{endpoint="remote"} 2
rukh_http_auth_failures_total{endpoint="we\"ird\\\n"} 1
# HELP rukh_http_rejected_total Requests refused before anything ran, by endpoint and reason (auth, scope, rate, host, origin, unavailable).
# TYPE rukh_http_rejected_total counter
rukh_http_rejected_total{endpoint="open",reason="rate"} 1
rukh_http_rejected_total{endpoint="remote",reason="scope"} 2
rukh_http_rejected_total{endpoint="we\"ird\\\n",reason="auth"} 1
# HELP rukh_http_requests_in_flight MCP HTTP requests being served (listen streams included).
# TYPE rukh_http_requests_in_flight gauge
rukh_http_requests_in_flight 1
# HELP rukh_tool_call_duration_seconds tools/call invocation time by endpoint and command.
# TYPE rukh_tool_call_duration_seconds histogram
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="0.001"} 1
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="0.004"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="0.016"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="0.064"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="0.256"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="1.024"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="4.096"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="16.384"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="65.536"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="262.144"} 2
rukh_tool_call_duration_seconds_bucket{command="site.build",endpoint="local",le="+Inf"} 3
rukh_tool_call_duration_seconds_sum{command="site.build",endpoint="local"} 600.004
rukh_tool_call_duration_seconds_count{command="site.build",endpoint="local"} 3
# HELP rukh_tool_calls_by_credential_total tools/call invocations by endpoint and credential kind (static, short-lived, one-time, oauth, none).
# TYPE rukh_tool_calls_by_credential_total counter
rukh_tool_calls_by_credential_total{credential="none",endpoint="local"} 2
rukh_tool_calls_by_credential_total{credential="oauth",endpoint="local"} 1
# HELP rukh_tool_calls_total tools/call invocations by endpoint, command and outcome.
# TYPE rukh_tool_calls_total counter
rukh_tool_calls_total{command="site.build",endpoint="local",outcome="command_failed"} 1
rukh_tool_calls_total{command="site.build",endpoint="local",outcome="succeeded"} 2
`
	if string(body) != want {
		t.Errorf("metrics:\n%s\nwant:\n%s", body, want)
	}
}

package main

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// authProfile publishes the auth fixture on three HTTP endpoints: remote
// (bearer, the three levels), second (bearer, another endpoint for the
// same commands) and open (httpAuth none, on loopback).
const authProfile = `{"endpoints":{
 "remote":{"namespace":"auth-remote","transports":["http"],"publish":{"packages":["auth.fake"]},
  "security":{"default":"standard","commands":{"auth.elev":"elevated","auth.strict":"strict","auth.other":"strict"}}},
 "second":{"namespace":"auth-second","transports":["http"],"publish":{"packages":["auth.fake"]}},
 "open":{"namespace":"auth-open","transports":["http"],"httpAuth":"none","publish":{"packages":["auth.fake"]},
  "security":{"commands":{"auth.strict":"strict"}}}}}`

// authServer is serve-http over the auth fixture, and what the test needs
// to call it and look at what ran.
type authServer struct {
	t      *testing.T
	bin    string
	home   string
	dir    string // serve-http's working directory: the children's calls/
	base   string
	stderr *lockedBuffer
	tools  map[string]map[string]string // endpoint → command id → tool name

	mu     sync.Mutex
	tokens []string // every token minted, to search for at the end
}

func newAuthServer(t *testing.T) *authServer {
	bin := buildRukh(t)
	dir := t.TempDir()
	pkg := copyInteropFixture(t, "testdata/auth/pkg", dir)
	home := filepath.Join(dir, "home")
	profile := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profile, []byte(authProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, home, "activate", "auth.fake")
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	s := &authServer{t: t, bin: bin, home: home, dir: dir, tools: map[string]map[string]string{}}
	s.base, s.stderr = startHTTPServer(t, bin, home, "--rate", "0", "--metrics-listen", "127.0.0.1:0")
	return s
}

func (s *authServer) url(endpoint string) string {
	return s.base + "/mcp/v1/auth-" + endpoint + "/" + endpoint
}

// mint runs an agent verb that prints a token (--json) and returns it.
func (s *authServer) mint(args ...string) string {
	s.t.Helper()
	token, _ := s.mintExpiring(args...)
	return token
}

// mintExpiring is mint, with the token's expiry (zero for a static key).
func (s *authServer) mintExpiring(args ...string) (string, time.Time) {
	s.t.Helper()
	var rep struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expiresAt"`
	}
	out := mustRukh(s.t, s.bin, s.home, append(args, "--json")...)
	if err := stdjson.Unmarshal([]byte(out), &rep); err != nil || !strings.HasPrefix(rep.Token, "rukh_") {
		s.t.Fatalf("rukh %s: no token in %q (%v)", strings.Join(args, " "), out, err)
	}
	s.mu.Lock()
	s.tokens = append(s.tokens, rep.Token)
	s.mu.Unlock()
	return rep.Token, rep.ExpiresAt
}

// auditCount counts the audit records of agent with credential kind.
func (s *authServer) auditCount(agent, kind string) int {
	s.t.Helper()
	var audit struct {
		Records []struct{ Agent, Credential string } `json:"records"`
	}
	if err := stdjson.Unmarshal([]byte(mustRukh(s.t, s.bin, s.home, "audit", "--limit", "0", "--json")), &audit); err != nil {
		s.t.Fatal(err)
	}
	n := 0
	for _, r := range audit.Records {
		if r.Agent == agent && r.Credential == kind {
			n++
		}
	}
	return n
}

// rememberedToken mints a short-lived token of agent, calls command with
// it twice, waits for the audit of those calls, then lists with it: the
// server has seen it work, and the store stays unchanged until it expires.
// The token's lifetime must hold all that; where a busy host took longer,
// the attempt tells nothing and is made again with a longer lifetime. It
// returns the token, its expiry and the calls that ran.
func (s *authServer) rememberedToken(agent, command string) (string, time.Time, int) {
	s.t.Helper()
	ran := 0
	for ttl := 2 * time.Second; ; ttl *= 2 {
		if ttl > 2*time.Minute {
			s.t.Fatalf("a %s token expired before two calls and a list: the host is too slow for this test", ttl/2)
		}
		token, exp := s.mintExpiring("agent", "token", agent, "--ttl", ttl.String())
		live := true
		for i := range 2 {
			before := s.runs(command)
			rep := s.call("remote", token, command)
			if rep.status == 401 && !time.Now().Before(exp) {
				ran += s.runs(command) - before
				live = false
				break
			}
			s.expect(fmt.Sprintf("%s's short-lived token, call %d", agent, i+1), rep, 200, command, before, "")
			ran++
		}
		if !live {
			continue
		}
		// Once the audit records are written, nothing writes the store
		// until the token expires: a list (no record) lets the server
		// remember it for a stamp that then stays the same.
		for s.auditCount(agent, "short-lived") < ran && time.Now().Before(exp) {
			time.Sleep(50 * time.Millisecond)
		}
		rep := s.do("remote", token, "tools/list", "", 3)
		if rep.status == 200 {
			return token, exp, ran
		}
		if time.Now().Before(exp) {
			s.t.Fatalf("tools/list with a live token: %d %s", rep.status, rep.body)
		}
	}
}

type authReply struct {
	status int
	auth   string // WWW-Authenticate
	retry  string // Retry-After
	body   string
}

// do posts one modern-era request with the token (none when "").
func (s *authServer) do(endpoint, token, method, tool string, id int) authReply {
	s.t.Helper()
	params := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if tool != "" {
		params = `"name":"` + tool + `","arguments":{},` + params
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, id, method, params)
	r, _ := http.NewRequest("POST", s.url(endpoint), strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Method", method)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if tool != "" {
		r.Header.Set("Mcp-Name", tool)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return authReply{status: res.StatusCode, auth: res.Header.Get("WWW-Authenticate"), retry: res.Header.Get("Retry-After"), body: string(out)}
}

// call calls command on endpoint with token.
func (s *authServer) call(endpoint, token, command string) authReply {
	s.t.Helper()
	return s.do(endpoint, token, "tools/call", s.tool(endpoint, token, command), 1)
}

// tool finds command's tool name on endpoint by listing with token.
func (s *authServer) tool(endpoint, token, command string) string {
	s.t.Helper()
	if names := s.tools[endpoint]; names != nil {
		return names[command]
	}
	rep := s.do(endpoint, token, "tools/list", "", 1)
	var list struct {
		Result struct {
			Tools []struct {
				Name  string `json:"name"`
				Title string `json:"title"`
			} `json:"tools"`
		} `json:"result"`
	}
	if rep.status != 200 || stdjson.Unmarshal([]byte(rep.body), &list) != nil || len(list.Result.Tools) != 4 {
		s.t.Fatalf("tools/list on %s: %d %s", endpoint, rep.status, rep.body)
	}
	names := map[string]string{}
	for _, tl := range list.Result.Tools {
		for _, c := range []struct{ id, title string }{{"auth.std", "A standard command"}, {"auth.elev", "An elevated command"},
			{"auth.strict", "A strict command"}, {"auth.other", "Another strict command"}} {
			if tl.Title == c.title {
				names[c.id] = tl.Name
			}
		}
	}
	s.tools[endpoint] = names
	return names[command]
}

// runs counts the calls of command that ran: each leaves its invoke line
// in calls/ (the fixture writes it before it reports).
func (s *authServer) runs(command string) int {
	s.t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.dir, "calls", "*.invoke"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			s.t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"command":"`+command+`"`)) {
			n++
		}
	}
	return n
}

// expect checks a reply's status and, for a call that ran, that exactly
// one more call of command ran with the caller it should carry.
func (s *authServer) expect(what string, rep authReply, status int, command string, ranBefore int, caller string) {
	s.t.Helper()
	if rep.status != status {
		s.t.Errorf("%s: status %d, want %d\n%s", what, rep.status, status, rep.body)
	}
	switch status {
	case 401:
		if rep.auth != `Bearer realm="rukh"` {
			s.t.Errorf("%s: WWW-Authenticate %q", what, rep.auth)
		}
	case 403:
		if !strings.Contains(rep.auth, `error="insufficient_scope"`) {
			s.t.Errorf("%s: WWW-Authenticate %q", what, rep.auth)
		}
	case 200:
		if !strings.Contains(rep.body, `"outcome":"succeeded"`) {
			s.t.Errorf("%s: %s", what, rep.body)
		}
	}
	want := ranBefore
	if status == 200 {
		want++
	}
	if got := s.runs(command); got != want {
		s.t.Errorf("%s: %d call(s) of %s ran, want %d", what, got-ranBefore, command, want-ranBefore)
	}
	if status == 200 && caller != "" {
		if !s.ranWith(command, caller) {
			s.t.Errorf("%s: no invoke of %s carries the caller %s", what, command, caller)
		}
	}
}

func (s *authServer) ranWith(command, caller string) bool {
	files, _ := filepath.Glob(filepath.Join(s.dir, "calls", "*.invoke"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(`"command":"`+command+`"`)) && bytes.Contains(b, []byte(`"caller":`+caller)) {
			return true
		}
	}
	return false
}

func TestHTTPAuthLevels(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for short-lived tokens to expire")
	}
	s := newAuthServer(t)
	static := s.mint("agent", "add", "bot", "--endpoint", "remote")
	short := s.mint("agent", "token", "bot", "--ttl", "15m")
	const callerOf = `{"transport":"http","endpoint":"remote","subject":"owner","agent":"bot","credential":"%s"}`

	levels := []struct{ command, level string }{{"auth.std", "standard"}, {"auth.elev", "elevated"}, {"auth.strict", "strict"}}
	allowed := map[string][3]bool{
		"static":      {true, false, false},
		"short-lived": {true, true, false},
		"one-time":    {true, true, true},
	}
	for _, kind := range []string{"static", "short-lived", "one-time"} {
		for i, l := range levels {
			token := map[string]string{"static": static, "short-lived": short}[kind]
			if kind == "one-time" {
				token = s.mint("agent", "token", "bot", "--once")
			}
			status := 403
			if allowed[kind][i] {
				status = 200
			}
			before := s.runs(l.command)
			rep := s.call("remote", token, l.command)
			s.expect(kind+" on "+l.level, rep, status, l.command, before, fmt.Sprintf(callerOf, kind))
			if status == 403 && !strings.Contains(rep.body, "rukh agent token bot") {
				t.Errorf("%s on %s: the refusal names no fix: %s", kind, l.level, rep.body)
			}
			if kind == "one-time" {
				// Consumed by the call it authorised: never again.
				before := s.runs(l.command)
				s.expect("one-time on "+l.level+", again", s.call("remote", token, l.command), 401, l.command, before, "")
			}
		}
	}

	// A one-time token bound to a command authorises that one only, and a
	// refused call does not consume it.
	bound := s.mint("agent", "token", "bot", "--once", "--command", "auth.other")
	before := s.runs("auth.strict")
	s.expect("bound one-time on another command", s.call("remote", bound, "auth.strict"), 403, "auth.strict", before, "")
	before = s.runs("auth.other")
	s.expect("bound one-time on its command", s.call("remote", bound, "auth.other"), 200, "auth.other", before, fmt.Sprintf(callerOf, "one-time"))

	// Missing, malformed, unknown, expired, revoked, another endpoint's:
	// all 401, and nothing runs.
	expired, expiredAt := s.mintExpiring("agent", "token", "bot", "--ttl", "1s")
	// A credential that worked, twice, is refused as soon as it is revoked
	// or has expired, whatever the server remembers of it.
	late := s.mint("agent", "add", "late", "--endpoint", "remote")
	for i := range 2 {
		before := s.runs("auth.std")
		s.expect(fmt.Sprintf("late's key, call %d", i+1), s.call("remote", late, "auth.std"), 200, "auth.std", before, "")
	}
	s.mint("agent", "rotate", "late")
	s.mint("agent", "add", "gone", "--endpoint", "remote")
	revoked := s.mint("agent", "token", "gone", "--ttl", "15m")
	mustRukh(t, s.bin, s.home, "agent", "remove", "gone")
	rotated := s.mint("agent", "add", "rot", "--endpoint", "remote")
	s.mint("agent", "rotate", "rot")
	second := s.mint("agent", "add", "bot2", "--endpoint", "second")
	unknown := static[:len(static)-10] + "0000000000"
	before = s.runs("auth.std")
	s.expect("a used key, rotated", s.call("remote", late, "auth.std"), 401, "auth.std", before, "")
	brief, briefAt, briefRan := s.rememberedToken("late", "auth.std")
	// Expired by the clock, whatever the host's speed: wait for both expiries.
	for _, at := range []time.Time{expiredAt, briefAt} {
		time.Sleep(time.Until(at))
	}
	for _, c := range []struct{ what, token string }{
		{"no token", ""}, {"malformed", "not-a-token"}, {"bad checksum", unknown},
		{"expired", expired}, {"revoked (agent removed)", revoked}, {"rotated static key", rotated},
		{"another endpoint's key", second}, {"a used token, expired", brief},
	} {
		before := s.runs("auth.std")
		s.expect(c.what, s.call("remote", c.token, "auth.std"), 401, "auth.std", before, "")
		if rep := s.do("remote", c.token, "tools/list", "", 2); rep.status != 401 {
			t.Errorf("%s: tools/list status %d", c.what, rep.status)
		}
	}
	// The other endpoint's key is good on its own endpoint.
	before = s.runs("auth.std")
	s.expect("second's key on second", s.call("second", second, "auth.std"), 200, "auth.std", before,
		`{"transport":"http","endpoint":"second","subject":"owner","agent":"bot2","credential":"static"}`)

	// httpAuth none on loopback: anonymous, standard commands only.
	before = s.runs("auth.std")
	s.expect("anonymous standard", s.call("open", "", "auth.std"), 200, "auth.std", before,
		`{"transport":"http","endpoint":"open","subject":"owner","agent":"anonymous"}`)
	before = s.runs("auth.strict")
	s.expect("anonymous strict", s.call("open", "", "auth.strict"), 403, "auth.strict", before, "")

	// Every call that ran is in the audit log, with its agent and kind,
	// and so is every call its credential did not authorise.
	var audit struct {
		Records []struct {
			Transport, Agent, Credential, Endpoint, Tool, Command, Outcome, InvocationID string
		} `json:"records"`
	}
	files, _ := filepath.Glob(filepath.Join(s.dir, "calls", "*.invoke"))
	// static on elevated and strict, short-lived on strict, the bound
	// token, anonymous strict; and the three replays of spent tokens.
	const refusals = 8
	// The server writes its records in batches, off the calls' path.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if err := stdjson.Unmarshal([]byte(mustRukh(t, s.bin, s.home, "audit", "--limit", "0", "--json")), &audit); err != nil {
			t.Fatal(err)
		}
		if len(audit.Records) >= len(files)+refusals || time.Now().After(deadline) {
			break
		}
	}
	ran, refused := map[string]int{}, map[string]int{}
	for _, r := range audit.Records {
		replay := r.Outcome == "refused" && r.Command == "" // a spent token: the body is not read
		if r.Transport != "http" || r.Tool == "" || !strings.HasPrefix(r.Command, "auth.") && !replay {
			t.Errorf("audit record %+v", r)
		}
		switch r.Outcome {
		case "succeeded":
			ran[r.Agent+"/"+r.Credential]++
		case "refused":
			if r.InvocationID != "" {
				t.Errorf("a refused call has an invocation: %+v", r)
			}
			refused[r.Agent+"/"+r.Credential+"/"+r.Command]++
		default:
			t.Errorf("audit record %+v", r)
		}
	}
	want := map[string]int{"bot/static": 1, "bot/short-lived": 2, "bot/one-time": 4, "bot2/static": 1, "anonymous/": 1,
		"late/static": 2, "late/short-lived": briefRan}
	if fmt.Sprint(ran) != fmt.Sprint(want) || len(files) != 11+briefRan {
		t.Errorf("audit agents/credentials of calls that ran %v, want %v (%d calls ran)", ran, want, len(files))
	}
	want = map[string]int{"bot/static/auth.elev": 1, "bot/static/auth.strict": 1, "bot/short-lived/auth.strict": 1,
		"bot/one-time/auth.strict": 1, "anonymous//auth.strict": 1, "bot/one-time/": 3}
	if fmt.Sprint(refused) != fmt.Sprint(want) {
		t.Errorf("audit of refused calls %v, want %v", refused, want)
	}

	// The refusals are counted by reason.
	metrics := s.metrics()
	for _, m := range []string{`rukh_http_rejected_total{endpoint="remote",reason="scope"} 4`, `rukh_http_rejected_total{endpoint="open",reason="scope"} 1`} {
		if !strings.Contains(metrics, m+"\n") {
			t.Errorf("no %s in the metrics:\n%s", m, metrics)
		}
	}

	s.noTokenLeaks()
}

var metricsRE = regexp.MustCompile(`metrics on (http://\S+)`)

// metrics fetches serve-http's Prometheus metrics.
func (s *authServer) metrics() string {
	s.t.Helper()
	m := metricsRE.FindStringSubmatch(s.stderr.String())
	if m == nil {
		s.t.Fatalf("no metrics address in:\n%s", s.stderr.String())
	}
	res, err := http.Get(m[1])
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestHTTPOneTimeRace: 50 concurrent calls with one one-time token; one
// runs, the others are refused with 401.
func TestHTTPOneTimeRace(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: races 50 requests on a one-time token")
	}
	s := newAuthServer(t)
	s.mint("agent", "add", "bot", "--endpoint", "remote")
	token := s.mint("agent", "token", "bot", "--once")
	tool := s.tool("remote", s.mint("agent", "token", "bot", "--ttl", "15m"), "auth.strict")
	before := s.runs("auth.strict")
	const n = 50
	statuses := make(chan int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses <- s.do("remote", token, "tools/call", tool, i+1).status
		}()
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if count[200] != 1 || count[401] != n-1 {
		t.Errorf("statuses %v, want one 200 and %d 401", count, n-1)
	}
	if got := s.runs("auth.strict") - before; got != 1 {
		t.Errorf("%d calls ran, want exactly 1", got)
	}
	s.noTokenLeaks()
}

// noTokenLeaks searches everything a call could reach for every token
// minted: the children's environment, stdin, argv and invoke line (calls/),
// the home (the store with its audit log, the diagnostics), and the
// server's stderr.
func (s *authServer) noTokenLeaks() {
	s.t.Helper()
	// Diagnostics are saved after each response is written: wait for all.
	calls, _ := filepath.Glob(filepath.Join(s.dir, "calls", "*.invoke"))
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s.diagnostics() >= len(calls) {
			break
		}
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.dir, path)
		for _, part := range []string{"calls", "home"} {
			if strings.HasPrefix(rel, part+string(filepath.Separator)) {
				seen[part] = true
			}
		}
		if strings.HasSuffix(rel, ".env") && !bytes.Contains(b, []byte("RUKH_PROTOCOL=rukh.invoke/1")) {
			s.t.Errorf("%s: not the child's environment", rel)
		}
		if strings.Contains(rel, "diag") && bytes.Contains(b, []byte("ext: ran")) {
			seen["diagnostics"] = true
		}
		for _, tok := range s.tokens {
			if bytes.Contains(b, []byte(tok)) {
				s.t.Errorf("a token is in %s", rel)
			}
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, part := range []string{"calls", "home", "diagnostics"} {
		if !seen[part] {
			s.t.Errorf("nothing found in %s: the search proves nothing", part)
		}
	}
	audit := mustRukh(s.t, s.bin, s.home, "audit", "--limit", "0", "--json")
	logs := s.stderr.String()
	if !strings.Contains(logs, "refused") {
		s.t.Errorf("serve-http logged no refusal:\n%s", logs)
	}
	for _, tok := range s.tokens {
		if strings.Contains(audit, tok) {
			s.t.Error("a token is in the audit log")
		}
		if strings.Contains(logs, tok) || strings.Contains(logs, tok[9:20]) {
			s.t.Errorf("a token is in serve-http's stderr:\n%s", logs)
		}
	}
}

// diagnostics counts the saved diagnostics records of the fixture's calls.
func (s *authServer) diagnostics() int {
	n := 0
	filepath.WalkDir(s.home, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(path, "diag") {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("ext: ran")) {
				n++
			}
		}
		return nil
	})
	return n
}

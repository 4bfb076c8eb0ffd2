package main

import (
	stdjson "encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHTTPReplayRecorded: replays of a spent one-time token are refused
// (401), and each is in the audit log against the token's agent with the
// reason, and in serve-http's log as spent, never as unknown.
func TestHTTPReplayRecorded(t *testing.T) {
	s := newAuthServer(t)
	s.mint("agent", "add", "bot", "--endpoint", "remote")
	token := s.mint("agent", "token", "bot", "--once")
	tool := s.tool("remote", s.mint("agent", "token", "bot", "--ttl", "15m"), "auth.strict")
	before := s.runs("auth.strict")
	s.expect("the one-time token's call", s.call("remote", token, "auth.strict"), 200, "auth.strict", before, "")
	const replays = 4
	for i := range replays - 1 {
		s.expect("a replay", s.do("remote", token, "tools/call", tool, i+2), 401, "auth.strict", before+1, "")
	}
	if rep := s.do("remote", token, "tools/list", "", 9); rep.status != 401 {
		t.Errorf("tools/list with a spent token: %d %s", rep.status, rep.body)
	}

	type record struct{ Agent, Credential, Endpoint, Tool, Command, Outcome, Reason, InvocationID string }
	var refused []record
	// The server writes its records in batches, off the calls' path.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var audit struct{ Records []record }
		if err := stdjson.Unmarshal([]byte(mustRukh(t, s.bin, s.home, "audit", "--limit", "0", "--json")), &audit); err != nil {
			t.Fatal(err)
		}
		refused = refused[:0]
		for _, r := range audit.Records {
			if r.Outcome == "refused" {
				refused = append(refused, r)
			}
		}
		if len(refused) >= replays || time.Now().After(deadline) {
			break
		}
	}
	if len(refused) != replays {
		t.Fatalf("%d refused records, want %d: %+v", len(refused), replays, refused)
	}
	for i, r := range refused {
		want := record{Agent: "bot", Credential: "one-time", Endpoint: "remote", Tool: tool, Outcome: "refused",
			Reason: "the one-time token was already spent (a replay)"}
		if i == replays-1 {
			want.Tool = "" // the list names no tool
		}
		if r != want {
			t.Errorf("replay %d recorded as %+v, want %+v", i+1, r, want)
		}
	}
	if table := mustRukh(t, s.bin, s.home, "audit"); !strings.Contains(table, "refused  ") || !strings.Contains(table, "already spent") {
		t.Errorf("rukh audit does not show the replays:\n%s", table)
	}

	logs := s.stderr.String()
	spent := regexp.MustCompile(`refused a request: rukh_otk_[0-9a-f]{8}: invalid bearer token: one-time token already spent`)
	if n := len(spent.FindAllString(logs, -1)); n != replays {
		t.Errorf("%d replays logged as spent, want %d:\n%s", n, replays, logs)
	}
	if strings.Contains(logs, "unknown token") {
		t.Errorf("a replay was logged as an unknown token:\n%s", logs)
	}
	s.noTokenLeaks()
}

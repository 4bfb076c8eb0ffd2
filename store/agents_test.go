package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

func testStore(t *testing.T) *Store {
	t.Helper()
	s := New(filepath.Join(t.TempDir(), "home"))
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("store invariants after the test: %v", err)
		}
	})
	return s
}

// setClock makes the store's clock return *at, restored after the test.
func setClock(t *testing.T, at *time.Time) {
	t.Helper()
	old := clock
	clock = func() time.Time { return *at }
	t.Cleanup(func() { clock = old })
}

func TestTokenFormat(t *testing.T) {
	for kind, prefix := range map[string]string{kernel.CredentialStatic: "rukh_key_", kernel.CredentialShortLived: "rukh_agt_", kernel.CredentialOneTime: "rukh_otk_"} {
		tok, h, err := newToken(kind)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tok, prefix) || len(tok) != TokenLen || !is62(tok[9:]) {
			t.Errorf("%s token %q: want prefix %s, %d characters, base62 after it", kind, tok, prefix, TokenLen)
		}
		gotKind, gotHash, err := ParseToken(tok)
		if err != nil || gotKind != kind || gotHash != h || h != HashToken(tok) {
			t.Errorf("ParseToken(%s token) = %s, %x, %v", kind, gotKind, gotHash[:4], err)
		}
		// Every one-character typo, anywhere, fails the checksum or the
		// shape before anything is looked up.
		for i := range tok {
			for _, c := range []byte{'0', 'Z', 'a', '_'} {
				if tok[i] == c {
					continue
				}
				typo := tok[:i] + string(c) + tok[i+1:]
				if _, _, err := ParseToken(typo); !errors.Is(err, ErrTokenMalformed) {
					t.Fatalf("typo at %d (%q) accepted: %v", i, c, err)
				}
			}
		}
		if _, _, err := ParseToken(tok + "0"); !errors.Is(err, ErrTokenMalformed) {
			t.Errorf("a longer token was accepted: %v", err)
		}
		if _, _, err := ParseToken(tok[:len(tok)-1]); !errors.Is(err, ErrTokenMalformed) {
			t.Errorf("a shorter token was accepted: %v", err)
		}
		if err := func() error { _, _, err := ParseToken(tok[:len(tok)-1] + "x"); return err }(); err != nil && strings.Contains(err.Error(), tok[9:20]) {
			t.Errorf("the error quotes the token: %v", err)
		}
	}
	a, _, _ := newToken(kernel.CredentialStatic)
	b, _, _ := newToken(kernel.CredentialStatic)
	if a == b {
		t.Error("two tokens are equal")
	}
}

func TestAgentLifecycle(t *testing.T) {
	s := testStore(t)
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	setClock(t, &at)

	key, err := s.AddAgent("ci-bot", "remote")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddAgent("ci-bot", "remote"); kernel.ErrorCode(err) != kernel.CodeConflict {
		t.Errorf("second add: %v", err)
	}
	for _, bad := range []string{"Bad", "anonymous", "", "-x"} {
		if _, err := s.AddAgent(bad, "remote"); kernel.ErrorCode(err) != kernel.CodeInvalid {
			t.Errorf("AddAgent(%q): %v", bad, err)
		}
	}
	c, err := s.Authenticate(key.Token)
	if err != nil || c.Agent != "ci-bot" || c.Endpoint != "remote" || c.Kind != kernel.CredentialStatic || !c.ExpiresAt.IsZero() {
		t.Fatalf("static key: %+v, %v", c, err)
	}

	short, err := s.MintToken("ci-bot", kernel.CredentialShortLived, 15*time.Minute, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err = s.Authenticate(short.Token)
	if err != nil || c.Kind != kernel.CredentialShortLived || !c.ExpiresAt.Equal(at.Add(15*time.Minute)) {
		t.Fatalf("short-lived: %+v, %v", c, err)
	}
	for _, ttl := range []time.Duration{0, 25 * time.Hour, -time.Minute} {
		if _, err := s.MintToken("ci-bot", kernel.CredentialShortLived, ttl, ""); kernel.ErrorCode(err) != kernel.CodeUsage {
			t.Errorf("ttl %s: %v", ttl, err)
		}
	}
	if _, err := s.MintToken("nobody", kernel.CredentialShortLived, time.Minute, ""); kernel.ErrorCode(err) != kernel.CodeNotFound {
		t.Errorf("unknown agent: %v", err)
	}

	// Expired: reported as such, until purged a week later.
	at = at.Add(15 * time.Minute)
	if _, err := s.Authenticate(short.Token); !errors.Is(err, ErrTokenExpired) || !IsTokenError(err) {
		t.Errorf("expired token: %v", err)
	}
	if _, err := s.Authenticate(key.Token); err != nil {
		t.Errorf("the static key expired: %v", err)
	}
	at = at.Add(endedRetention)
	if n, err := s.PurgeCredentials(); err != nil || n != 1 {
		t.Errorf("purge: %d, %v", n, err)
	}
	if _, err := s.Authenticate(short.Token); !errors.Is(err, ErrTokenUnknown) {
		t.Errorf("purged token: %v", err)
	}

	// Rotate: the old key is revoked at once.
	key2, err := s.RotateAgent("ci-bot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(key.Token); !errors.Is(err, ErrTokenRevoked) {
		t.Errorf("old key after rotate: %v", err)
	}
	if _, err := s.Authenticate(key2.Token); err != nil {
		t.Errorf("new key: %v", err)
	}
	once, err := s.MintToken("ci-bot", kernel.CredentialOneTime, 10*time.Minute, "notes.delete")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := s.Agents()
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents: %+v, %v", agents, err)
	}
	if got := agents[0].Credentials; got[kernel.CredentialStatic] != 1 || got[kernel.CredentialOneTime] != 1 || got[kernel.CredentialShortLived] != 0 {
		t.Errorf("counts %v", got)
	}

	// Remove revokes everything.
	n, err := s.RemoveAgent("ci-bot")
	if err != nil || n != 2 {
		t.Errorf("remove: %d, %v", n, err)
	}
	for _, tok := range []string{key2.Token, once.Token} {
		if _, err := s.Authenticate(tok); !errors.Is(err, ErrTokenRevoked) {
			t.Errorf("after remove: %v", err)
		}
	}
	if _, err := s.RemoveAgent("ci-bot"); kernel.ErrorCode(err) != kernel.CodeNotFound {
		t.Errorf("second remove: %v", err)
	}
	// A well-formed token nobody minted.
	stranger, _, _ := newToken(kernel.CredentialStatic)
	if _, err := s.Authenticate(stranger); !errors.Is(err, ErrTokenUnknown) {
		t.Errorf("stranger: %v", err)
	}
}

func TestAuthenticateWithoutStore(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "home"))
	tok, _, _ := newToken(kernel.CredentialShortLived)
	if _, err := s.Authenticate(tok); !errors.Is(err, ErrTokenUnknown) {
		t.Errorf("no store: %v", err)
	}
	if ok, _ := s.Exists(); ok {
		t.Error("Authenticate created the store")
	}
}

// Only the hash is at rest: no minted token appears in the store file.
func TestTokensNotStored(t *testing.T) {
	s := testStore(t)
	var toks []string
	key, err := s.AddAgent("bot", "e")
	if err != nil {
		t.Fatal(err)
	}
	toks = append(toks, key.Token)
	for _, kind := range []string{kernel.CredentialShortLived, kernel.CredentialOneTime} {
		m, err := s.MintToken("bot", kind, time.Hour, "")
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, m.Token)
	}
	rot, err := s.RotateAgent("bot")
	if err != nil {
		t.Fatal(err)
	}
	toks = append(toks, rot.Token)
	if err := s.AppendAudit(AuditRecord{Agent: "bot", Endpoint: "e", Command: "x.y", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		h := HashToken(tok)
		for _, needle := range []string{tok, tok[9:], tok[9 : 9+tokenBodyLen]} {
			if bytes.Contains(data, []byte(needle)) {
				t.Errorf("the store file contains a token (or its body) %s…", tok[:12])
			}
		}
		if !bytes.Contains(data, h[:]) {
			t.Errorf("the store file does not hold the hash of %s…: the search would find nothing anyway", tok[:12])
		}
	}
}

// Fifty goroutines race to consume one one-time token: exactly one wins.
func TestConsumeOnceRace(t *testing.T) {
	s := testStore(t)
	s.Timeout = 30 * time.Second
	if _, err := s.AddAgent("bot", "e"); err != nil {
		t.Fatal(err)
	}
	once, err := s.MintToken("bot", kernel.CredentialOneTime, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Authenticate(once.Token)
	if err != nil || c.Kind != kernel.CredentialOneTime {
		t.Fatalf("authenticate: %+v %v", c, err)
	}
	// Authenticating does not consume.
	if _, err := s.Authenticate(once.Token); err != nil {
		t.Fatalf("second authenticate: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, spent := 0, 0
	var other []error
	start := make(chan struct{})
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, err := s.ConsumeOnce(c.Hash, "notes.add")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && got.Agent == "bot":
				wins++
			case errors.Is(err, ErrTokenSpent):
				spent++
			default:
				other = append(other, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 || spent != 49 || len(other) > 0 {
		t.Errorf("wins %d, spent %d, other %v", wins, spent, other)
	}
	if _, err := s.Authenticate(once.Token); !errors.Is(err, ErrTokenSpent) {
		t.Errorf("consumed token still authenticates: %v", err)
	}
}

func TestConsumeOnceChecks(t *testing.T) {
	s := testStore(t)
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	setClock(t, &at)
	key, _ := s.AddAgent("bot", "e")
	bound, err := s.MintToken("bot", kernel.CredentialOneTime, time.Minute, "notes.delete")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MintToken("bot", kernel.CredentialShortLived, time.Minute, "notes.delete"); kernel.ErrorCode(err) != kernel.CodeUsage {
		t.Errorf("short-lived bound to a command: %v", err)
	}
	h := HashToken(bound.Token)
	if _, err := s.ConsumeOnce(h, "notes.add"); !errors.Is(err, ErrTokenWrongCommand) {
		t.Errorf("other command: %v", err)
	}
	if c, err := s.ConsumeOnce(h, "notes.delete"); err != nil || c.Command != "notes.delete" {
		t.Errorf("its command: %+v %v", c, err)
	}
	if _, err := s.ConsumeOnce(HashToken(key.Token), "x"); err == nil {
		t.Error("a static key was consumed")
	}
	late, _ := s.MintToken("bot", kernel.CredentialOneTime, time.Minute, "")
	at = at.Add(time.Minute)
	if _, err := s.ConsumeOnce(HashToken(late.Token), "x"); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("expired one-time token: %v", err)
	}
}

// Live tokens per agent are bounded; expired ones stop counting.
func TestMintBound(t *testing.T) {
	s := testStore(t)
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	setClock(t, &at)
	old := maxLiveTokens
	maxLiveTokens = 3
	t.Cleanup(func() { maxLiveTokens = old })
	if _, err := s.AddAgent("bot", "e"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.MintToken("bot", kernel.CredentialShortLived, time.Minute, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.MintToken("bot", kernel.CredentialOneTime, time.Minute, ""); kernel.ErrorCode(err) != kernel.CodeConflict {
		t.Fatalf("over the bound: %v", err)
	}
	at = at.Add(time.Minute)
	if _, err := s.MintToken("bot", kernel.CredentialOneTime, time.Minute, ""); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
}

package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// A spent one-time token is told apart from one never seen until it would
// have expired: a replay is refused as spent, with the credential it was
// (to record whose it is), and consumed by no one, however many race;
// after its expiry the tombstone is purged.
func TestSpentTokenTombstone(t *testing.T) {
	s := newTestStore(t)
	s.Timeout = 30 * time.Second
	var mu sync.Mutex
	at := time.Now()
	t.Cleanup(store.SetClockForTest(func() time.Time { mu.Lock(); defer mu.Unlock(); return at }))
	if _, err := s.AddAgent("bot", "e"); err != nil {
		t.Fatal(err)
	}
	once, err := s.MintToken("bot", kernel.CredentialOneTime, 10*time.Minute, "")
	if err != nil {
		t.Fatal(err)
	}
	h := store.HashToken(once.Token)
	var wg sync.WaitGroup
	var wins, spent int
	var other []error
	start := make(chan struct{})
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := s.ConsumeOnce(h, "notes.add")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrTokenSpent):
				spent++
			default:
				other = append(other, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 || spent != 49 || len(other) > 0 {
		t.Errorf("%d consumed, %d refused as spent, others %v; want 1 and 49", wins, spent, other)
	}
	for i := range 3 {
		c, err := s.Authenticate(once.Token)
		if !errors.Is(err, store.ErrTokenSpent) || !store.IsTokenError(err) || kernel.ErrorCode(err) != kernel.CodeDenied {
			t.Errorf("replay %d: %v, want the token refused as spent", i, err)
		}
		if c.Agent != "bot" || c.Endpoint != "e" || c.Kind != kernel.CredentialOneTime || c.Hash != h {
			t.Errorf("replay %d: credential %+v, want the spent token's", i, c)
		}
	}
	agents, err := s.Agents()
	if err != nil || len(agents) != 1 || agents[0].Credentials[kernel.CredentialOneTime] != 0 {
		t.Errorf("a spent token counts as live: %+v %v", agents, err)
	}
	// Kept while it could still have been used, purged once it expired.
	if n, err := s.PurgeCredentials(); err != nil || n != 0 {
		t.Errorf("purge before the expiry: %d %v", n, err)
	}
	mu.Lock()
	at = at.Add(10 * time.Minute)
	mu.Unlock()
	if n, err := s.PurgeCredentials(); err != nil || n != 1 {
		t.Errorf("purge after the expiry: %d %v, want the tombstone gone", n, err)
	}
	if c, err := s.Authenticate(once.Token); !errors.Is(err, store.ErrTokenUnknown) || c.Agent != "" {
		t.Errorf("after the purge: %+v %v, want unknown", c, err)
	}
}

//go:build linux && !rukh_portable

package kernel

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestNetPoolBacksOff: a spare that cannot be made pauses the making
// (calls make their own meanwhile), and the pool fills again after it.
func TestNetPoolBacksOff(t *testing.T) {
	defer func(f func() (*os.File, error)) { newNetNS = f }(newNetNS)
	drain := func() {
		for {
			select {
			case f := <-netPool.ready:
				f.Close()
			default:
				return
			}
		}
	}
	doneNetNS(takeNetNS()) // the pool exists
	waitFilled := func() {
		for deadline := time.Now().Add(5 * time.Second); netPool.filling.Load() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	waitFilled()
	drain()
	defer drain()
	netPool.calls.Store(1)
	newNetNS = func() (*os.File, error) { return nil, syscall.EMFILE }
	if f := takeNetNS(); f != nil {
		t.Fatal("a namespace from an empty pool")
	}
	doneNetNS(nil)
	waitFilled()
	if time.Until(time.Unix(0, netPool.retryAt.Load())) <= 0 {
		t.Fatal("a failed making did not pause the pool")
	}
	made := 0
	newNetNS = func() (*os.File, error) { made++; return os.Open(os.DevNull) }
	doneNetNS(takeNetNS()) // within the pause: nothing is made
	waitFilled()
	if made != 0 {
		t.Fatalf("%d made during the pause", made)
	}
	netPool.retryAt.Store(0) // the pause is over
	doneNetNS(takeNetNS())
	waitFilled()
	if made != netSpares || len(netPool.ready) != netSpares {
		t.Fatalf("after the pause %d made, %d ready; want %d", made, len(netPool.ready), netSpares)
	}
	if netPool.backoff != 0 {
		t.Errorf("the pause %v outlived a making that worked", netPool.backoff)
	}
}

// TestNetNSRetired: the namespaces of ended calls stay open a while (their
// teardown then comes off the calls' path, several at once) and are all
// closed: at once when netRetireBatch have ended, else soon after.
func TestNetNSRetired(t *testing.T) {
	flushNetNS()
	type end struct{ r, w *os.File }
	retire := func(n int) []end {
		var es []end
		for range n {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			es = append(es, end{r, w})
			retireNetNS(r)
		}
		return es
	}
	closed := func(e end) bool {
		_, err := e.w.Write([]byte{0})
		return err != nil // EPIPE: the retired end is closed
	}
	waitClosed := func(es []end, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for _, e := range es {
			for !closed(e) {
				if time.Now().After(deadline) {
					t.Fatalf("a retired namespace still open after %v", within)
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	few := retire(netRetireBatch - 1)
	if closed(few[0]) {
		t.Fatal("a retired namespace closed at once, before a batch was full")
	}
	waitClosed(few, netRetireAfter+5*time.Second)
	waitClosed(retire(netRetireBatch), 0)
}

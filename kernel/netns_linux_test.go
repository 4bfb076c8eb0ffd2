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
	takeNetNS() // the pool exists
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
	waitFilled()
	if time.Until(time.Unix(0, netPool.retryAt.Load())) <= 0 {
		t.Fatal("a failed making did not pause the pool")
	}
	made := 0
	newNetNS = func() (*os.File, error) { made++; return os.Open(os.DevNull) }
	takeNetNS() // within the pause: nothing is made
	waitFilled()
	if made != 0 {
		t.Fatalf("%d made during the pause", made)
	}
	netPool.retryAt.Store(0) // the pause is over
	takeNetNS()
	waitFilled()
	if made != netSpares || len(netPool.ready) != netSpares {
		t.Fatalf("after the pause %d made, %d ready; want %d", made, len(netPool.ready), netSpares)
	}
	if netPool.backoff != 0 {
		t.Errorf("the pause %v outlived a making that worked", netPool.backoff)
	}
}

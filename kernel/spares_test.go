//go:build unix

package kernel

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A serving process's spare call ends are fresh and close-on-exec, with
// rukh's ends nonblocking and the program's blocking; calls take them and
// they are made again.
func TestSpareCallEnds(t *testing.T) {
	keepSpareCallEnds()
	ready := func() bool {
		spares.mu.Lock()
		defer spares.mu.Unlock()
		return !spares.filling && len(spares.chans) == spareCalls && len(spares.pipes) == 2*spareCalls
	}
	waitFor := func(what string) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !ready(); time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: the spares were not made", what)
			}
		}
	}
	waitFor("at start")
	spares.mu.Lock()
	var all [][2]int
	all = append(append(all, spares.chans...), spares.pipes...)
	spares.mu.Unlock()
	inodes := func(pool [][2]int) map[uint64]bool {
		m := map[uint64]bool{}
		for _, fds := range pool {
			var st unix.Stat_t
			if unix.Fstat(fds[0], &st) == nil {
				m[uint64(st.Ino)] = true
			}
		}
		return m
	}
	before := inodes(all)
	for _, fds := range all {
		for i, fd := range fds {
			fdf, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			if err != nil || fdf&unix.FD_CLOEXEC == 0 {
				t.Errorf("spare descriptor %d (end %d): flags %#x, %v: not close-on-exec", fd, i, fdf, err)
			}
			fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			if nonblock := fl&unix.O_NONBLOCK != 0; err != nil || nonblock != (i == 0) {
				t.Errorf("spare descriptor %d (end %d): nonblocking %v, %v; want only rukh's end", fd, i, nonblock, err)
			}
		}
	}
	for i := range 3 {
		inv := fakeInvocation(t, "echo-invoke", textDecl)
		inv.Stdout, inv.Stderr = &Diagnostics{}, &Diagnostics{}
		if res := NewRunner().Invoke(context.Background(), inv); res.Outcome != Succeeded {
			t.Fatalf("call %d: outcome %s: %s", i, res.Outcome, res.Reason)
		}
	}
	waitFor("after the calls")
	spares.mu.Lock()
	all = append(append(all[:0], spares.chans...), spares.pipes...)
	spares.mu.Unlock()
	for ino := range inodes(all) {
		if before[ino] {
			t.Errorf("a spare made before the calls is still spare after 3 calls: the calls made their own")
		}
	}
}

package kernel

import (
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkStartUnconfined is what the start of an unconfined call's
// program costs on its own, /bin/true started and waited for: a plain
// fork and exec (a direct exec), the same in a PID namespace of its own,
// and the way a call starts it, in a PID namespace under the machine-code
// init, which kills the call's whole tree when rukh dies.
func BenchmarkStartUnconfined(b *testing.B) {
	b.Run("fork-exec", func(b *testing.B) {
		for b.Loop() {
			c := exec.Command("/bin/true")
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pid-namespace", func(b *testing.B) {
		if ok, _ := namespaced(); !ok {
			b.Skip("no PID namespaces here")
		}
		for b.Loop() {
			c := exec.Command("/bin/true")
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID}
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("init", func(b *testing.B) {
		if u, _ := initFor(nil, "", false); !u.contains() {
			b.Skip("no PID namespaces here")
		}
		for b.Loop() {
			u, _ := initFor(nil, "", false)
			c := exec.Command("/bin/true")
			attr := &syscall.SysProcAttr{Setpgid: true}
			plat.procAttr(attr)
			c.SysProcAttr = attr
			t, c, err := startContained(&u, c, "inv_bench", nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			if e := u.readReport("/bin/true", ""); !e.exited || e.ws.ExitStatus() != 0 || e.startErr != "" {
				b.Fatalf("%+v", e)
			}
			c.Wait()
			untrack(t)
		}
	})
}

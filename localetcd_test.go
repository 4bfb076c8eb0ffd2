package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The etcd the tests use runs in a process of its own (localetcd, built
// from this module), not in the test binary: the test binary is also every
// fake extension, and linking an etcd server into it would slow each of
// their starts several times over.

var localEtcdBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// localEtcdBin builds cmd/localetcd once per test process.
func localEtcdBin() (string, error) {
	b := &localEtcdBuild
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "rukh-localetcd-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "localetcd")
		cmd := exec.Command("go", "build", "-o", b.path, "./localetcd/cmd/localetcd")
		cmd.Dir = moduleRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building localetcd: %v\n%s", err, out)
		}
	})
	return b.path, b.err
}

// moduleRoot is where the tests started (the module's root).
var moduleRoot, _ = os.Getwd()

// etcdProc is a running localetcd.
type etcdProc struct {
	Addr string
	cmd  *exec.Cmd
}

// startEtcd runs etcd with its data in dir on addr ("" picks a free
// loopback port) and returns once it serves.
func startEtcd(dir, addr string, extra ...string) (*etcdProc, error) {
	bin, err := localEtcdBin()
	if err != nil {
		return nil, err
	}
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		addr = l.Addr().String()
		l.Close()
	}
	cmd := exec.Command(bin, append([]string{"-dir", dir, "-listen", addr}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line)
	}()
	select {
	case got := <-ready:
		if got == addr {
			return &etcdProc{Addr: addr, cmd: cmd}, nil
		}
	case <-time.After(30 * time.Second):
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("localetcd did not start on %s: %s", addr, stderr.String())
}

// Stop ends etcd (its data stays, so startEtcd on the same dir resumes).
func (p *etcdProc) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

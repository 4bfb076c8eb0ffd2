//go:build linux

// Command clistart times the CLI route side by side: in each round, a
// direct exec of the trivial program (the fd-3 exchange rukh's call makes),
// then `rukh trivial ping` and `rukh --version` of every rukh given, and
// prints medians, p25, the ratio to the direct exec and each process's CPU,
// with the host's load (docs/performance.md, "What the CLI does before it
// runs a command"). A rukh may carry extra environment after a "|":
// "/tmp/rukh|RUKH_WITHOUT=namespaces".
//
// The home must publish bench/trivial as `trivial ping`, as the small home
// that `BENCH_KEEP=1 scripts/bench.sh` leaves in work/small/home does.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 200, "rounds measured (after 5 warm-up rounds)")
	trivial := flag.String("trivial", "", "the bench/trivial program")
	home := flag.String("home", "", "a RUKH_HOME that publishes `trivial ping`")
	flag.Parse()
	if *trivial == "" || *home == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: clistart -trivial PROG -home DIR RUKH[|ENV=VALUE ...]...")
		os.Exit(2)
	}
	if err := run(*n, *trivial, *home, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "clistart:", err)
		os.Exit(1)
	}
}

type series struct{ wall, cpu []time.Duration }

func run(n int, trivial, home string, rukhs []string) error {
	env := []string{"RUKH_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8"}
	load0 := loadavg()
	var direct series
	cmd := make([]series, len(rukhs))
	ver := make([]series, len(rukhs))
	for i := range n + 5 {
		d, err := directExec(trivial)
		if err != nil {
			return fmt.Errorf("direct exec: %w", err)
		}
		if i >= 5 {
			direct.wall = append(direct.wall, d)
		}
		for k, r := range rukhs {
			for _, s := range []struct {
				into *series
				args []string
			}{{&cmd[k], []string{"trivial", "ping"}}, {&ver[k], []string{"--version"}}} {
				w, c, err := runRukh(r, env, s.args...)
				if err != nil {
					return err
				}
				if i >= 5 {
					s.into.wall, s.into.cpu = append(s.into.wall, w), append(s.into.cpu, c)
				}
			}
		}
	}
	fmt.Printf("load %s before, %s after; %d rounds\n", load0, loadavg(), n)
	dm, dq := quantile(direct.wall, .5), quantile(direct.wall, .25)
	fmt.Printf("direct exec of the trivial program: median %v, p25 %v\n", round(dm), round(dq))
	for k, r := range rukhs {
		for _, s := range []struct {
			name string
			s    series
		}{{"trivial ping", cmd[k]}, {"--version", ver[k]}} {
			m, q := quantile(s.s.wall, .5), quantile(s.s.wall, .25)
			fmt.Printf("%s %s: median %v (%.2f×), p25 %v (%.2f×), CPU median %v\n", r, s.name,
				round(m), float64(m)/float64(dm), round(q), float64(q)/float64(dq), round(quantile(s.s.cpu, .5)))
		}
	}
	return nil
}

// directExec is bench/rukhbench's baseline: the trivial program given its
// invoke line on fd 3 and read to its report's end.
func directExec(prog string) (time.Duration, error) {
	t := time.Now()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	parent, child := os.NewFile(uintptr(fds[0]), "channel"), os.NewFile(uintptr(fds[1]), "channel-child")
	defer parent.Close()
	const id = "inv_benchbenchbenchbenchbenc"
	c := &exec.Cmd{Path: prog, Args: []string{prog},
		Env:         []string{"RUKH_PROTOCOL=rukh.invoke/1", "RUKH_CHANNEL_FD=3", "RUKH_INVOCATION_ID=" + id, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"},
		ExtraFiles:  []*os.File{child},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	err = c.Start()
	child.Close()
	if err != nil {
		return 0, err
	}
	invoke := `{"type":"invoke","invocationId":"` + id + `","command":"trivial.ping","input":{},"explicit":[],"interactive":false,"deadlineMs":30000}` + "\n"
	if _, err := parent.Write([]byte(invoke)); err != nil {
		c.Wait()
		return 0, err
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("\n")) {
		m, err := parent.Read(buf)
		got = append(got, buf[:m]...)
		if err != nil {
			break
		}
	}
	if err := c.Wait(); err != nil {
		return 0, err
	}
	if !bytes.Contains(got, []byte(`"succeeded"`)) {
		return 0, errors.New("the trivial program did not report success: " + string(got))
	}
	return time.Since(t), nil
}

// runRukh runs one rukh command: its wall time and its CPU (user and
// system, its waited-for children included).
func runRukh(spec string, env []string, args ...string) (wall, cpu time.Duration, err error) {
	bin, extra, _ := strings.Cut(spec, "|")
	c := exec.Command(bin, args...)
	c.Env = append(slices.Clone(env), strings.Fields(extra)...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	t := time.Now()
	if err := c.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out.String())
	}
	wall = time.Since(t)
	return wall, c.ProcessState.UserTime() + c.ProcessState.SystemTime(), nil
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s))*q)]
}

func round(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

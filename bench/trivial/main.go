// Command trivial is the benchmark's trivial managed extension: it reads the
// invoke line from fd 3, echoes its invocationId in a succeeded text report
// and exits. It uses no JSON package and no SDK so that its start-up is as
// cheap as a static Go program's can be; the benchmark execs it directly too,
// as the baseline for Rukh's tools/call round trip.
//
// Without RUKH_PROTOCOL in its environment it exits 0 at once (the plain
// exec+wait baseline).
package main

import (
	"bytes"
	"os"
	"syscall"
)

func main() {
	if os.Getenv("RUKH_PROTOCOL") == "" {
		return
	}
	if os.Getenv("RUKH_PROTOCOL") != "rukh.invoke/1" {
		os.Exit(2)
	}
	// fd 3 is the channel; syscall.Read avoids os.File's poller set-up.
	var buf [64 << 10]byte
	n := 0
	for {
		m, err := syscall.Read(3, buf[n:])
		if m > 0 {
			n += m
			if bytes.IndexByte(buf[:n], '\n') >= 0 {
				break
			}
		}
		if err != nil || m <= 0 || n == len(buf) {
			os.Exit(2)
		}
	}
	id := field(buf[:n], `"invocationId":"`)
	if id == nil {
		os.Exit(2)
	}
	var out []byte
	out = append(out, `{"type":"report","invocationId":"`...)
	out = append(out, id...)
	out = append(out, `","outcome":"succeeded","commandResult":{"kind":"text","text":"ok"}}`+"\n"...)
	for len(out) > 0 {
		m, err := syscall.Write(3, out)
		if err != nil {
			os.Exit(2)
		}
		out = out[m:]
	}
}

// field returns the raw text of the string member that follows key (the
// invocation id never needs escapes).
func field(line []byte, key string) []byte {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil
	}
	return rest[:j]
}

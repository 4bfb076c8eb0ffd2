// Command localetcd runs a single-node etcd for trying rukh's shared
// store: localetcd -dir DIR [-listen 127.0.0.1:2379]. It prints the client
// address once it serves and stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rukh-dev/rukh/localetcd"
)

func main() {
	dir := flag.String("dir", "", "data `DIR` (kept across restarts)")
	listen := flag.String("listen", "127.0.0.1:2379", "client `HOST:PORT`")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "localetcd: -dir is required")
		os.Exit(2)
	}
	s, err := localetcd.Start(*dir, *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "localetcd:", err)
		os.Exit(1)
	}
	fmt.Println(s.Addr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	s.Stop()
}

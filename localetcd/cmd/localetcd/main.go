// Command localetcd runs a single-node etcd for trying rukh's shared
// store: localetcd -dir DIR [-listen 127.0.0.1:2379] [-cert PEM -key PEM
// [-ca PEM]]. It prints the client
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
	cert := flag.String("cert", "", "serve clients TLS with this certificate (`PEM`)")
	key := flag.String("key", "", "the certificate's private key (`PEM`)")
	ca := flag.String("ca", "", "require client certificates signed by this CA (`PEM`)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "localetcd: -dir is required")
		os.Exit(2)
	}
	var t *localetcd.TLS
	if *cert != "" {
		t = &localetcd.TLS{CertFile: *cert, KeyFile: *key, CAFile: *ca}
	}
	s, err := localetcd.StartTLS(*dir, *listen, t)
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

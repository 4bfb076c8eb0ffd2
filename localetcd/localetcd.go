// Package localetcd runs a single-node etcd server in the calling process,
// from the etcd Go module: for tests of the shared store and for the
// scale-out demo, where no etcd is installed. It is never linked into rukh:
// it imports the etcd server and no rukh package, and only tests and the
// demo import it.
package localetcd

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Server is a running etcd.
type Server struct {
	// Addr is the client address, HOST:PORT.
	Addr string
	e    *embed.Etcd
}

// freePort returns a loopback address nobody listens on.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// TLS makes the server speak TLS to clients: its certificate and key, and
// with CA the clients must present a certificate that CA signed.
type TLS struct{ CertFile, KeyFile, CAFile string }

// Start runs etcd with its data in dir, on addr (HOST:PORT; "" picks a free
// loopback port), and returns once it serves.
func Start(dir, addr string) (*Server, error) { return StartTLS(dir, addr, nil) }

// StartTLS is Start with TLS for clients (nil: plain).
func StartTLS(dir, addr string, t *TLS) (*Server, error) {
	var err error
	if addr == "" {
		if addr, err = freePort(); err != nil {
			return nil, err
		}
	}
	peer, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	scheme := "http://"
	if t != nil {
		scheme = "https://"
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.CAFile, ClientCertAuth: t.CAFile != ""}
	}
	cu, err := url.Parse(scheme + addr)
	if err != nil {
		return nil, err
	}
	pu, _ := url.Parse("http://" + peer)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd did not become ready within 30s")
	}
	return &Server{Addr: addr, e: e}, nil
}

// Stop ends the server; its data stays in dir, so Start on the same dir
// and address resumes it.
func (s *Server) Stop() { s.e.Close() }

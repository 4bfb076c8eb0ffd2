//go:build etcd

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a certificate (signed by parent, or self-signed when
// parent is nil) and its key as PEM files named name.pem and name-key.pem.
func writeCert(t *testing.T, dir, name string, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+"-key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// An etcd that speaks only TLS and wants a client certificate: rukh reaches
// it with the CA and a client certificate, in the URL or the environment,
// and without them says it cannot.
func TestEtcdTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	dir := t.TempDir()
	now := time.Now()
	ca, caKey := writeCert(t, dir, "ca", &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil, nil)
	writeCert(t, dir, "server", &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "etcd"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}, ca, caKey)
	writeCert(t, dir, "client", &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "rukh"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, caKey)
	f := func(name string) string { return filepath.Join(dir, name) }
	srv, err := startEtcd(f("etcd"), "", "-cert", f("server.pem"), "-key", f("server-key.pem"), "-ca", f("ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	bin := buildRukhTags(t, "etcd")
	pkg := writeScalePackage(t, dir, 0)
	run := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(rukhEnv(f("home")), env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	url := "etcds://" + srv.Addr + "/tls?ca=" + f("ca.pem") + "&cert=" + f("client.pem") + "&key=" + f("client-key.pem")
	if out, err := run(nil, "--store", url, "install", "--allow-unsigned", pkg); err != nil {
		t.Fatalf("install over TLS with a client certificate: %v\n%s", err, out)
	}
	env := []string{"RUKH_STORE=etcds://" + srv.Addr + "/tls", "RUKH_STORE_CA=" + f("ca.pem"),
		"RUKH_STORE_CERT=" + f("client.pem"), "RUKH_STORE_KEY=" + f("client-key.pem")}
	if out, err := run(env, "list"); err != nil || !strings.Contains(out, "scale.fake") {
		t.Errorf("list with the TLS options in the environment: %v\n%s", err, out)
	}
	// No client certificate: the server refuses the connection.
	out, err := run(nil, "--store", "etcds://"+srv.Addr+"/tls?ca="+f("ca.pem"), "list")
	if err == nil || !strings.Contains(out, "rukh: error:") || !strings.Contains(out, "the etcd store is unavailable") {
		t.Errorf("without a client certificate: %v\n%s", err, out)
	}
	if strings.Contains(out, "?ca=") {
		t.Errorf("the error shows the URL's options: %s", out)
	}
	// A certificate without its key is a usage error before any connection.
	out, err = run(nil, "--store", "etcds://"+srv.Addr+"/tls?cert="+f("client.pem"), "list")
	if err == nil || !strings.Contains(out, "needs both cert and key") {
		t.Errorf("a certificate without a key: %v\n%s", err, out)
	}
}

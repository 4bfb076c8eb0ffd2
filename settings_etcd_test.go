//go:build etcd && linux

package main

// Settings on a shared etcd store: replicas handed the same settings key
// deliver a sensitive value, one without the key refuses the calls that
// need it, and neither etcd's own files, a snapshot of it, every value under
// every key nor a store copy out of it ever holds the plaintext.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func TestSettingsEtcd(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc here: the fixture cannot show its own argv and environment")
	}
	bin := buildRukhTags(t, "etcd")
	etcdDir := t.TempDir()
	srv, err := startEtcd(filepath.Join(etcdDir, "data"), "")
	must(t, err)
	t.Cleanup(srv.Stop)

	// The key every replica is handed, in the key file's documented form.
	raw := make([]byte, 32)
	_, err = rand.Read(raw)
	must(t, err)
	keyFile := filepath.Join(etcdDir, "settings.key")
	must(t, os.WriteFile(keyFile, []byte("rukh-settings-key-1:"+base64.RawURLEncoding.EncodeToString(raw)+"\n"), 0o600))
	store := "RUKH_STORE=etcd://" + srv.Addr + "/settings-e2e"

	a := newSettingsHome(t, bin, store, "RUKH_SETTINGS_KEY_FILE="+keyFile)
	secret := randomSecret(t, "rukh-etcd-secret-")
	l := &leakSearch{t: t, secrets: [][]byte{[]byte(secret)}}
	a.set(secret, "settings.demo", "apiKey")
	a.must("settings", "set", "settings.plain", "label", "shared")
	want := `"` + keyHash(secret) + `"`
	if got := string(a.cliReceived("sdemo", "replica-a").Settings["apiKey"]); got != want {
		t.Errorf("replica A received apiKey %s, want %s", got, want)
	}

	// Replica B: another home on the same store, the same key.
	b := &settingsHome{t: t, bin: bin, dir: t.TempDir(), env: a.env, rukhOutputs: map[string]string{}}
	b.home, b.calls = filepath.Join(b.dir, "home"), filepath.Join(b.dir, "calls")
	must(t, os.MkdirAll(b.calls, 0o755))
	if got := string(b.cliReceived("sdemo", "replica-b").Settings["apiKey"]); got != want {
		t.Errorf("replica B received apiKey %s, want %s", got, want)
	}
	c := b.stdio("tenant-a")
	if got := string(b.received(c.c, c.demo, "replica-b-stdio").Settings["apiKey"]); got != want {
		t.Errorf("replica B over stdio received apiKey %s, want %s", got, want)
	}

	// Replica C: no key. What needs it is refused, the rest runs.
	cdir := t.TempDir()
	r := &settingsHome{t: t, bin: bin, dir: cdir, home: filepath.Join(cdir, "home"), calls: filepath.Join(cdir, "calls"),
		env: []string{store, "RUKH_SETTINGS_KEY_FILE=" + filepath.Join(cdir, "none.key")}, rukhOutputs: map[string]string{}}
	must(t, os.MkdirAll(r.calls, 0o755))
	out, errOut, code := r.cli("sdemo", "replica-c")
	if code != 3 || !strings.Contains(errOut, "settings key") {
		t.Errorf("replica C without the key: exit %d, want 3 with an error naming the settings key\n%s%s", code, out, errOut)
	}
	if r.ran("replica-c") {
		t.Errorf("replica C without the key: the extension ran")
	}
	if got := r.cliReceived("splain", "replica-c-plain").String(); got != `{"label":"shared"}` {
		t.Errorf("replica C, the package with nothing sensitive received %s", got)
	}

	// A store copy out of etcd into a bbolt home.
	copyTo := filepath.Join(a.dir, "copy")
	a.must("store", "copy", "--to", copyTo)

	// etcd itself: a snapshot, and every value under every key.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Addr}, DialTimeout: 30 * time.Second, Logger: zap.NewNop()})
	must(t, err)
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	snap, err := cli.Snapshot(ctx)
	must(t, err)
	snapshot, err := io.ReadAll(snap)
	snap.Close()
	must(t, err)
	l.bytes("an etcd snapshot", snapshot)
	all, err := cli.Get(ctx, "\x00", clientv3.WithFromKey())
	must(t, err)
	found := false
	for _, kv := range all.Kvs {
		l.bytes("etcd key "+string(kv.Key), append(append([]byte{}, kv.Key...), kv.Value...))
		if strings.Contains(string(kv.Value), "settings.demo") && strings.Contains(string(kv.Value)+string(kv.Key), "apiKey") {
			found = true
		}
	}
	if !found {
		t.Errorf("no etcd value holds the apiKey record, so searching them proves nothing (%d keys)", len(all.Kvs))
	}
	if !strings.Contains(string(snapshot), "settings.demo") {
		t.Errorf("the snapshot does not hold the store, so searching it proves nothing")
	}

	for _, h := range []*settingsHome{a, b, r} {
		for cmd, out := range h.rukhOutputs {
			l.bytes(cmd, []byte(out))
		}
		l.tree(h.dir)
	}
	l.tree(etcdDir)
}

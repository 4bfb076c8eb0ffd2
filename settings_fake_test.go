package main

import (
	"crypto/sha256"
	"encoding/hex"
	stdjson "encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// fakeSettings is the settings fixture: it marks that it started, copies
// its argv, environment and stdin to files named by its tag in the input's
// dir, waits for the input's gate file when there is one, and reports the
// settings member of its invoke message, the apiKey as its SHA-256 only (a
// result is shown to callers; the fixture's secret must not be).
func fakeSettings(line []byte, input jsontext.Value, reply func(outcome, text string)) int {
	var in struct{ Dir, Tag, Gate string }
	if err := stdjson.Unmarshal(input, &in); err != nil || in.Dir == "" {
		fmt.Fprintln(os.Stderr, "rukh-fake-ext: settings: no dir in the input")
		return 2
	}
	at := func(ext string) string { return filepath.Join(in.Dir, in.Tag+"."+ext) }
	os.WriteFile(at("started"), nil, 0o644)
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile("/proc/self/" + f)
		if err != nil {
			b = []byte("unreadable: " + err.Error())
		}
		os.WriteFile(at(f), b, 0o644)
	}
	stdin := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		stdin <- b
	}()
	select {
	case b := <-stdin:
		os.WriteFile(at("stdin"), b, 0o644)
	case <-time.After(2 * time.Second): // a stdin left open: what came so far is nothing
		os.WriteFile(at("stdin"), nil, 0o644)
	}

	var msg struct {
		Settings map[string]stdjson.RawMessage `json:"settings"`
	}
	stdjson.Unmarshal(line, &msg)
	ids := make([]string, 0, len(msg.Settings))
	for id := range msg.Settings {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if raw, ok := msg.Settings["apiKey"]; ok {
		var key string
		stdjson.Unmarshal(raw, &key)
		sum := sha256.Sum256([]byte(key))
		msg.Settings["apiKey"], _ = stdjson.Marshal("sha256:" + hex.EncodeToString(sum[:]))
	}
	// Diagnostics hold stderr: say something there, so a search of them
	// searches a record that exists.
	fmt.Fprintf(os.Stderr, "rukh-fake-ext: settings call %s received %s\n", in.Tag, strings.Join(ids, ","))

	if in.Gate != "" {
		for deadline := time.Now().Add(5 * time.Minute); !fileExists(in.Gate); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				reply("command_failed", "the gate never opened")
				return 1
			}
		}
	}
	b, _ := stdjson.Marshal(map[string]any{"tag": in.Tag, "settings": msg.Settings})
	reply("succeeded", string(b))
	return 0
}

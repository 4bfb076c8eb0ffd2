package kernel

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "proctable", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseProcStat reads recorded /proc/PID/stat lines.
func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		file string
		want procInfo
		ok   bool
	}{
		{"linux-stat-cat.txt", procInfo{ppid: 19645, pgid: 19645, sid: 6823, start: 333569}, true},
		{"linux-stat-odd-name.txt", procInfo{ppid: 4200, pgid: 4200, sid: 4100, start: 987654}, true},
		{"linux-stat-zombie.txt", procInfo{ppid: 4242, pgid: 4200, sid: 4100, start: 987700, zombie: true}, true},
		{"linux-stat-short.txt", procInfo{}, false},
	} {
		got, ok := parseProcStat(readFixture(t, tc.file))
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v, %v", tc.file, got, ok, tc.want, tc.ok)
		}
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S a b c"} {
		if _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) accepted", bad)
		}
	}
}

func TestEnvHas(t *testing.T) {
	env := readFixture(t, "linux-environ.bin")
	for kv, want := range map[string]bool{
		"RUKH_INVOCATION_ID=inv_abc": true,
		"RUKH_INVOCATION_ID=inv_ab":  false,
		"RUKH_INVOCATION_ID=":        false,
		"LANG=C":                     true,
	} {
		if got := envHas(env, kv); got != want {
			t.Errorf("envHas(%q) = %v", kv, got)
		}
	}
}

// darwinRecord lays out one 64-bit kinfo_proc as macOS's kern.proc.all
// returns it (the layout of x/sys/unix's KinfoProc for darwin).
func darwinRecord(pid, ppid, pgid int32, sec int64, usec int32, stat int8) []byte {
	b := make([]byte, darwinKinfoSize)
	le := binary.LittleEndian
	le.PutUint64(b[darwinOffStart:], uint64(sec))
	le.PutUint32(b[darwinOffStart+8:], uint32(usec))
	b[darwinOffStat] = byte(stat)
	le.PutUint32(b[darwinOffPid:], uint32(pid))
	le.PutUint32(b[darwinOffPpid:], uint32(ppid))
	le.PutUint32(b[darwinOffPgid:], uint32(pgid))
	return b
}

func freebsdRecord(pid, ppid, pgid, sid int32, sec, usec int64, stat byte) []byte {
	b := make([]byte, freebsdKinfoSize)
	le := binary.LittleEndian
	le.PutUint32(b, freebsdKinfoSize)
	le.PutUint32(b[freebsdOffPid:], uint32(pid))
	le.PutUint32(b[freebsdOffPpid:], uint32(ppid))
	le.PutUint32(b[freebsdOffPgid:], uint32(pgid))
	le.PutUint32(b[freebsdOffSid:], uint32(sid))
	le.PutUint64(b[freebsdOffStart:], uint64(sec))
	le.PutUint64(b[freebsdOffStart+8:], uint64(usec))
	b[freebsdOffStat] = stat
	return b
}

func TestParseDarwinKinfo(t *testing.T) {
	var raw []byte
	raw = append(raw, darwinRecord(1, 0, 1, 1700000000, 5, 2)...)
	raw = append(raw, darwinRecord(501, 1, 501, 1700000100, 250000, 3)...)
	raw = append(raw, darwinRecord(502, 501, 501, 1700000101, 0, darwinZombieStat)...)
	got, ok := parseDarwinKinfo(raw)
	if !ok {
		t.Fatal("refused a well-formed table")
	}
	want := procTable{
		1:   {ppid: 0, pgid: 1, sid: -1, start: 1700000000*1e6 + 5},
		501: {ppid: 1, pgid: 501, sid: -1, start: 1700000100*1e6 + 250000},
		502: {ppid: 501, pgid: 501, sid: -1, start: 1700000101 * 1e6, zombie: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d processes, want %d: %+v", len(got), len(want), got)
	}
	for pid, w := range want {
		if got[pid] != w {
			t.Errorf("pid %d: got %+v, want %+v", pid, got[pid], w)
		}
	}
	if _, ok := parseDarwinKinfo(raw[:len(raw)-1]); ok {
		t.Error("accepted a truncated record")
	}
	if tab, ok := parseDarwinKinfo(nil); !ok || len(tab) != 0 {
		t.Error("an empty answer is an empty table")
	}
}

func TestParseFreeBSDKinfo(t *testing.T) {
	raw := append(freebsdRecord(700, 1, 700, 700, 1700000000, 42, 3), freebsdRecord(701, 700, 700, 700, 1700000001, 7, freebsdZombieStat)...)
	got, ok := parseFreeBSDKinfo(raw)
	if !ok {
		t.Fatal("refused a well-formed table")
	}
	if w := (procInfo{ppid: 1, pgid: 700, sid: 700, start: 1700000000*1e6 + 42}); got[700] != w {
		t.Errorf("pid 700: got %+v, want %+v", got[700], w)
	}
	if w := (procInfo{ppid: 700, pgid: 700, sid: 700, start: 1700000001*1e6 + 7, zombie: true}); got[701] != w {
		t.Errorf("pid 701: got %+v, want %+v", got[701], w)
	}
	other := freebsdRecord(702, 1, 702, 702, 1, 1, 3)
	binary.LittleEndian.PutUint32(other, 768) // another architecture's layout
	if _, ok := parseFreeBSDKinfo(append(raw, other...)); ok {
		t.Error("misread a record of another layout")
	}
}

func TestProcargs2Env(t *testing.T) {
	// argc, the executable path, padding, two arguments, the environment.
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 2)
	b = append(b, "/usr/local/bin/ext\x00\x00\x00\x00ext\x00--flag\x00PATH=/bin\x00RUKH_INVOCATION_ID=inv_x\x00\x00\x00junk=1\x00"...)
	env := procargs2Env(b)
	if !envHas(env, "RUKH_INVOCATION_ID=inv_x") || !envHas(env, "PATH=/bin") {
		t.Errorf("environment %q lacks its entries", env)
	}
	if envHas(env, "--flag") || envHas(env, "junk=1") {
		t.Errorf("environment %q holds arguments or what follows it", env)
	}
	for _, bad := range [][]byte{nil, {1}, {5, 0, 0, 0, 'x'}, {0xff, 0xff, 0xff, 0xff, 0}} {
		procargs2Env(bad) // never panics
	}
}

package kernel

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// The process table as the process layer sees it, on every platform, and
// the parsers of each platform's raw form. The parsers are pure functions
// over bytes, so every platform's form is tested on any platform with
// recorded data (kernel/testdata/proctable).

// procInfo is one process of a snapshot. start is the process's start time
// in the platform's own unit; with the pid it names one process, so a pid
// reused by a later process is never mistaken for the one seen before.
type procInfo struct {
	ppid, pgid, sid int
	start           uint64
	zombie          bool
}

// procTable is a snapshot: every process by pid.
type procTable map[int]procInfo

// parseProcStat parses Linux's /proc/PID/stat; the command name may hold
// spaces and parentheses, so fields are counted after its last ')'.
func parseProcStat(b []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp session tty_nr … starttime (20th)
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	sid, err3 := strconv.Atoi(string(f[3]))
	start, err4 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procInfo{}, false
	}
	st := string(f[0])
	return procInfo{ppid: ppid, pgid: pgid, sid: sid, start: start, zombie: st == "Z" || st == "X"}, true
}

// envHas reports whether a NUL-separated environment block (Linux's
// /proc/PID/environ, FreeBSD's kern.proc.env) holds the entry kv.
func envHas(block []byte, kv string) bool {
	for len(block) > 0 {
		e := block
		if i := bytes.IndexByte(block, 0); i >= 0 {
			e, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		if string(e) == kv {
			return true
		}
	}
	return false
}

// procargs2Env is the environment part of macOS's kern.procargs2 record:
// argc (int32), the executable path, NUL padding, argc arguments, then the
// environment, NUL-separated, up to an empty string.
func procargs2Env(b []byte) []byte {
	if len(b) < 4 {
		return nil
	}
	argc := int(int32(binary.LittleEndian.Uint32(b)))
	b = b[4:]
	i := bytes.IndexByte(b, 0) // end of the executable path
	if i < 0 || argc < 0 {
		return nil
	}
	b = b[i:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for ; argc > 0 && len(b) > 0; argc-- {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	if i := bytes.Index(b, []byte{0, 0}); i >= 0 {
		b = b[:i+1]
	}
	return b
}

// Darwin's struct kinfo_proc on 64-bit machines (amd64, arm64): its size
// and the offsets of the fields the process layer reads.
const (
	darwinKinfoSize  = 648
	darwinOffStart   = 0   // kp_proc.p_starttime: tv_sec int64, tv_usec int32
	darwinOffStat    = 36  // kp_proc.p_stat (int8)
	darwinOffPid     = 40  // kp_proc.p_pid
	darwinOffPpid    = 560 // kp_eproc.e_ppid
	darwinOffPgid    = 564 // kp_eproc.e_pgid
	darwinZombieStat = 5   // SZOMB
)

// parseDarwinKinfo parses the records of sysctl kern.proc.all. Darwin's
// record has no session id; sid is filled by the caller (getsid), -1 here.
func parseDarwinKinfo(b []byte) (procTable, bool) {
	if len(b)%darwinKinfoSize != 0 {
		return nil, false
	}
	le := binary.LittleEndian
	t := make(procTable, len(b)/darwinKinfoSize)
	for ; len(b) > 0; b = b[darwinKinfoSize:] {
		pid := int(int32(le.Uint32(b[darwinOffPid:])))
		sec, usec := int64(le.Uint64(b[darwinOffStart:])), int64(int32(le.Uint32(b[darwinOffStart+8:])))
		if pid <= 0 || sec < 0 || usec < 0 {
			continue
		}
		t[pid] = procInfo{
			ppid:   int(int32(le.Uint32(b[darwinOffPpid:]))),
			pgid:   int(int32(le.Uint32(b[darwinOffPgid:]))),
			sid:    -1,
			start:  uint64(sec)*1e6 + uint64(usec),
			zombie: int8(b[darwinOffStat]) == darwinZombieStat,
		}
	}
	return t, true
}

// FreeBSD's struct kinfo_proc on 64-bit machines: it begins with its own
// size (ki_structsize), which the parser checks.
const (
	freebsdKinfoSize  = 1088
	freebsdOffPid     = 72
	freebsdOffPpid    = 76
	freebsdOffPgid    = 80
	freebsdOffSid     = 88
	freebsdOffStart   = 336 // ki_start: tv_sec int64, tv_usec int64
	freebsdOffStat    = 388 // ki_stat (char)
	freebsdZombieStat = 5   // SZOMB
)

// parseFreeBSDKinfo parses the records of sysctl kern.proc.proc.
func parseFreeBSDKinfo(b []byte) (procTable, bool) {
	if len(b)%freebsdKinfoSize != 0 {
		return nil, false
	}
	le := binary.LittleEndian
	t := make(procTable, len(b)/freebsdKinfoSize)
	for ; len(b) > 0; b = b[freebsdKinfoSize:] {
		if le.Uint32(b) != freebsdKinfoSize {
			return nil, false // another layout: refuse rather than misread
		}
		pid := int(int32(le.Uint32(b[freebsdOffPid:])))
		sec, usec := int64(le.Uint64(b[freebsdOffStart:])), int64(le.Uint64(b[freebsdOffStart+8:]))
		if pid <= 0 || sec < 0 || usec < 0 {
			continue
		}
		t[pid] = procInfo{
			ppid:   int(int32(le.Uint32(b[freebsdOffPpid:]))),
			pgid:   int(int32(le.Uint32(b[freebsdOffPgid:]))),
			sid:    int(int32(le.Uint32(b[freebsdOffSid:]))),
			start:  uint64(sec)*1e6 + uint64(usec),
			zombie: b[freebsdOffStat] == freebsdZombieStat,
		}
	}
	return t, true
}

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMkHostile writes OUT.tar.gz: a valid package (manifest and program
// taken from DIR) plus one hostile entry of the named class.
//
//	mkhostile CLASS DIR OUT
func cmdMkHostile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: mkhostile CLASS DIR OUT")
	}
	class, dir, out := args[0], ts.MkAbs(args[1]), ts.MkAbs(args[2])
	f, err := os.Create(out)
	ts.Check(err)
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	add := func(h *tar.Header, body []byte) {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		ts.Check(tw.WriteHeader(h))
		if len(body) > 0 {
			_, err := tw.Write(body)
			ts.Check(err)
		}
	}
	for _, name := range []string{"rukh-extension.json", "bin/ext"} {
		body, err := os.ReadFile(dir + "/" + name)
		ts.Check(err)
		add(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o755}, body)
	}
	reg := func(name string, mode int64, body []byte) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(body))}
	}
	switch class {
	case "dotdot":
		add(reg("../evil", 0o644, []byte("x")), []byte("x"))
	case "absolute":
		add(reg("/tmp/evil", 0o644, []byte("x")), []byte("x"))
	case "symlink-escape":
		add(&tar.Header{Name: "lib/link", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd", Mode: 0o777}, nil)
	case "symlink-absolute":
		add(&tar.Header{Name: "lib/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd", Mode: 0o777}, nil)
	case "device":
		add(&tar.Header{Name: "dev/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3, Mode: 0o666}, nil)
	case "fifo":
		add(&tar.Header{Name: "pipe", Typeflag: tar.TypeFifo, Mode: 0o644}, nil)
	case "hardlink":
		add(&tar.Header{Name: "lib/hard", Typeflag: tar.TypeLink, Linkname: "bin/ext"}, nil)
	case "setuid":
		add(reg("bin/su", 0o4755, []byte("#!/bin/sh\n")), []byte("#!/bin/sh\n"))
	case "oversize":
		// one file just over extpkg.MaxFileBytes, streamed so the test stays small in memory
		size := int64(64<<20) + 1
		ts.Check(tw.WriteHeader(&tar.Header{Name: "big.bin", Typeflag: tar.TypeReg, Mode: 0o644, Size: size}))
		chunk := make([]byte, 1<<20)
		for left := size; left > 0; {
			n := int64(len(chunk))
			if left < n {
				n = left
			}
			_, err := tw.Write(chunk[:n])
			ts.Check(err)
			left -= n
		}
	case "control-chars":
		// a name that would forge an error line and recolour the terminal
		add(reg("lib/x\n\x1b[31mrukh: error: forged\u202e", 0o644, []byte("x")), []byte("x"))
	case "many-files":
		for i := 0; i < 5000; i++ {
			add(reg("many/f"+strconv.Itoa(i), 0o644, []byte("x")), []byte("x"))
		}
	default:
		ts.Fatalf("unknown class %q", class)
	}
	ts.Check(tw.Close())
	ts.Check(gz.Close())
	ts.Check(f.Close())
}

// cmdFlipByte flips the lowest bit of the first byte of the first
// occurrence of TEXT in FILE, as a failing disk or a stray write would.
//
//	flipbyte FILE TEXT
func cmdFlipByte(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE TEXT")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	i := bytes.Index(data, []byte(args[1]))
	if i < 0 {
		ts.Fatalf("%s does not contain %q", args[0], args[1])
	}
	data[i] ^= 1
	ts.Check(os.WriteFile(path, data, 0o600))
}

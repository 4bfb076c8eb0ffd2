package mcpstdio

import "golang.org/x/sys/unix"

// Linux on arm64 and riscv64 has no dup2 system call; dup3 exists everywhere.
func dup2(from, to int) error { return unix.Dup3(from, to, 0) }

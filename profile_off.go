//go:build !rukhprof

package main

// profiled runs f; a build with -tags rukhprof profiles it (profile_on.go).
func profiled(f func() int) int { return f() }

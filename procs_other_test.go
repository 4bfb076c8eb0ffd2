//go:build !linux

package main

import "github.com/go-json-experiment/json/jsontext"

// The process-hygiene fixture reads /proc (procs_test.go); elsewhere its
// commands fail plainly.
func fakeProcs(args []string, input jsontext.Value, report func(outcome, text string)) int {
	report("command_failed", "the procs fixture needs /proc")
	return 1
}

func fakeProcsChild(args []string) (int, bool) { return 0, false }

// The confinement fixture (confine_test.go) is Linux's.
func fakeConfine(input jsontext.Value, report func(outcome, text, reason string)) int {
	report("command_failed", "", "the confine fixture runs on Linux")
	return 1
}

func fakeConfineChild(args []string) (int, bool) { return 0, false }

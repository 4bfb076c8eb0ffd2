// Package confine owns rukh's confining init: the program rukh runs as
// (argv[0] kernel.InitArgv0) to be PID 1 of an invocation's namespaces,
// confine itself as the template says, and then start the command's
// program, reap every process of the invocation and report how the
// program ended (the init protocol, kernel/initproto.go).
//
// Main is its whole surface; only main calls it, and only main exits. It
// imports kernel for the protocol and no other rukh package.
package confine

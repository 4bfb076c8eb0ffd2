//go:build rukh_portable

package main

// portableTag builds the rukh under test on the generic process path too.
const portableTag = "rukh_portable"

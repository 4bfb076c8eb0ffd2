//go:build !rukh_portable

package main

const portableTag = ""

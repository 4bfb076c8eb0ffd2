// Command notes is the program behind the example.notes extension
// (package/rukh-extension.json). Its logic lives in package notes so tests
// can run it without a build step.
package main

import "github.com/rukh-dev/rukh/examples/notes/notes"

func main() { notes.Main() }

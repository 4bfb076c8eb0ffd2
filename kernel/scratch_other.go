//go:build unix && !linux

package kernel

import "os"

// spareMark: no spares are made here (no confinement).
const spareMark = "spare-"

func takeScratch() (string, error) { return makeScratch() }

func removeScratch(dir string) { os.RemoveAll(dir) }

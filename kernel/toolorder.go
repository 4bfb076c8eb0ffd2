package kernel

import "strings"

// CompareTools is an endpoint's tool order (docs/design.md, Page bounds),
// for tools named aName and bName of commands aCommand and bCommand: by
// name with the fingerprint a compact or full name ends with left out,
// then by command identity. A name carries its revision's fingerprint,
// so in name order the tools of one slug would come in a new order in
// every revision, and their list pages would be new objects each time.
// Policy sorts by it and the store checks it.
func CompareTools(aName, aCommand, bName, bCommand string) int {
	if c := strings.Compare(toolStem(aName), toolStem(bName)); c != 0 {
		return c
	}
	return strings.Compare(aCommand, bCommand)
}

// toolStem is name without a trailing fingerprint (24 or 64 lowercase hex
// digits after "__": a compact name's and a full name's), keeping the
// "__"; a name without one is its own.
func toolStem(name string) string {
	for _, n := range [...]int{24, 64} {
		i := len(name) - n
		if i < 2 || name[i-2:i] != "__" {
			continue
		}
		hex := true
		for _, c := range []byte(name[i:]) {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				hex = false
				break
			}
		}
		if hex {
			return name[:i]
		}
	}
	return name
}

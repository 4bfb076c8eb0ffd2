package kernel

import "strings"

// PointerToken escapes one reference token of a JSON pointer (RFC 6901),
// as the Path of an Error holds it.
func PointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

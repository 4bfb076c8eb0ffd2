package commands

import (
	"fmt"
	"strings"
	"unicode"
)

// printable escapes what could forge lines or drive a terminal when a
// message quotes something an outsider chose (an archive entry name, a
// program's text): control characters, C1 codes and bidirectional
// overrides become Go-style escapes; everything else prints as is.
func printable(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r == utf8RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

const utf8RuneError = '\uFFFD'

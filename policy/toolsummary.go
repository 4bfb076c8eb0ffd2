package policy

import (
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
)

// MaxSummaryDescription bounds a tool summary's description: a line an
// agent (or the owner) reads to pick a tool, not the tool's documentation.
const MaxSummaryDescription = 200

// ToolSummary is what a search shows of a tool object: its title and the
// first sentence or line of its description, at most
// MaxSummaryDescription bytes.
func ToolSummary(object []byte) (title, description string) {
	var o struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(object, &o, json.RejectUnknownMembers(false))
	return o.Title, SummaryDescription(o.Description)
}

// SummaryDescription is the first sentence or line of a tool
// description, cut at a character boundary to at most
// MaxSummaryDescription bytes.
func SummaryDescription(d string) string {
	d = strings.TrimSpace(d)
	if i := strings.IndexByte(d, '\n'); i >= 0 {
		d = strings.TrimSpace(d[:i])
	}
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	if len(d) <= MaxSummaryDescription {
		return d
	}
	cut := MaxSummaryDescription - len("…")
	for cut > 0 && !utf8.RuneStart(d[cut]) {
		cut--
	}
	return strings.TrimSpace(d[:cut]) + "…"
}

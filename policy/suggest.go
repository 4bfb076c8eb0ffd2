package policy

import (
	"slices"

	"github.com/rukh-dev/rukh/kernel"
)

// meantCommand is "; did you mean …?" for a command id the endpoint does
// not publish, naming the published ids closest to it; "" when none is.
func meantCommand(id string, published map[string]bool) string {
	ids := make([]string, 0, len(published))
	for p := range published {
		ids = append(ids, p)
	}
	slices.Sort(ids)
	if s := kernel.DidYouMean(id, "", ids); s != "" {
		return "; " + s
	}
	return ""
}

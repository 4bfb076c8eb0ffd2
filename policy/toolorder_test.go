package policy

import (
	"fmt"
	"slices"
	"testing"
)

// TestToolOrderIgnoresTheRevision: the tools of commands whose names share
// their slug come in the same order in every revision, in every naming
// mode, so an unchanged catalogue lists, and stores, the same pages.
func TestToolOrderIgnoresTheRevision(t *testing.T) {
	var cmds []string
	for i := range 60 {
		cmds = append(cmds, fmt.Sprintf("kubernetes.grp%d.command-%03d", i%3, i))
	}
	cmds = append(cmds, "kubernetes", "kubernetes.a", "kubernetes0", "k.b")
	order := func(mode, rev string) []string {
		tools := make([]Tool, len(cmds))
		for i, c := range cmds {
			tools[i] = Tool{Name: ToolName(mode, "ns", rev, c), Command: c}
		}
		slices.SortFunc(tools, func(a, b Tool) int { return CompareTools(&a, &b) })
		out := make([]string, len(tools))
		for i, tl := range tools {
			out[i] = tl.Command
		}
		return out
	}
	for _, mode := range []string{ToolNamesCompact, ToolNamesFull, ToolNamesStable} {
		a, b := order(mode, "r1"), order(mode, "r2")
		if !slices.Equal(a, b) {
			t.Errorf("%s names: the tools' order changed with the revision:\n%v\n%v", mode, a, b)
		}
	}
}

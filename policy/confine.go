package policy

import (
	"fmt"

	"github.com/rukh-dev/rukh/kernel"
)

// ConfinementDoc is where confinement is documented for owners.
const ConfinementDoc = "docs/confinement.md"

// NeedsGap says which need of n template t does not grant, and the
// profile change that grants it; missing is "" when t grants all of n
// (always, for an unconfined template, and for no needs). home resolves
// "~/" in n, as the profile's own "~/" was resolved when it was loaded.
//
// A network need wants network host; a read need a read or write path of
// t that holds it; a write need a write path; "release" and "scratch" the
// same keyword; processes at most t's, when t sets a number.
func NeedsGap(n *kernel.Needs, t Template, home string) (missing, fix string) {
	c := t.Confine
	if n == nil || c == nil {
		return "", ""
	}
	at := "templates." + t.Name + ".confine."
	if n.Network && c.Network == kernel.NetworkNone {
		return fmt.Sprintf("it needs network, which template %s does not grant", t.Name),
			fmt.Sprintf("set %snetwork to %q", at, kernel.NetworkHost)
	}
	for _, p := range n.Read {
		if !granted(kernel.ResolveHome(p, home), c.Read, c.Write) {
			return fmt.Sprintf("it needs to read %s, which template %s does not grant", p, t.Name),
				fmt.Sprintf("add %q to %sread", p, at)
		}
	}
	for _, p := range n.Write {
		if !granted(kernel.ResolveHome(p, home), c.Write) {
			return fmt.Sprintf("it needs to write %s, which template %s does not grant", p, t.Name),
				fmt.Sprintf("add %q to %swrite", p, at)
		}
	}
	if c.Processes > 0 && n.Processes > c.Processes {
		return fmt.Sprintf("it needs %d processes, which template %s does not grant (it allows %d)", n.Processes, t.Name, c.Processes),
			fmt.Sprintf("set %sprocesses to %d", at, n.Processes)
	}
	return "", ""
}

// granted reports whether one of the lists holds p.
func granted(p string, lists ...[]string) bool {
	for _, l := range lists {
		for _, g := range l {
			if kernel.WithinPath(p, g) {
				return true
			}
		}
	}
	return false
}

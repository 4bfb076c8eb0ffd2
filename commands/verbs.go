package commands

import "github.com/urfave/cli/v3"

// ownerVerbs lists the built-in verbs. Every name here is reserved in
// kernel.BuiltinVerbs so no extension can shadow it.
func (a *app) ownerVerbs() []*cli.Command {
	verbs := []*cli.Command{
		a.installCmd(),
		a.uninstallCmd(),
		a.trustCmd(),
		a.keygenCmd(),
		a.packageCmd(),
		a.activateCmd(),
		a.deactivateCmd(),
		a.policyCmd(),
		a.publishCmd(),
		a.devCmd(),
		a.revisionsCmd(),
		a.rollbackCmd(),
		a.listCmd(),
		a.statusCmd(),
		a.describeCmd(),
		a.toolsCmd(),
		a.serveMCPCmd(),
		a.serveHTTPCmd(),
		a.mcpConfigCmd(),
		a.agentCmd(),
		a.settingsCmd(),
		a.auditCmd(),
		a.tasksCmd(),
		a.storeCmd(),
		a.diagnosticsCmd(),
		a.doctorCmd(),
		a.versionCmd(),
	}
	for _, v := range verbs {
		v.Category = "owner verbs"
	}
	return verbs
}

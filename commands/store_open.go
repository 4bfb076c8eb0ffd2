package commands

import (
	"strings"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// takeStoreFlag removes a leading "--store URL" (or --store=URL) from
// args: the store must be open before the command tree, which lists the
// published commands, can be built.
func takeStoreFlag(args []string) (string, []string) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--store" && i+1 < len(args):
			return args[i+1], append(append([]string{}, args[:i]...), args[i+2:]...)
		case strings.HasPrefix(a, "--store="):
			return strings.TrimPrefix(a, "--store="), append(append([]string{}, args[:i]...), args[i+1:]...)
		case !strings.HasPrefix(a, "-"):
			return "", args // the verb: what follows is its own
		}
	}
	return "", args
}

// openStore opens the store the spec names (else $RUKH_STORE, else the
// home's bbolt file). home is this machine's directory either way: an etcd
// store keeps package copies, holds and scratch files there.
func openStore(spec, home string, env func(string) string) (*store.Store, error) {
	from := "--store"
	if spec == "" {
		spec, from = env("RUKH_STORE"), "RUKH_STORE"
	}
	switch {
	case spec == "":
		return store.New(home), nil
	case store.IsEtcdURL(spec):
		return store.OpenEtcd(spec, home, store.EtcdOptions{CA: env("RUKH_STORE_CA"), Cert: env("RUKH_STORE_CERT"), Key: env("RUKH_STORE_KEY")})
	}
	return nil, kernel.Errorf(kernel.CodeUsage, "%s %q is not a store URL", from, spec).
		WithHint("give etcd://HOST:PORT[,HOST:PORT…]/PREFIX, or leave it unset for the bbolt store in RUKH_HOME")
}

# The Go release every script builds and tests rukh with (sourced, not run,
# from the repository root): the toolchain line of go.mod, exported as
# GOTOOLCHAIN, so the go command fetches that release through the module
# proxy once and uses it even where the machine says GOTOOLCHAIN=local
# (as some packaged Go releases do; that go ignores the toolchain line). A
# GOTOOLCHAIN the caller exported, other than local, is kept.
case ${GOTOOLCHAIN:-local} in
local)
	GOTOOLCHAIN=$(awk '$1 == "toolchain" { print $2 }' go.mod)
	if [ -z "$GOTOOLCHAIN" ]; then
		echo "scripts/toolchain.sh: go.mod names no toolchain" >&2
		exit 1
	fi
	export GOTOOLCHAIN
	;;
esac

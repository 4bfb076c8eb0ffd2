#!/usr/bin/env bash
# The whole test suite: formatting, vet, staticcheck, govulncheck, the
# static build, every Go test (unit, store crash, testscript against the
# real binary, Go MCP clients), the race detector over the concurrent
# packages, the generic (macOS) process layer built on Linux, cross-builds
# for macOS and FreeBSD, and the npm MCP clients against the real binary
# (scripts/interop.sh).
#
# Every step runs even when an earlier one failed. A step silent for 30 s
# prints a progress line. The end is a summary naming each failed step, then
# the line "N passed, M failed" (steps), which CI reads; the exit status is
# non-zero when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh

passed=0
failed=0
failures=()
current=""
ticker=""

stop_ticker() {
  if [ -n "$ticker" ]; then
    { kill "$ticker" && wait "$ticker"; } 2>/dev/null
    ticker=""
  fi
}

summary() {
  echo
  if [ "$failed" -gt 0 ]; then
    echo "failed steps:"
    for f in "${failures[@]}"; do echo "  $f"; done
  fi
  echo "$passed passed, $failed failed"
}

# Interrupted: the running step counts as failed, and the summary still
# comes.
interrupted() {
  stop_ticker
  trap - INT TERM
  if [ -n "$current" ]; then
    failed=$((failed + 1))
    failures+=("$current (interrupted)")
  fi
  summary
  exit 130
}
trap stop_ticker EXIT
trap interrupted INT TERM

# step NAME COMMAND...: runs COMMAND, its output streaming as it comes, with
# a line every 30 s while it runs, and counts it passed or failed.
step() {
  local name=$1 start rc
  shift
  current=$name
  start=$(date +%s)
  echo "== $name"
  # The ticker's sleep gets no stdout: left behind by kill, it must not
  # hold a pipe the suite's output goes to.
  (while sleep 30 </dev/null >/dev/null 2>&1; do
    echo "… still running $name ($(($(date +%s) - start))s)"
  done) &
  ticker=$!
  "$@"
  rc=$?
  stop_ticker
  current=""
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "== $name: ok ($(($(date +%s) - start))s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "== $name: FAILED (exit $rc, $(($(date +%s) - start))s)"
  fi
}

check_gofmt() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go')) || return 1
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"
    echo "$unformatted"
    return 1
  fi
}

# The Go release every step uses (scripts/toolchain.sh); fetched here
# first if it is not cached yet.
go version || exit 1
step "gofmt" check_gofmt
step "go vet" go vet ./...
step "go vet -tags etcd" go vet -tags etcd ./...
# Pinned as a tool in go.mod. The generic (macOS) path's files are checked
# as a rukh_portable build too.
staticchecks() {
  go tool staticcheck -tags etcd ./... &&
    go tool staticcheck -tags rukh_portable ./kernel/ ./store/
}
step "staticcheck" staticchecks
step "go.mod is tidy" go mod tidy -diff
# govulncheck, pinned as a tool in go.mod, against the Go vulnerability
# database at a pinned snapshot: the public database's endpoint is not
# reachable from every machine that runs this, the module proxy is, and it
# serves the database's entries as the module golang.org/x/vulndb.
# scripts/vulncheck builds the database from them once per pinned version
# (kept in the user's cache directory), then judges govulncheck's findings:
# a vulnerability the code reaches fails the step, in a module (move it in
# go.mod) or in the Go standard library (move go.mod's toolchain line to the
# Go release that fixes it). The README says how to move the pin.
vulndb_version=v0.0.0-20261105234957-e22db6528018
vulnerabilities() {
  local db out tags rc=0
  db=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/rukh/vulndb/$vulndb_version
  if [ ! -d "$db" ]; then
    go run ./scripts/vulncheck db -vulndb "$vulndb_version" -out "$db" || return 1
  fi
  out=$(mktemp) || return 1
  for tags in "" etcd; do
    echo "-- govulncheck${tags:+ -tags $tags} ./..."
    if go tool govulncheck -db "file://$db" -format json ${tags:+-tags "$tags"} ./... >"$out"; then
      go run ./scripts/vulncheck verdict <"$out" || rc=1
    else
      cat "$out"
      rc=1
    fi
  done
  rm -f "$out"
  return $rc
}
step "govulncheck" vulnerabilities
mkdir -p bin
step "static build" env CGO_ENABLED=0 go build -trimpath -o bin/rukh .
# The root package (the real binary, its servers and clients) takes minutes
# on a busy host; the timeout is for a hang, not for a slow machine.
step "go test" go test -count=1 -timeout 30m -tags etcd ./...
# The containment init is machine code assembled from scripts/init: the
# bytes in kernel/ must be what its source assembles to.
init_matches() {
  if ! command -v as >/dev/null || ! command -v ld >/dev/null; then
    apt-get install -y binutils >/dev/null 2>&1 || {
      echo "GNU as and ld (binutils) are needed to check the containment init"
      return 1
    }
  fi
  scripts/init/build.sh --check
}
step "containment init matches scripts/init" init_matches
# Containment and confinement take another path for an owner who is not
# root (user namespaces, capabilities kept across the init's exec, rlimits
# instead of a pids cgroup): run as root, their tests also run as nobody.
unprivileged() {
  if [ "$(id -u)" != 0 ]; then
    echo "not root: the tests above ran unprivileged"
    return 0
  fi
  local d rc=0
  d=$(mktemp -d) && chmod 755 "$d" || return 1
  go test -c -o "$d/confine.test" ./confine/ &&
    go test -c -o "$d/kernel.test" ./kernel/ || rc=1
  mkdir -m 777 "$d/tmp"
  if [ $rc = 0 ]; then
    (cd "$d" && setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$d/tmp" HOME="$d/tmp" ./confine.test -test.count=1) || rc=1
    (cd "$d" && setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$d/tmp" HOME="$d/tmp" RUKH_EXPECT_NAMESPACES=1 \
      ./kernel.test -test.count=1 -test.run 'TestInvokeLeavesNoProcesses|TestInvokeSession|TestInvokeProcessSetup|TestInvokeKillsGrandchildren|TestProbeHost|TestRecorder') || rc=1
  fi
  rm -rf "$d"
  return $rc
}
step "go test as nobody (containment, confinement)" unprivileged
step "go test -race (kernel, store, mcpcore, mcpstdio, mcphttp)" \
  go test -race -count=1 -timeout 30m ./kernel/ ./store/ ./mcpcore/ ./mcpstdio/ ./mcphttp/
# The generic process layer and store watch (what macOS and FreeBSD use),
# built on Linux: no subreaper, no parent-death signal, no inotify.
portable() {
  go test -count=1 -timeout 30m -tags rukh_portable ./kernel/ ./store/ ./mcpcore/ ./mcpstdio/ ./mcphttp/ ./tasks/ &&
    go test -count=1 -timeout 30m -tags rukh_portable \
      -run 'TestServe|TestTasks|TestSequentialCalls|TestNoProcess|TestConcurrentInvocations|TestInheritedFDs|TestMCPPrograms|TestScript' .
}
step "go test -tags rukh_portable (processes, store watch, serving, tasks)" portable
# Every platform rukh runs on builds static (with and without the etcd
# store) and vets clean from here. The etcd-tagged tests need an etcd
# server built for the target, which only Linux runs here: not vetted.
cross() {
  local t rc=0
  for t in darwin/amd64 darwin/arm64 freebsd/amd64 linux/arm64; do
    echo "-- $t"
    GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0 go build -trimpath -o /dev/null . &&
      GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0 go build -trimpath -tags etcd -o /dev/null . &&
      GOOS=${t%/*} GOARCH=${t#*/} go vet ./... || rc=1
  done
  return $rc
}
step "cross-build and vet (darwin/amd64, darwin/arm64, freebsd/amd64, linux/arm64)" cross
if [ -x scripts/interop.sh ]; then
  step "interop (npm MCP clients)" scripts/interop.sh
else
  echo "== interop (npm MCP clients): skipped, scripts/interop.sh is not executable"
fi

summary
[ "$failed" -eq 0 ]

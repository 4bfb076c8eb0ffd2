#!/usr/bin/env bash
# The main job, end to end, in a fresh home: build rukh and the notes
# example, sign and pack the package as its author would, then install,
# trust, activate and publish it as the owner, run it on the CLI as a person,
# and show exactly what an agent sees over MCP.
#
# Everything happens in a temporary directory that is removed on exit; the
# repository is left as it was (the example is built into a copy of its
# package directory). Needs Go, and python3 or jq to read rukh's JSON.
#
# Every step is checked: a command that fails, or an answer that is not the
# one shown here (including the calls rukh is expected to refuse), stops the
# demo with "demo: FAILED: <reason>" and exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh

# shellcheck source=scripts/demo-lib.sh
. scripts/demo-lib.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rukh-demo.XXXXXX")
mcp_pid=
cleanup() {
	[ -z "$mcp_pid" ] || kill "$mcp_pid" 2>/dev/null || true
	# releases are installed read-only: make them writable so rm can remove them
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# fails STATUS COMMAND...: show COMMAND and check it exits with STATUS.
fails() {
	local want=$1 got=0
	shift
	show "$@" || got=$?
	echo "(exit status $got)"
	[ "$got" = "$want" ] || die "'$*' exited with status $got, want $want"
}

step "build rukh (static) and the notes example (the first build downloads Go modules: ~1-2 min)"
# Built before HOME changes below, so Go keeps using its own caches.
mkdir -p "$tmp/bin"
echo "building rukh (CGO_ENABLED=0 go build -trimpath) into $tmp/bin"
CGO_ENABLED=0 go build -trimpath -o "$tmp/bin/rukh" .
echo "building the notes example into a copy of its package: notes-pkg/bin/notes"
cp -R examples/notes/package "$tmp/notes-pkg"
rm -rf "$tmp/notes-pkg/bin" "$tmp/notes-pkg/rukh-extension.sig"
CGO_ENABLED=0 go build -trimpath -o "$tmp/notes-pkg/bin/notes" ./examples/notes

# A fresh rukh home, and a fresh HOME for the notes file: the demo never
# touches the user's own rukh home or notes.
export RUKH_HOME="$tmp/rukh-home"
unset RUKH_STORE RUKH_STORE_CA RUKH_STORE_CERT RUKH_STORE_KEY RUKH_TOKEN # the bbolt store in that home
export HOME="$tmp/home"
export LANG=C.UTF-8
export PATH="$tmp/bin:$PATH"
mkdir -p "$HOME"
cd "$tmp"
echo "RUKH_HOME=$RUKH_HOME"
echo "HOME=$HOME (the notes file goes to \$HOME/.rukh-notes/notes.json)"
show rukh --version
show ls -l notes-pkg notes-pkg/bin

step "author: make a test publisher key, sign the package and pack it"
show rukh keygen --out keys/rukh-examples
show rukh package sign notes-pkg --key keys/rukh-examples
show rukh package pack notes-pkg notes-1.0.0.tar.gz

step "owner: trust the publisher and install the tarball"
show rukh trust add rukh-examples keys/rukh-examples.pub
show rukh install notes-1.0.0.tar.gz
show rukh list

step "owner: activate it and set a profile (what the local endpoint publishes)"
show rukh activate example.notes
cat >profile.json <<'EOF'
{
  "endpoints": {
    "local": {
      "namespace": "demo-laptop",
      "transports": ["stdio"],
      "subject": "owner",
      "template": "default",
      "publish": {"packages": ["example.notes"]}
    }
  },
  "templates": {
    "default": {"timeoutMs": 30000, "maxConcurrent": 4, "maxHeld": 16,
                "diagnosticsBytes": 65536, "resultBytes": 131072}
  }
}
EOF
sed 's/^/  /' profile.json
show rukh policy set profile.json

step "owner: publish (dry run first; nothing is live until published)"
show rukh publish --dry-run
show rukh publish
show rukh status

step "a person: use the commands on the CLI"
show rukh notes add --title "buy milk" --tag home --tag errands --priority 2 "two litres, semi-skimmed"
show rukh notes add -t "ship the demo" --tag work -p 5
show rukh note add -t "water the plants" --tag home
show rukh notes list
show rukh notes list --tag home --output json
show rukh notes show 1
show rukh notes delete 3
fails 1 rukh notes show 3                    # the command failed: exit 1
fails 2 rukh notes add --title x --priority 9 # rejected before it runs: exit 2
show rukh notes --help

step "what agents can call, and why"
show rukh describe notes.delete
show rukh tools
show rukh mcp-config --client claude

step "an agent: a scripted MCP exchange with 'rukh serve-mcp' (protocol 2026-07-28)"
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
# Like a real client, wait for each answer before the next request, and close
# stdin only at the end: rukh stops running invocations when its client goes
# away, so piping the whole exchange in would cancel the calls.
# (Plain FIFOs rather than coproc, so that macOS's bash 3.2 runs this too.)
mkfifo mcp-in mcp-out
rukh serve-mcp <mcp-in >mcp-out 2>mcp-stderr.log &
mcp_pid=$!
exec 3>mcp-in 4<mcp-out
rpc_id=0
# rpc METHOD [PARAMS]: send one request, show it and its answer, keep the
# answer in $response; an answer that is not this request's result (a
# JSON-RPC error, another id, no answer) fails the demo.
rpc() {
	rpc_id=$((rpc_id + 1))
	local request="{\"jsonrpc\":\"2.0\",\"id\":$rpc_id,\"method\":\"$1\",\"params\":{${2:+$2,}$meta}}"
	printf '\n%s-> client%s\n%s\n' "$bold" "$plain" "$request"
	printf '%s\n' "$request" >&3
	# generous: a hung server, not a slow host, is what this catches
	if ! IFS= read -r -t 60 response <&4; then
		cat mcp-stderr.log >&2
		die "no answer from serve-mcp to $1 (request $rpc_id)"
	fi
	printf '%s<- server%s\n' "$bold" "$plain"
	printf '%s\n' "$response" | pretty || die "serve-mcp answered $1 with something that is not JSON: $response"
	local err
	err=$(jget error <<<"$response")
	[ -z "$err" ] || die "$1 (request $rpc_id) answered a JSON-RPC error: $err"
	[ "$(jget id <<<"$response")" = "$rpc_id" ] || die "$1 (request $rpc_id) was answered with another id: $response"
	[ -n "$(jget result <<<"$response")" ] || die "$1 (request $rpc_id) was answered without a result"
}
# call TOOL ARGS OUTCOME: call a tool and check the invocation's outcome is
# OUTCOME (the demo shows some calls that rukh refuses or that fail on
# purpose), and that isError says the same.
call() {
	rpc tools/call "\"name\":\"$1\",\"arguments\":$2"
	local outcome is_error want_error=true
	outcome=$(jget result.structuredContent.outcome <<<"$response")
	is_error=$(jget result.isError <<<"$response")
	[ "$3" = succeeded ] && want_error=false
	[ "$outcome" = "$3" ] || die "tools/call $1 $2: outcome '${outcome:-none}', want '$3'"
	[ "${is_error:-false}" = "$want_error" ] || die "tools/call $1 $2: isError ${is_error:-absent}, want $want_error"
}
# the one structured result of the last call, at PATH
data() { jget "result.structuredContent.commandResult.data${1:+.$1}" <<<"$response"; }
reason() { jget result.structuredContent.reason <<<"$response"; }

rpc server/discover
jget result.supportedVersions.* <<<"$response" | grep -x 2026-07-28 >/dev/null ||
	die "server/discover does not offer protocol 2026-07-28"
rpc tools/list
# Tool names are fingerprinted per namespace and revision: take them from
# tools/list, as a client does, and check they are what 'rukh tools' showed.
listed=$(jget result.tools.*.name <<<"$response" | sort)
[ "$listed" = "$(rukh tools --json | jget tools.*.name | sort)" ] ||
	die "tools/list and 'rukh tools --json' name different tools: $listed"
tool() {
	local n
	for n in $listed; do
		case $n in "$1"__*)
			printf '%s\n' "$n"
			return 0
			;;
		esac
	done
	die "tools/list has no tool for $1, only: ${listed//$'\n'/ }"
}
add_tool=$(tool notes_add)
list_tool=$(tool notes_list)
show_tool=$(tool notes_show)

call "$add_tool" '{"title":"added by an agent","tags":["agent"],"priority":4}' succeeded
agent_note=$(data id)
[[ $agent_note =~ ^[0-9]+$ ]] || die "notes.add gave no note id: $response"
call "$list_tool" '{"limit":5}' succeeded
data notes.*.title | grep -x "added by an agent" >/dev/null || die "notes.list does not show the note the agent added"
call "$show_tool" '{"id":42}' command_failed # no such note: the command says so
[ "$(reason)" = "no note with id 42" ] || die "notes.show 42 failed for another reason: $(reason)"
call "$add_tool" '{"title":"too urgent","priority":9}' rejected # rukh checks input before running anything
[[ $(reason) == *priority* ]] || die "notes.add with priority 9 was rejected for another reason: $(reason)"
exec 3>&- # end of input: serve-mcp exits
wait "$mcp_pid" || die "serve-mcp exited with status $?: $(cat mcp-stderr.log)"
mcp_pid=
exec 4<&-

step "the note the agent added is there for the person too"
echo '$ rukh notes list --tag agent'
notes=$(rukh notes list --tag agent)
printf '%s\n' "$notes"
[ "$(jget notes.*.id <<<"$notes")" = "$agent_note" ] || die "the note the agent added (id $agent_note) is not listed"
[ "$(jget notes.0.title <<<"$notes")" = "added by an agent" ] || die "the note the agent added has another title"
step "done: everything above ran in $tmp, which is removed now"

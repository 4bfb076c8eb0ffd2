#!/usr/bin/env bash
# The main job, end to end, in a fresh home: build rukh and the notes
# example, sign and pack the package as its author would, then install,
# trust, activate and publish it as the owner, run it on the CLI as a person,
# and show exactly what an agent sees over MCP.
#
# Everything happens in a temporary directory that is removed on exit; the
# repository is left as it was (the example is built into a copy of its
# package directory). Needs Go; python3 or jq pretty-prints MCP responses.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rukh-demo.XXXXXX")
# releases are installed read-only: make them writable so rm can remove them
trap 'chmod -R u+w "$tmp" 2>/dev/null || true; rm -rf "$tmp"' EXIT

# shellcheck source=scripts/demo-lib.sh
. scripts/demo-lib.sh

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
echo "\$ rukh notes show 3"
rukh notes show 3 && exit 1 || echo "(exit status $?)"
echo "\$ rukh notes add --title x --priority 9"
rukh notes add --title x --priority 9 && exit 1 || echo "(exit status $?)"
show rukh notes --help

step "what agents can call, and why"
show rukh describe notes.delete
show rukh tools
show rukh mcp-config --client claude

step "an agent: a scripted MCP exchange with 'rukh serve-mcp' (protocol 2026-07-28)"
# Tool names are fingerprinted per namespace and revision: look them up in
# the published projection, as a client would from tools/list.
tool() { rukh tools --json | grep -o "\"$1__[0-9a-f]*\"" | tr -d '"'; }
list_tool=$(tool notes_list)
add_tool=$(tool notes_add)
show_tool=$(tool notes_show)
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
cat >mcp-in.jsonl <<EOF
{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{$meta}}
{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{$meta}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"$add_tool","arguments":{"title":"added by an agent","tags":["agent"],"priority":4},$meta}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"$list_tool","arguments":{"limit":5},$meta}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"$show_tool","arguments":{"id":42},$meta}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"$add_tool","arguments":{"title":"too urgent","priority":9},$meta}}
EOF
# Like a real client, wait for each answer before the next request, and close
# stdin only at the end: rukh stops running invocations when its client goes
# away, so piping the whole file in would cancel the calls.
# (Plain FIFOs rather than coproc, so that macOS's bash 3.2 runs this too.)
mkfifo mcp-in mcp-out
rukh serve-mcp <mcp-in >mcp-out 2>mcp-stderr.log &
mcp_pid=$!
exec 3>mcp-in 4<mcp-out
while IFS= read -r request; do
	printf '\n%s-> client%s\n%s\n' "$bold" "$plain" "$request"
	printf '%s\n' "$request" >&3
	IFS= read -r -t 20 response <&4 || {
		echo "no answer from serve-mcp" >&2
		cat mcp-stderr.log >&2
		exit 1
	}
	printf '%s<- server%s\n' "$bold" "$plain"
	printf '%s\n' "$response" | pretty
done <mcp-in.jsonl
exec 3>&- # end of input: serve-mcp exits
wait "$mcp_pid"
exec 4<&-

step "the note the agent added is there for the person too"
show rukh notes list --tag agent
step "done: everything above ran in $tmp, which is removed now"

# Helpers the demos share (sourced, not run): step prints a heading, show
# prints a command as a reader would type it and runs it, pretty
# pretty-prints JSON on stdin, jget reads a value out of JSON on stdin, and
# die stops the demo with the reason. The demos read rukh's JSON only
# through jget (python3 or jq), never by matching its text.
bold='' plain=''
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
demo=${demo:-$(basename "$0" .sh)}
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
show() {
	local out='$' a
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./=:@+-]+$ ]]; then out+=" $a"; else out+=" '${a//\'/\'\\\'\'}'"; fi
	done
	printf '%s\n' "$out"
	"$@"
}
die() {
	printf '\n%s: FAILED: %s\n' "$demo" "$*" >&2
	exit 1
}

# python3 keeps big integers exact; jq 1.6 rounds them through doubles
if command -v python3 >/dev/null 2>&1; then
	json_reader=python3
elif command -v jq >/dev/null 2>&1; then
	json_reader=jq
else
	die "needs python3 or jq to read rukh's JSON answers; install either and run it again"
fi

pretty() {
	if [ "$json_reader" = python3 ]; then
		python3 -m json.tool --no-ensure-ascii
	else
		jq .
	fi
}

# jget PATH [MEMBER...]: the values at PATH in the JSON document on stdin,
# one a line: strings as they are, anything else as compact JSON; nothing
# if PATH is not there. PATH is member names and array indexes joined by
# dots, where * stands for every element (or member value); "" is the
# whole document. With MEMBERs, each line holds those members of the value,
# tab-separated (empty where missing or null). Input that is not JSON
# fails, with the reader's message.
jget() {
	if [ "$json_reader" = python3 ]; then
		python3 -c '
import json, sys
try:
    doc = json.load(sys.stdin)
except ValueError as e:
    sys.exit("not JSON: %s" % e)
vals = [doc]
for k in [k for k in sys.argv[1].split(".") if k]:
    nxt = []
    for v in vals:
        if k == "*":
            nxt += v if isinstance(v, list) else list(v.values()) if isinstance(v, dict) else []
        elif isinstance(v, dict) and k in v:
            nxt.append(v[k])
        elif isinstance(v, list) and k.isdigit() and int(k) < len(v):
            nxt.append(v[int(k)])
    vals = nxt
def text(v):
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"))
for v in vals:
    if len(sys.argv) > 2:
        o = v if isinstance(v, dict) else {}
        print("\t".join("" if o.get(m) is None else text(o[m]) for m in sys.argv[2:]))
    else:
        print(text(v))
' "$@"
	else
		jq -r --arg p "$1" '
def at(ks): if (ks | length) == 0 then . else ks[0] as $k
  | (if $k == "*" then (if type == "array" or type == "object" then .[] else empty end)
     elif type == "object" then (if has($k) then .[$k] else empty end)
     elif type == "array" and ($k | test("^[0-9]+$")) then ($k | tonumber) as $i | (if $i < length then .[$i] else empty end)
     else empty end)
  | at(ks[1:]) end;
def text: if type == "string" then . else tojson end;
at($p | split(".") | map(select(. != "")))
  | if ($ARGS.positional | length) == 0 then text
    else . as $v | [$ARGS.positional[] as $m | ($v | if type == "object" then .[$m] else null end)
      | if . == null then "" else text end] | join("\t") end' --args "${@:2}"
	fi
}

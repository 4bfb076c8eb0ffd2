# Presentation helpers the demos share (sourced, not run): step prints a
# heading, show prints a command as a reader would type it and runs it,
# pretty pretty-prints JSON on stdin.
bold='' plain=''
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
show() {
	local out='$' a
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./=:@+-]+$ ]]; then out+=" $a"; else out+=" '${a//\'/\'\\\'\'}'"; fi
	done
	printf '%s\n' "$out"
	"$@"
}
pretty() {
	# python3 keeps big integers exact; jq 1.6 rounds them through doubles
	if command -v python3 >/dev/null 2>&1; then
		python3 -m json.tool --no-ensure-ascii
	elif command -v jq >/dev/null 2>&1; then
		jq .
	else
		cat
	fi
}

#!/bin/sh
# passthrough: the raw remaining argv, printed one per line.
for a in "$@"; do printf '%s\n' "$a"; done

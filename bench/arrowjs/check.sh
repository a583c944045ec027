#!/bin/sh
# Writes an events and a requests file with tracesched's Go writer (from the
# repository fixture fx-bfq-2cg-w100-900) and reads them with apache-arrow
# (JS) when node is available. Usage: bench/arrowjs/check.sh [OUTDIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$(mktemp -d)}
if ! command -v node >/dev/null 2>&1; then
	echo "check.sh: node not found; skipping" >&2
	exit 0
fi
mkdir -p "$out"
cd "$root"
TRACESCHED_ARROWJS_OUT="$out" go test ./trace/arrowfile/ -run '^TestArrowWriteJSFiles$' -count=1 >"$out/go-test.log" 2>&1 ||
	{ cat "$out/go-test.log" >&2; exit 1; }
[ -d "$here/node_modules" ] || (cd "$here" && npm install --no-audit --no-fund >/dev/null)
node "$here/read.mjs" "$out/events.arrow" "$out/requests.arrow"

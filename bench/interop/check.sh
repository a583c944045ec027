#!/bin/sh
# Opens tracesched's Arrow and Parquet output with readers that are not
# tracesched's: apache-arrow (JS) with fzstd as its zstd codec and no
# alignment workaround, Polars (nodejs-polars) and DuckDB (@duckdb/node-api),
# on every repository fixture and every shared capture (../shared/captures:
# small, recorded, recorded-fs, public, hadoop-node8 included). For each
# capture: `convert` to Arrow and to Parquet, `stats --json`, then
#   arrow.mjs          row counts (= stats) and sum(bytes) agreeing between readers
#   parquet-stats.mjs  29 figures recomputed by SQL in DuckDB and in Polars
#                      (= stats: events per action, requests, bytes, D2C n/avg/max)
# One line per reader and file; exit status 1 if any check failed.
#
# The npm packages (versions of ../shared/interop/package.json) are installed
# once into $TRACESCHED_INTEROP_DIR (default: $TMPDIR/tracesched-interop),
# never into the repository. Usage: bench/interop/check.sh [CAPTURE...]
# (a CAPTURE is a path as `tracesched convert` takes it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${TRACESCHED_SHARED:-$root/../shared}
if ! command -v node >/dev/null 2>&1; then
	echo "check.sh: node not found; skipping" >&2
	exit 0
fi
if [ ! -f "$shared/interop/package.json" ]; then
	echo "check.sh: $shared/interop not found; skipping" >&2
	exit 0
fi
dir=${TRACESCHED_INTEROP_DIR:-${TMPDIR:-/tmp}/tracesched-interop}
mkdir -p "$dir"
if [ ! -d "$dir/node_modules/nodejs-polars" ] || ! cmp -s "$shared/interop/package.json" "$dir/package.json"; then
	cp "$shared/interop/package.json" "$dir/package.json"
	echo "check.sh: npm install into $dir" >&2
	(cd "$dir" && npm install --no-audit --no-fund >"$dir/npm.log" 2>&1) || { cat "$dir/npm.log" >&2; exit 1; }
fi
cp "$here/arrow.mjs" "$here/parquet-stats.mjs" "$dir/"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && GOWORK=off go build -o "$work/tracesched" ./cmd/tracesched)
ts=$work/tracesched

if [ $# -eq 0 ]; then
	for d in "$root"/fixtures/*/; do
		n=$(basename "$d")
		for f in "$d$n".blktrace.0* "$d$n".pipe.bin* "$d$n".trace.txt* "$d$n".txt*; do
			[ -e "$f" ] || continue
			case $f in
			*.blktrace.0*) set -- "$@" "$d$n" ;;
			*) set -- "$@" "$f" ;;
			esac
			break
		done
	done
	if [ -d "$shared/captures" ]; then
		for d in "$shared"/captures/small/*/ "$shared"/captures/recorded/*/ "$shared"/captures/recorded-fs/*/ "$shared"/captures/public/*/; do
			for f in "$d"*.blktrace.0*; do
				[ -e "$f" ] && set -- "$@" "${f%%.blktrace.0*}"
			done
			for f in "$d"*.bin "$d"*.txt; do
				case $f in *README* | *SOURCES* | *blkparse.txt | *btt.txt | *.cmd.out) continue ;; esac
				[ -e "$f" ] && set -- "$@" "$f"
			done
		done
	fi
fi

fail=0
for c in "$@"; do
	label=$(echo "$c" | sed "s|^$shared/captures/||; s|^$root/||")
	out=$work/$(echo "$label" | tr '/' '_')
	if ! "$ts" stats --json "$c" >"$out.stats.json" 2>"$out.err"; then
		echo "$label: not readable by tracesched: $(tail -1 "$out.err")"
		continue
	fi
	if ! "$ts" convert "$c" -o "$out.req.arrow" --events "$out.ev.arrow" 2>"$out.err" ||
		! "$ts" convert --format parquet "$c" -o "$out.req.parquet" --events "$out.ev.parquet" 2>"$out.err"; then
		echo "$label: convert failed: $(tail -1 "$out.err")"
		fail=1
		continue
	fi
	(cd "$dir" && node arrow.mjs "$out.stats.json" "$out.ev.arrow" "$out.req.arrow" "$label") || fail=1
	(cd "$dir" && node parquet-stats.mjs "$out.stats.json" "$out.ev.parquet" "$out.req.parquet" "$label") || fail=1
	echo "$label: sizes: events arrow $(wc -c <"$out.ev.arrow") parquet $(wc -c <"$out.ev.parquet"), requests arrow $(wc -c <"$out.req.arrow") parquet $(wc -c <"$out.req.parquet") bytes"
	rm -f "$out".*
done
exit $fail

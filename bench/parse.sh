#!/usr/bin/env bash
# Side-by-side speed of tracesched's reader and convert against blkparse on
# the same capture, in one run (the machines are noisy: compare ratios).
#
#   bench/parse.sh [CAPTURE_BASENAME] [COPIES]
#
# The capture (default: ../shared/captures/recorded/g-bfq-large-nomsg, a real
# 10 s BFQ capture of 934,593 records) is repeated COPIES times (default 11:
# 10.3 M events) by bench/mkcapture, with its cgroup tags stripped so that
# Debian's blkparse 1.2.0 reads every record. Prints events/s for blkparse
# (text to /dev/null), the tracesched reader, and tracesched convert (events
# and requests to zstd Arrow; then to Parquet), with peak memory; and each
# convert's peak memory on 1 and COPIES copies, to show it flat in the
# capture's length.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-../shared/captures/recorded/g-bfq-large-nomsg/g-bfq-large-nomsg}
copies=${2:-11}
command -v blkparse >/dev/null || { echo "blkparse not installed (apt-get install blktrace)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/mkcapture" ./bench/mkcapture
go build -o "$tmp/readspeed" ./bench/readspeed
go build -o "$tmp/tracesched" ./cmd/tracesched
"$tmp/mkcapture" -in "$base" -n 1 -strip -out "$tmp/one/cap"
"$tmp/mkcapture" -in "$base" -n "$copies" -strip -out "$tmp/big/cap"

measure() { # label events command...
	local label=$1 events=$2; shift 2
	local t0 t1 rss cpu
	t0=$(date +%s.%N)
	/usr/bin/time -o "$tmp/rss" -f "%M %U %S" "$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	read -r rss cpu <<<"$(tail -1 "$tmp/rss" | awk '{print $1, $2 + $3}')"
	printf '%s\t%s\t%s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$cpu" "$label" >>"$tmp/times"
	awk -v l="$label" -v n="$events" -v a="$t0" -v b="$t1" -v r="$rss" -v c="$cpu" \
		'BEGIN { s = b - a; printf "%-28s %10d events %7.2f s %10.0f events/s %7.2f CPU-s %8.1f MiB peak\n", l, n, s, n / s, c, r / 1024 }'
}
events=$("$tmp/readspeed" "$tmp/big/cap" | awk '{print $2}')
one=$("$tmp/readspeed" "$tmp/one/cap" | awk '{print $2}')
echo "capture: $base x $copies = $events events ($(du -sh "$tmp/big" | cut -f1))"
measure "blkparse -o /dev/null" "$events" blkparse -i "$tmp/big/cap" -o /dev/null
measure "tracesched read" "$events" "$tmp/readspeed" "$tmp/big/cap"
# Arrow and Parquet converts alternate, REPS times each (default 3), so that
# both see the same periods of a noisy machine; the ratios are of medians.
for _ in $(seq "${REPS:-3}"); do
	measure "tracesched convert" "$events" "$tmp/tracesched" convert "$tmp/big/cap" -o "$tmp/r.arrow" --events "$tmp/e.arrow"
	measure "convert --format parquet" "$events" "$tmp/tracesched" convert --format parquet "$tmp/big/cap" -o "$tmp/r.parquet" --events "$tmp/e.parquet"
done
measure "tracesched convert (1 copy)" "$one" "$tmp/tracesched" convert "$tmp/one/cap" -o "$tmp/r1.arrow" --events "$tmp/e1.arrow"
measure "convert parquet (1 copy)" "$one" "$tmp/tracesched" convert --format parquet "$tmp/one/cap" -o "$tmp/r1.parquet" --events "$tmp/e1.parquet"
median() { # label field: the median of a measured label's wall (1) or CPU (2) seconds
	awk -F'\t' -v l="$1" -v f="$2" '$3 == l {print $f}' "$tmp/times" | sort -g |
		awk '{v[NR] = $1} END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
awk -v aw="$(median "tracesched convert" 1)" -v pw="$(median "convert --format parquet" 1)" \
	-v ac="$(median "tracesched convert" 2)" -v pc="$(median "convert --format parquet" 2)" \
	'BEGIN { printf "parquet / arrow convert, medians: %.2fx wall (%.2f / %.2f s), %.2fx CPU (%.2f / %.2f CPU-s)\n", pw / aw, pw, aw, pc / ac, pc, ac }'
ls -l "$tmp/r.arrow" "$tmp/e.arrow" "$tmp/r.parquet" "$tmp/e.parquet" | awk '{printf "%s %d bytes\n", $9, $5}'
echo "raw capture $(cat "$tmp"/big/cap.blktrace.* | wc -c) bytes"

#!/usr/bin/env bash
# bench/hostile/run.sh: every reproducer of issue 14 that the hardening
# branch fixes, run against a fresh build. The mutated inputs are built on
# the fly from fixtures/ and, when present, ../shared (bench/hostile/mutate).
# One line per case:
#
#   ok|FAIL  CASE  exit=N  TIME s  PEAK-RSS MB  the last line of stderr
#
# A case fails when it panics, runs past its time bound (timeout), exits
# with another status than expected, misses the message it must print, or
# when any input file changed (checksums before and after) or an output
# file it was refused to write exists.
#
#   bench/hostile/run.sh            # all cases
#   HOSTILE_QUICK=1 bench/hostile/run.sh   # skip the cases on big captures
set -uo pipefail
cd "$(dirname "$0")/../.."
export GOWORK=off
root=$(pwd)
shared=${TRACESCHED_SHARED:-$root/../shared}
work=$(mktemp -d "${TMPDIR:-/tmp}/hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
bin=$work/tracesched
go build -o "$bin" ./cmd/tracesched || exit 1
go build -o "$work/mutate" ./bench/hostile/mutate || exit 1
mut=$work/mutate
fx=$root/fixtures
fails=0

# run NAME WANT_EXIT TIMEOUT_S MUST_MATCH -- CMD...: one case.
run() {
	local name=$1 want=$2 bound=$3 match=$4
	shift 5
	local err=$work/$name.err out=$work/$name.out tf=$work/$name.time
	timeout --kill-after=5 "$bound" /usr/bin/time -f "%e %M" -o "$tf" "$@" >"$out" 2>"$err"
	local rc=$?
	local secs rss
	read -r secs rss < <(tail -n 1 "$tf" 2>/dev/null) || { secs=-; rss=0; }
	local msg
	msg=$(grep -v '^Command exited' "$err" | tail -n 1 | cut -c1-160)
	local verdict=ok why=""
	if grep -qE '^(panic:|fatal error:)|goroutine [0-9]+ \[' "$err"; then
		verdict=FAIL why="panic"
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		verdict=FAIL why="timed out after ${bound}s"
	elif [ "$want" != "*" ] && [ "$rc" != "$want" ]; then
		verdict=FAIL why="exit $rc, want $want"
	elif [ -n "$match" ] && ! grep -qE -- "$match" "$err" "$out"; then
		verdict=FAIL why="no /$match/"
	fi
	[ $verdict = FAIL ] && fails=$((fails + 1))
	printf '%-4s  %-34s exit=%-3s %7ss %7.1f MB  %s%s\n' "$verdict" "$name" "$rc" "$secs" "$(awk -v k="${rss:-0}" 'BEGIN { print k / 1024 }')" "${why:+[$why] }" "$msg"
}

# absent NAME PATH: a refused output must not exist.
absent() {
	if [ -e "$2" ]; then
		printf 'FAIL  %-34s %s exists after a refused run\n' "$1" "$2"
		fails=$((fails + 1))
	else
		printf 'ok    %-34s no %s left behind\n' "$1" "$(basename "$2")"
	fi
}

sums() { find "$@" -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum; }
inputs=("$fx")
[ -d "$shared/captures" ] && inputs+=("$shared/captures/public" "$shared/captures/recorded/a-bfq-w100-900" "$shared/captures/recorded/a-bfq-w300-700")
sums "${inputs[@]}" >"$work/before.sum"

m=$fx/fx-mqdl-rw-nocg/fx-mqdl-rw-nocg
b2=$fx/fx-bfq-2cg-w100-900/fx-bfq-2cg-w100-900

echo "== item 2: a bit flip and device models against physical bounds"
mkdir -p "$work/flip62" "$work/flip50"
for d in flip62 flip50; do cp "$m.blktrace.0.zst" "$work/$d/fx.blktrace.0.zst"; done
$mut flipc "$m.blktrace.1.zst" "$work/flip62/fx.blktrace.1" 62
$mut flipc "$m.blktrace.1.zst" "$work/flip50/fx.blktrace.1" 50
run flip62-replay 1 60 'physical bound' -- "$bin" replay --sched none "$work/flip62/fx" -o "$work/flip62.arrow"
absent flip62-replay-output "$work/flip62.arrow"
run flip62-diff 1 60 'offset 0x[0-9a-f]+.*physical bound' -- "$bin" diff "$work/flip62/fx" "$work/flip62/fx"
run flip50-diff-13-days 0 60 '' -- "$bin" diff "$work/flip50/fx" "$work/flip50/fx"
dev() { printf '{"version": 2, "kind": "%s", "%s": {%s}}\n' "$1" "$1" "$2" >"$work/$3.json"; }
nr='"parallelism": 1, "saturation_slope": 0, "read": {"base_ns": %s, "per_byte_ns": %s, "n": 1, "residual": {"p": [], "x": []}}'
dev nonrotational "$(printf "$nr" 50000 1e300)" perbyte
dev nonrotational "$(printf "$nr" 4611686018427387904 1)" base
dev rotational '"overhead_ns": -3967, "revolution_ns": 8000000' negoverhead
for j in perbyte base negoverhead; do
	run "device-$j" 1 60 'device model' -- "$bin" replay --sched none --device "$work/$j.json" -o "$work/dev-$j.arrow" "$m"
	absent "device-$j-output" "$work/dev-$j.arrow"
done
run calibrate-rotational 0 60 '' -- "$bin" calibrate --kind rotational -o "$work/rot.json" "$m"
if grep -qE '"(overhead|seq_base|seek_long_base)_ns": -' "$work/rot.json"; then
	echo "FAIL  calibrate-rotational-negative       $(grep -E '_ns": -' "$work/rot.json" | head -1)"; fails=$((fails + 1))
else
	echo "ok    calibrate-rotational-no-negative    $(grep overhead_ns "$work/rot.json" | tr -d ' ,')"
fi

echo "== item 3: requests never completed, merge cycles, progress"
$mut issueonly 2000000 "$work/issue.blktrace.0"
run issue-only-2M-stats 0 120 'closed while in flight' -- "$bin" stats "$work/issue"
if [ -z "${HOSTILE_QUICK:-}" ] && [ -d "$shared/captures/public/hadoop-node8" ]; then
	h=$shared/captures/public/hadoop-node8
	run hadoop-stats 0 120 'requests never complete' -- "$bin" stats "$h"
	# --progress: a line every 5 s (lineEvery) of a phase that lasts longer,
	# so the run either shows one or is done in under 5 s.
	prog='tracesched: (scanning|calibrating|replay)[^:]*: [0-9]+ (s|events)|replayed .* in [0-4]\.[0-9]+ s'
	# 56 % of its requests never complete: replay refuses it, and with
	# --allow-incomplete it must still end (no merge cycle, no stall).
	run hadoop-replay-refused 1 120 'never complete: .*--allow-incomplete' -- "$bin" replay --sched none "$h"
	run hadoop-replay-bfq 0 600 "$prog" -- "$bin" --progress replay --allow-incomplete --no-cache --sched bfq "$h"
	run hadoop-replay-cfq 0 600 "$prog" -- "$bin" --progress replay --allow-incomplete --no-cache --sched cfq "$h"
fi

echo "== item 4: ftrace bin stream with in-band loss lines"
zstd -dqc "$fx/fx-ftrace-bin/fx-ftrace-bin.pipe.bin.zst" >"$work/pipe.bin"
$mut ftracelost "$work/pipe.bin" "$work/lost.bin"
run ftrace-bin-lost 0 60 'events dropped' -- "$bin" stats "$work/lost.bin"

echo "== item 6: errors name the file and where"
head -c 30000 "$m.blkparse.txt.zst" >"$work/cut.txt.zst"
run truncated-txt-zst 1 60 'cut\.txt\.zst:[0-9]+:[0-9]+: compressed data cut short' -- "$bin" stats "$work/cut.txt.zst"
zstd -dqc "$m.blkparse.txt.zst" >"$work/plain.txt"
$mut longwindow "$work/plain.txt" "$work/long.txt.zst"
run long-window-zstd 1 60 'long\.txt\.zst:1:1: .*--long=30' -- "$bin" stats "$work/long.txt.zst"

echo "== item 10: stray bytes in text, BOM, escapes in names"
$mut prefix "$work/plain.txt" "$work/bom.txt" efbbbf
run utf8-bom 0 60 '' -- "$bin" stats "$work/bom.txt"
awk 'NR==3{ $0 = substr($0,1,20) "\x1b" substr($0,21) } {print}' "$work/plain.txt" >"$work/esc.txt"
run esc-in-head 1 60 'esc\.txt:3:' -- "$bin" stats "$work/esc.txt"
$mut comm "$work/plain.txt" "$work/evil.txt"
run escape-in-comm 0 60 '' -- "$bin" stats "$work/evil.txt"
if grep -q $'\x1b' "$work/escape-in-comm.out"; then
	echo "FAIL  escape-in-comm-sanitised            raw ESC printed"; fails=$((fails + 1))
else
	echo "ok    escape-in-comm-sanitised            $(grep -o 'evil[^ ]*' "$work/escape-in-comm.out" | head -1)"
fi

echo "== item 11: values accepted silently"
run hz-0 2 60 '--hz' -- "$bin" replay --sched none --hz 0 "$b2"
run bfq-slice-idle-negative 2 60 'negative' -- "$bin" replay --sched bfq --set slice_idle_us=-1 "$b2"
run nr-requests-huge 2 60 'nr_requests' -- "$bin" replay --sched bfq --set nr_requests=99999999999999 "$b2"
run unknown-command 2 10 'unknown command' -- "$bin" bogus
run weight-not-in-capture 0 60 'no bio of .* is in it' -- "$bin" replay --sched bfq --weight 999=100 "$b2"
run convert 0 60 '' -- "$bin" convert "$m" -o "$work/req.arrow"
run stats-requests-file 1 60 'is a requests file' -- "$bin" stats "$work/req.arrow"

echo "== item 12: diff of two captures that share no bio"
if [ -d "$shared/captures/recorded/a-bfq-w100-900" ]; then
	a=$shared/captures/recorded/a-bfq-w100-900 bb=$shared/captures/recorded/a-bfq-w300-700
	run diff-two-runs-no-map 0 120 'no comparison' -- "$bin" diff --map none "$a" "$bb"
	run diff-two-runs-mapped 0 120 'paired by command name' -- "$bin" diff "$a" "$bb"
fi
run diff-two-fixtures 0 60 'paired by command name|no comparison' -- "$bin" diff "$m" "$b2"

echo "== no damage"
sums "${inputs[@]}" >"$work/after.sum"
if cmp -s "$work/before.sum" "$work/after.sum"; then
	echo "ok    inputs-unchanged                    $(wc -l <"$work/before.sum") files"
else
	echo "FAIL  inputs-unchanged"; diff "$work/before.sum" "$work/after.sum" | head; fails=$((fails + 1))
fi
if [ -c /dev/null ]; then echo "ok    dev-null-still-a-device"; else echo "FAIL  /dev/null is not a character device"; fails=$((fails + 1)); fi
echo "$fails failed"
[ $fails -eq 0 ]

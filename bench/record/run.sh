#!/usr/bin/env bash
# bench/record/run.sh: what recording costs a saturating workload. One run, interleaved
# repetitions of the same fio job (4k random reads, libaio, iodepth 32, direct, BFQ, on a
# private loop device over a file of written zeros) measured
#   untraced                      fio alone
#   record                        tracesched record DEV -o DIR -- fio JOB (live drain, the default)
#   record --drain after          the ring buffer (512 MiB per CPU, as the rig's) read only once fio has finished
#   record --reader-nice 19       live drain, the reading thread at nice 19
#   record --no-messages          without BFQ's messages (about 18 per I/O)
#   rig                           ../shared/rig/capture.sh (reader after fio, its default)
# and prints fio's MiB/s per repetition, the medians and the ratios to untraced.
# Root only; needs fio (and python3, blkparse for the rig). Usage:
#   sudo bench/record/run.sh [REPS (3)] [SECONDS (2)]
set -euo pipefail
cd "$(dirname "$0")/../.."
export GOWORK=off
REPS=${1:-3} SECS=${2:-2}
[[ $(id -u) = 0 ]] || { echo "needs root" >&2; exit 2; }
command -v fio >/dev/null || { echo "needs fio" >&2; exit 2; }
RIG=../shared/rig/capture.sh
W=$(mktemp -d /tmp/tsbench-record.XXXXXX)
DEV=
cleanup() {
	[[ -n $DEV ]] && { echo none > "/sys/block/$(basename "$DEV")/queue/scheduler" 2>/dev/null; losetup -d "$DEV" 2>/dev/null; }
	rm -rf "$W"
}
trap cleanup EXIT
go build -o "$W/tracesched" ./cmd/tracesched
dd if=/dev/zero of="$W/disk.img" bs=4M count=256 oflag=direct status=none # 1 GiB
cat > "$W/job.fio" <<'EOF'
[global]
filename=${RIG_DEV}
direct=1
ioengine=libaio
iodepth=32
bs=4k
rw=randread
time_based=1
runtime=${RIG_RUNTIME}
[r]
EOF
attach() {
	DEV=$(losetup --direct-io=on -f --show "$W/disk.img")
	echo bfq > "/sys/block/$(basename "$DEV")/queue/scheduler"
}
detach() { echo none > "/sys/block/$(basename "$DEV")/queue/scheduler"; losetup -d "$DEV"; DEV=; }
mibs() { python3 -c 'import json,sys; t=open(sys.argv[1]).read(); j=json.loads(t[t.index("{"):]); print("%.1f" % (sum(x["read"]["bw_bytes"] for x in j["jobs"])/1048576))' "$1"; }
export RIG_RUNTIME=$((SECS * 1000))ms
declare -A R
for rep in $(seq 1 "$REPS"); do
	attach
	export RIG_DEV=$DEV
	fio --output-format=json --output="$W/u.json" "$W/job.fio"
	R[untraced,$rep]=$(mibs "$W/u.json")
	rm -rf "$W/rec"
	"$W/tracesched" record --wait 10m "$DEV" -o "$W/rec" -- fio --output-format=json --output="$W/r.json" "$W/job.fio" 2> "$W/rec.log" || { cat "$W/rec.log" >&2; exit 1; }
	R[record,$rep]=$(mibs "$W/r.json")
	R[record_MiB,$rep]=$(du -sm "$W/rec" | cut -f1)
	rm -rf "$W/reca"
	# the rig's ring buffer size: the whole run must fit when nothing reads it meanwhile
	"$W/tracesched" record --wait 10m --drain after --buffer-size 512M "$DEV" -o "$W/reca" -- fio --output-format=json --output="$W/a.json" "$W/job.fio" 2> "$W/reca.log" || { cat "$W/reca.log" >&2; exit 1; }
	R[after,$rep]=$(mibs "$W/a.json")
	rm -rf "$W/recn"
	"$W/tracesched" record --wait 10m --reader-nice 19 "$DEV" -o "$W/recn" -- fio --output-format=json --output="$W/n.json" "$W/job.fio" 2> "$W/recn.log" || { cat "$W/recn.log" >&2; exit 1; }
	R[nice,$rep]=$(mibs "$W/n.json")
	rm -rf "$W/recm"
	"$W/tracesched" record --wait 10m --no-messages "$DEV" -o "$W/recm" -- fio --output-format=json --output="$W/m.json" "$W/job.fio" 2> "$W/recm.log" || { cat "$W/recm.log" >&2; exit 1; }
	R[nomsg,$rep]=$(mibs "$W/m.json")
	detach
	if [[ -x $RIG ]]; then
		rm -rf "$W/rig"
		"$RIG" -q -n b -o "$W/rig" -s bfq -j "$W/job.fio" -d "$SECS" -I "$W/disk.img" > "$W/rig.log" 2>&1 || { tail "$W/rig.log" >&2; exit 1; }
		R[rig,$rep]=$(mibs "$W/rig/b.fio.json")
	else
		R[rig,$rep]=nan
	fi
	echo "rep $rep: untraced ${R[untraced,$rep]}  record ${R[record,$rep]}  record --drain after ${R[after,$rep]}  record --reader-nice 19 ${R[nice,$rep]}  record --no-messages ${R[nomsg,$rep]}  rig ${R[rig,$rep]} MiB/s (record wrote ${R[record_MiB,$rep]} MiB)" >&2
done
python3 - "$REPS" "$SECS" <<EOF
import statistics, sys
reps = int(sys.argv[1])
r = {$(for k in "${!R[@]}"; do printf "'%s': '%s', " "$k" "${R[$k]}"; done)}
modes = [('untraced', 'untraced'), ('record', 'tracesched record (live drain)'), ('after', 'tracesched record --drain after'), ('nice', 'tracesched record --reader-nice 19'), ('nomsg', 'tracesched record --no-messages'), ('rig', 'rig capture.sh (reader after)')]
med = {}
print('fio 4k randread, libaio qd32, direct, BFQ, loop device on a 1 GiB file, %s s per run, %d interleaved repetitions' % (sys.argv[2], reps))
print()
print('| mode | MiB/s per repetition | median | vs untraced |')
print('|---|---|---|---|')
for k, name in modes:
    v = [float(r['%s,%d' % (k, i)]) for i in range(1, reps + 1)]
    med[k] = statistics.median(v)
    print('| %s | %s | %.1f | %s |' % (name, ' '.join('%.1f' % x for x in v), med[k],
          '%.2f' % (med[k] / med['untraced']) if med['untraced'] else '-'))
EOF

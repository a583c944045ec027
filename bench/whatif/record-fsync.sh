#!/bin/bash
# Records the fsync writer against a buffered reader (ext4 on the rig's loop
# device: the rig's jobs/fs-fsync-vs-seqread.fio) with the reader paced at
# 30 and 100 MiB/s and unpaced, and the writer alone, under mq-deadline, none
# and BFQ (as root, with ../shared/rig; about 30 s a capture), twice: the
# second round's names end in -2 (two real runs of each target for the
# what-if pairs, bench/whatif's "fsync" group). What the schedulers and the
# reader's rate do to the chain's wake-up delays is in README.md ("The fsync
# chain's wake-up delays"). record.sh runs it last.
# Usage: bench/whatif/record-fsync.sh [OUTDIR]   (default /tmp/fsx-captures)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/fsx-captures}
rig=${RIG:-$here/../../../shared/rig}
J=$here/jobs
mkdir -p "$out"
cd "$rig" || exit 1
P='fio --create_only=1 --section=seqr64k $RIG_JOB'
rec() { # name sched job [setup]
  [ -f "$out/$1/manifest.json" ] && return
  ./capture.sh -z -q -W 1.5 -n "$1" -o "$out/$1" -s "$2" -F ext4 ${4:+-P "$4"} -j "$J/$3" \
    -g tsched-fw=300,tsched-fr=700 -d 2.5 > "$out/$1.log" 2>&1
  echo "$1 rc=$?"
}
for r in "" -2; do
  rec fsx-mqdl-alone$r mq-deadline fsync-alone.fio
  rec fsx-mqdl-r30$r mq-deadline fsync-r30.fio "$P"
  rec fsx-mqdl-r100$r mq-deadline fsync-r100.fio "$P"
  rec fsx-mqdl-rmax$r mq-deadline fsync-rmax.fio "$P"
  rec fsx-bfq-rmax$r bfq fsync-rmax.fio "$P"
  rec fsx-none-r30$r none fsync-r30.fio "$P"
  rec fsx-none-rmax$r none fsync-rmax.fio "$P"
done

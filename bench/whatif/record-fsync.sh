#!/bin/bash
# Records the fsync writer against a buffered reader (ext4 on the rig's loop
# device: the rig's jobs/fs-fsync-vs-seqread.fio) with the reader paced at
# 30 and 100 MiB/s and unpaced, and the writer alone, under mq-deadline, none
# and BFQ (as root, with ../shared/rig; about 30 s a capture), twice: the
# second round's names end in -2 (two real runs of each target for the
# what-if pairs, bench/whatif's "fsync" group). What the schedulers and the
# reader's rate do to the chain's wake-up delays is in README.md ("The fsync
# chain's wake-up delays"). Then the unpaced job under BFQ and mq-deadline
# untraced (-u, -u2). record.sh runs it last.
# Usage: bench/whatif/record-fsync.sh [OUTDIR]   (default /tmp/fsx-captures)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/fsx-captures}
rig=${RIG:-$here/../../../shared/rig}
J=$here/jobs
mkdir -p "$out"
cd "$rig" || exit 1
P='fio --create_only=1 --section=seqr64k $RIG_JOB'
rec() { # name sched job [setup [capture.sh flags...]]
  [ -f "$out/$1/manifest.json" ] && return
  local name=$1 sched=$2 job=$3 setup=${4:-}
  shift $(($# < 4 ? $# : 4))
  ./capture.sh -z -q -W 1.5 -n "$name" -o "$out/$name" -s "$sched" -F ext4 ${setup:+-P "$setup"} -j "$J/$job" \
    -g tsched-fw=300,tsched-fr=700 -d 2.5 "$@" > "$out/$name.log" 2>&1
  echo "$name rc=$?"
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
# The unpaced job under BFQ and mq-deadline without blktrace (capture.sh -T:
# fio's own figures and the kernel's counters, no trace), twice: what the
# schedulers do without the tracing's cost, as in production; the real runs
# of the fsync group's untraced pairs.
for r in -u -u2; do
  rec fsx-bfq-rmax$r bfq fsync-rmax.fio "$P" -T
  rec fsx-mqdl-rmax$r mq-deadline fsync-rmax.fio "$P" -T
done

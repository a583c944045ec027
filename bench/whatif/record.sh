#!/bin/bash
# Records the captures bench/whatif pairs (as root, with ../shared/rig; one
# capture at a time, about 20 s each): two mixed workloads (jobs/mix4.fio,
# jobs/mix3.fio) under mq-deadline, none and BFQ with two weight sets each,
# a second run of some for the run-to-run spread, and seed 000's weight test
# (jobs/seed000.fio) under mq-deadline and under BFQ with its weight pairs.
# Usage: bench/whatif/record.sh [OUTDIR]   (default /tmp/wi-captures)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/wi-captures}
rig=${RIG:-$here/../../../shared/rig}
J=$here/jobs
mkdir -p "$out"
cd "$rig" || exit 1
rec() { # name sched job weights
  [ -f "$out/$1/manifest.json" ] && return
  ./capture.sh -n "$1" -o "$out/$1" -s "$2" -j "$J/$3" -g "$4" -d 1.5 -q > "$out/$1.log" 2>&1
  echo "$1 rc=$?"
}
A4=tsched-cg1=100,tsched-cg2=300,tsched-cg3=600
B4=tsched-cg1=600,tsched-cg2=300,tsched-cg3=100
A3=tsched-cg1=200,tsched-cg2=300,tsched-cg3=500
B3=tsched-cg1=800,tsched-cg2=100,tsched-cg3=100
rec wi-mix4-mqdl mq-deadline mix4.fio $A4
rec wi-mix4-bfq-a bfq mix4.fio $A4
rec wi-mix4-none none mix4.fio $A4
rec wi-mix4-bfq-b bfq mix4.fio $B4
rec wi-mix3-mqdl mq-deadline mix3.fio $A3
rec wi-mix3-bfq-a bfq mix3.fio $A3
rec wi-mix3-bfq-b bfq mix3.fio $B3
rec wi-seed000-mqdl mq-deadline seed000.fio tsched-cg1=100,tsched-cg2=900
for w in 10-90 20-80 30-70 40-60 50-50; do
  rec wi-seed000-bfq-$w bfq seed000.fio tsched-cg1=${w%-*}0,tsched-cg2=${w#*-}0
done
# seed 000 under BFQ 100:900 with low_latency=0 (twice: the first run's
# host load halves the loop device's rate), and with cg2's reader stalling
# 12 ms every 1500 reads (jobs/seed000-stall.fio, the stalls fio showed in
# wi-seed000-mqdl at a load average of 23.5) at low_latency 0 and 1: the
# kernel's waker detection (bfq_check_waker) then gives cg1 cg2's idle time.
recll() { # name job low_latency
  [ -f "$out/$1/manifest.json" ] && return
  ./capture.sh -n "$1" -o "$out/$1" -s bfq -j "$J/$2" -g tsched-cg1=100,tsched-cg2=900 -t low_latency=$3 -d 1.5 -q > "$out/$1.log" 2>&1
  echo "$1 rc=$?"
}
recll wi-seed000-bfq-10-90-ll0 seed000.fio 0
recll wi-seed000-bfq-10-90-ll0-2 seed000.fio 0
recll wi-seed000-stall-bfq-10-90-ll0 seed000-stall.fio 0
recll wi-seed000-stall-bfq-10-90-ll1 seed000-stall.fio 1
rec wi-seed000-stall-mqdl mq-deadline seed000-stall.fio tsched-cg1=100,tsched-cg2=900
# BFQ runs without BFQ's debug messages (-M): with them, each request logs
# about 17 messages into ftrace and the tracing paces fio on a fast device.
recnm() { # name job weights
  [ -f "$out/$1/manifest.json" ] && return
  ./capture.sh -n "$1" -o "$out/$1" -s bfq -j "$J/$2" -g "$3" -d 1.5 -M -q > "$out/$1.log" 2>&1
  echo "$1 rc=$?"
}
recnm wi-seed000-bfq-10-90-nomsg seed000.fio tsched-cg1=100,tsched-cg2=900
recnm wi-seed000-bfq-30-70-nomsg seed000.fio tsched-cg1=300,tsched-cg2=700
recnm wi-mix4-bfq-a-nomsg mix4.fio $A4
recnm wi-seed000-bfq-10-90-nomsg-2 seed000.fio tsched-cg1=100,tsched-cg2=900
rec wi-mix4-bfq-a2 bfq mix4.fio $A4
rec wi-mix4-mqdl2 mq-deadline mix4.fio $A4
rec wi-mix3-bfq-a2 bfq mix3.fio $A3
rec wi-mix3-mqdl2 mq-deadline mix3.fio $A3
# The host submission cost per scheduler (replay.DefaultHostCosts): one 4 KiB random reader at
# iodepth 32 (jobs/hostcost.fio), 2 s, twice under each scheduler, and twice under BFQ without
# its messages (-M; the table's bfq, where wi-host-bfq gives bfq+messages).
for r in "" -2; do
  for s in bfq mq-deadline none bfq-nomsg; do
    n=wi-host-${s/mq-deadline/mqdl}$r
    [ -f "$out/$n/manifest.json" ] && continue
    m=; [ "$s" = bfq-nomsg ] && m=-M
    ./capture.sh -n "$n" -o "$out/$n" -s "${s%-nomsg}" -j "$J/hostcost.fio" -d 2 $m -q > "$out/$n.log" 2>&1
    echo "$n rc=$?"
  done
done
# Second runs of some recorded-fs captures (../shared/captures/recorded-fs: one run each),
# recorded by the rig's run_fs_scenarios.sh as those were and stored as NAME-r2.
rec_fs() { # name
  [ -f "$out/$1-r2/manifest.json" ] && return
  local tmp; tmp=$(mktemp -d)
  DEST=$tmp MAXLOAD=${MAXLOAD:-4} LOADWAIT_MAX=${LOADWAIT_MAX:-60} ./run_fs_scenarios.sh "$1" > "$out/$1-r2.log" 2>&1
  echo "$1-r2 rc=$?"
  [ -f "$tmp/$1/manifest.json" ] && "$here/rename-capture.sh" "$tmp/$1" "$out/$1-r2"
  rm -rf "$tmp"
}
rec_fs fs-bfq-2bufread-idle2ms
rec_fs fs-mqdl-2bufread
rec_fs fs-bfq-fsync-vs-seqread
rec_fs fs-mqdl-fsync-vs-seqread
rec_fs fs-bfq-writeback
rec_fs fs-mqdl-writeback
"$here/record-fsync.sh" "$out"

#!/bin/bash
# Records the extra file-system captures that bench/fidelity replays with -captures DIR (as root,
# with ../shared/rig; one capture at a time; each 3-4 s traced, a minute or two with the layout,
# the conversion and zstd): variations of ../shared/captures/recorded-fs (made by
# ../shared/rig/run_fs_scenarios.sh) that issue 11 asks for, all on ext4 (-F ext4):
#   fs-{bfq,mqdl}-fsync1-vs-seqread  fsync after every 4k write (the shared pair: every 4th)
#                                    against a buffered sequential reader, weights 300/700
#   fs-{bfq,mqdl}-fsync1r100-vs-seqread  the same writer paced at 100 writes+fsyncs a second
#   fs-{bfq,mqdl}-wbpressure         a buffered writer throttled by lowered dirty limits
#                                    (vm.dirty_background_bytes 8 MiB, vm.dirty_bytes 32 MiB,
#                                    restored afterwards) against a buffered reader, 250/750
#   fs-{bfq,mqdl}-6proc-3cg          six processes (buffered sequential and random readers, an
#                                    fsync-every-8 appender) in three cgroups, 100/300/600
#   fs-bfq-nested                    nested v1 blkio cgroups p(800)/{a(200),b(800)} and q(200),
#                                    a buffered reader in each leaf (weights only matter to BFQ)
# Usage: bench/fidelity/record-fs.sh [OUTDIR [NAME...]]   (default /tmp/fs-captures, all)
# Waits (-W) for the 1-minute load average to drop below $MAXLOAD (default 6) for at most
# $LOADWAIT_MAX s (default 30); the manifests' host_load records the load either way.
# Already recorded captures (a manifest.json in OUTDIR/NAME) are kept.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/fs-captures}
shift || true
SEL=("$@")
rig=${RIG:-$here/../../../shared/rig}
J=$here/jobs
MAXLOAD=${MAXLOAD:-6}
export LOADWAIT_MAX=${LOADWAIT_MAX:-30}
CGROOT=/sys/fs/cgroup/blkio
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$rig" || exit 1

# vm.dirty_* (lowered for the writeback-pressure pair only; restored on any exit)
VMF=$out/.vm-dirty.saved
vm_restore() {
  [[ -e $VMF ]] || return 0
  local r br b bb; read -r r br b bb < "$VMF"
  # writing a *_ratio zeroes the matching *_bytes and back: restore whichever was set
  if [[ $bb != 0 ]]; then echo "$bb" > /proc/sys/vm/dirty_background_bytes; else echo "$br" > /proc/sys/vm/dirty_background_ratio; fi
  if [[ $b != 0 ]]; then echo "$b" > /proc/sys/vm/dirty_bytes; else echo "$r" > /proc/sys/vm/dirty_ratio; fi
  rm -f "$VMF"
  echo "restored vm.dirty: $(sysctl -n vm.dirty_ratio vm.dirty_background_ratio vm.dirty_bytes vm.dirty_background_bytes | tr '\n' ' ')" >&2
}
vm_lower() {  # vm_lower BACKGROUND_BYTES BYTES
  [[ -e $VMF ]] || sysctl -n vm.dirty_ratio vm.dirty_background_ratio vm.dirty_bytes vm.dirty_background_bytes | tr '\n' ' ' > "$VMF"
  echo "$1" > /proc/sys/vm/dirty_background_bytes
  echo "$2" > /proc/sys/vm/dirty_bytes
}
vm_restore
trap 'vm_restore' EXIT
trap 'exit 130' INT TERM

sel() { [[ ${#SEL[@]} -eq 0 ]] && return 0; local s; for s in "${SEL[@]}"; do [[ $1 == "$s" ]] && return 0; done; return 1; }
rec() { # rec NAME capture.sh-args...
  local n=$1; shift
  sel "$n" || return 0
  [[ -f $out/$n/manifest.json ]] && { echo "$n: kept" >&2; return 0; }
  rm -rf "${out:?}/$n"
  echo "=== $n $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  ./capture.sh -n "$n" -o "$out/$n" -z -q -W "$MAXLOAD" -F ext4 "$@" > "$out/$n.log" 2>&1
  local rc=$?
  local m=$out/$n/manifest.json
  if [[ -f $m ]]; then
    echo "$n rc=$rc trace_complete=$(jq -c .trace_complete "$m") workload_rc=$(jq -c '.fio_rc // .workload.rc' "$m") load=$(jq -c '.host_load' "$m" | head -c 300)" >&2
  else
    echo "$n rc=$rc (no manifest; see $out/$n.log)" >&2
  fi
}

FS1=tsched-fw=300,tsched-fr=700
rec fs-bfq-fsync1-vs-seqread  -s bfq         -P 'fio --create_only=1 --section=seqr64k $RIG_JOB' -j "$J/fs-fsync1-vs-seqread.fio" -g $FS1 -d 3
rec fs-mqdl-fsync1-vs-seqread -s mq-deadline -P 'fio --create_only=1 --section=seqr64k $RIG_JOB' -j "$J/fs-fsync1-vs-seqread.fio" -g $FS1 -d 3
rec fs-bfq-fsync1r100-vs-seqread  -s bfq         -P 'fio --create_only=1 --section=seqr64k $RIG_JOB' -j "$J/fs-fsync1r100-vs-seqread.fio" -g $FS1 -d 3
rec fs-mqdl-fsync1r100-vs-seqread -s mq-deadline -P 'fio --create_only=1 --section=seqr64k $RIG_JOB' -j "$J/fs-fsync1r100-vs-seqread.fio" -g $FS1 -d 3

for s in bfq mq-deadline; do
  n=fs-${s/mq-deadline/mqdl}-wbpressure
  sel "$n" || continue
  [[ -f $out/$n/manifest.json ]] && { echo "$n: kept" >&2; continue; }
  vm_lower $((8 << 20)) $((32 << 20))
  rec "$n" -s $s -P 'fio --create_only=1 --section=seqr64k $RIG_JOB' -j "$J/fs-wbpressure.fio" -g tsched-wpw=250,tsched-wpr=750 -d 3
  vm_restore
done

LAY6='fio --create_only=1 --section=r1a --section=r1b --section=r2rand --section=r2seq --section=r3seq $RIG_JOB'
M3=tsched-m1=100,tsched-m2=300,tsched-m3=600
rec fs-bfq-6proc-3cg  -s bfq         -P "$LAY6" -j "$J/fs-6proc-3cg.fio" -g $M3 -d 3
rec fs-mqdl-6proc-3cg -s mq-deadline -P "$LAY6" -j "$J/fs-6proc-3cg.fio" -g $M3 -d 3

# parents before children (capture.sh mkdirs in this order); its cleanup rmdirs in the same
# order, so the parent (still holding its children then) is left: removed here.
rec fs-bfq-nested -s bfq -P 'fio --create_only=1 $RIG_JOB' -j "$J/fs-nested.fio" -g tsched-p=800,tsched-p/a=200,tsched-p/b=800,tsched-q=200 -d 3
[[ -d $CGROOT/tsched-p && ! -d $CGROOT/tsched-p/a && ! -d $CGROOT/tsched-p/b ]] && rmdir "$CGROOT/tsched-p" 2>/dev/null
true

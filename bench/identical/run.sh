#!/usr/bin/env bash
# Byte-identity of replay outputs between two revisions: every fixture
# through every scheduler model, the predicted events (-o, Arrow) and the
# diff (--json) compared byte for byte, with and without the device-model
# cache (a cold run, then a warm one).
#
#   bench/identical/run.sh [BASE_REV]   (default: the merge base with main, else HEAD~1)
#
# TRACESCHED_IDENTICAL_EXTRA adds inputs (space-separated) to the fixtures.
#
# Prints one line per replay and "identical: N of N" at the end; exits 1 on
# any difference.
set -euo pipefail
cd "$(dirname "$0")/../.."
export GOWORK=off
base=${1:-$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD~1)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base-src"
git archive "$base" | tar -x -C "$tmp/base-src"
(cd "$tmp/base-src" && go build -o "$tmp/base" ./cmd/tracesched)
go build -o "$tmp/head" ./cmd/tracesched
export XDG_CACHE_HOME=$tmp/cache HOME=$tmp/home
n=0 same=0
inputs="fixtures/fx-bfq-2cg-w100-900/fx-bfq-2cg-w100-900 fixtures/fx-bfq-4seqread/fx-bfq-4seqread
fixtures/fx-mqdl-rw-nocg/fx-mqdl-rw-nocg fixtures/fx-ftrace-bin/fx-ftrace-bin.pipe.bin.zst
fixtures/fx-ftrace-classic/fx-ftrace-classic.trace.txt.zst fixtures/fx-ftrace-text/fx-ftrace-text.trace.txt.zst
${TRACESCHED_IDENTICAL_EXTRA:-}"
for in in $inputs; do
	name=$(basename "$in")
	for s in none mq-deadline bfq cfq; do
		for run in cold warm; do
			n=$((n + 1))
			"$tmp/base" replay --sched "$s" "$in" -o "$tmp/b.arrow" --json >"$tmp/b.json" 2>/dev/null || echo "base failed" >"$tmp/b.json"
			"$tmp/head" replay --sched "$s" "$in" -o "$tmp/h.arrow" --json >"$tmp/h.json" 2>/dev/null || echo "head failed" >"$tmp/h.json"
			if cmp -s "$tmp/b.arrow" "$tmp/h.arrow" && cmp -s "$tmp/b.json" "$tmp/h.json"; then
				same=$((same + 1))
				echo "same    $name $s ($run)"
			else
				echo "DIFFERS $name $s ($run)"
			fi
			rm -f "$tmp/b.arrow" "$tmp/h.arrow"
		done
	done
done
echo "identical: $same of $n (base $base)"
[ "$same" = "$n" ]

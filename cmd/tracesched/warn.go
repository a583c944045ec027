package main

import (
	"fmt"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// warnIncomplete says, when per-CPU files are missing, how many of the
// capture's requests never complete because of it (their C events were
// recorded on the missing CPUs): the one-line note on the missing files
// alone hid that most requests of public/hadoop-node8 never complete.
func warnIncomplete(ios *IOStreams, name string, diag blktrace.Diagnostics, incomplete, total uint64) {
	if len(diag.MissingCPUFiles) == 0 || incomplete == 0 {
		return
	}
	fmt.Fprintf(ios.ErrOut, "tracesched: %s: %d of %d requests never complete (%.0f%%): events of the missing CPU files %v (completions among them) are not in the capture\n",
		name, incomplete, total, 100*float64(incomplete)/float64(max(total, 1)), diag.MissingCPUFiles)
}

// countIncomplete returns how many of s's requests are flagged
// FlagIncomplete.
func countIncomplete(s *diff.Side) uint64 {
	return uint64(s.FlaggedRequests(trace.FlagIncomplete))
}

// explainOpenSpan says why an open-loop prediction lasts much longer than
// its capture: bios arrive at their captured times whatever the model
// does, so a model (scheduler and device) that serves them more slowly
// than the kernel did builds a backlog that only drains after the last
// arrival. A closed loop paces each process by its own completions
// instead. Silent when the spans are within 1.5x.
func explainOpenSpan(ios *IOStreams, mode replay.Mode, res replay.Result, real, pred float64) {
	if mode != replay.Open || real <= 0 || pred <= 1.5*real {
		return
	}
	fmt.Fprintf(ios.ErrOut, "tracesched: open loop: the prediction lasts %.3f s for a %.3f s capture (%.1fx): bios arrive at their captured times and the modelled scheduler and device serve them more slowly than the kernel did, so a backlog built up (at most %d requests waiting, %d bios waited for a free request) and drained after the last arrival; the closed loop (--mode closed, the default) paces each process by its own completions\n",
		pred, real, pred/real, res.MaxWaiting, res.Sleeps)
}

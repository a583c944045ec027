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

// maxIncompletePct is the share of a capture's requests, percent, that
// may never complete before replay refuses it (--allow-incomplete): a
// capture that stops while requests are in flight leaves a few (0.17 % of
// recorded-fs/fs-bfq-writeback's, its writeback at the end); one whose
// completions were lost leaves most (56 % of public/hadoop-node8's, a
// per-CPU file missing), and then the device model is calibrated on
// requests whose D and C were matched across the gaps (D2C up to 60 s)
// and the processes' depths and think times come from completions that
// are not there: the prediction says nothing of the kernel.
const maxIncompletePct = 10

// checkComplete refuses a replay of a capture n of whose total requests
// never complete, more than maxIncompletePct, unless allow.
func checkComplete(name string, n, total uint64, allow bool) error {
	if allow || total == 0 || 100*n <= maxIncompletePct*total {
		return nil
	}
	return fmt.Errorf("%s: %d of %d requests (%.0f%%) never complete: their completions are not in the capture (a per-CPU file missing, events lost?), so neither the device model nor the processes' pacing can be taken from it; --allow-incomplete replays it anyway", name, n, total, 100*float64(n)/float64(total))
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

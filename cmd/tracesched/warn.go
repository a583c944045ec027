package main

import (
	"fmt"

	"github.com/tracesched/tracesched/parse/blktrace"
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

// countIncomplete returns how many of reqs are flagged FlagIncomplete.
func countIncomplete(reqs []trace.Request) (n uint64) {
	for i := range reqs {
		if reqs[i].Flags&trace.FlagIncomplete != 0 {
			n++
		}
	}
	return n
}

package main

import (
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/trace"
)

// realWarm returns the max_budget BFQ had tuned itself to when the first
// of names (captures of the target's real runs) whose trace carries BFQ's
// messages began (bfq.WarmFrom: its first recalc_budg message), and that
// capture's name; 0 when none shows it (a BFQ started with the trace, as
// ../shared/rig does on a raw device, or runs without a trace). BFQ's
// state before a trace is the real run's history (the rig's setup, -P,
// ran under it), not what the scheduler does to the workload: -bfq-warm
// real starts the prediction where the real run started, as -traced
// predicts it traced when the real run was.
func realWarm(names []string) (int64, string, error) {
	for _, n := range names {
		c, err := locate(n)
		if err != nil || c.untraced() {
			continue
		}
		src, err := blktrace.Open(c.base())
		if err != nil {
			return 0, "", err
		}
		side, err := diff.Load(src, trace.Meta{})
		src.Close()
		if err != nil {
			return 0, "", err
		}
		if side.Messages.Len() == 0 {
			continue
		}
		if mb := bfq.WarmFrom(side.MessageSeq())["max_budget"]; mb > 0 {
			return mb, n, nil
		}
		return 0, n, nil // BFQ's messages, none of a tuned budget: started cold
	}
	return 0, "", nil
}

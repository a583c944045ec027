package main

import (
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// thinkOptions sets the think-time rules of o from what a prediction's
// metadata records of its replay (replay writes the scheduler, the kernel
// and every --set into the predicted file's Meta): slice_idle, idling off,
// and the pre-5.12 rule for BFQ kernels before 5.12. replay, diff and tui
// all take them from there, so a replay and a later diff of its output
// judge think times alike.
func thinkOptions(o diff.Options, metas ...trace.Meta) diff.Options {
	for _, m := range metas {
		sched := m.Extra["scheduler"]
		if sched == "" {
			continue
		}
		sets := map[string]string{}
		for k, v := range m.Extra {
			if name, ok := strings.CutPrefix(k, "set."); ok {
				sets[name] = v
			}
		}
		o.SliceIdle, o.IdleOff = diff.ThinkOptions(sets)
		o.LegacyThinkTime = sched == "bfq" && kernelBefore(m.Kernel, 5, 12)
		return o
	}
	return o
}

// kernelBefore reports whether version v ("5.11", "6.1.0") is before
// major.minor; false when v does not parse.
func kernelBefore(v string, major, minor int) bool {
	a, b, _ := strings.Cut(v, ".")
	b, _, _ = strings.Cut(b, ".")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return x < major || x == major && y < minor
}

package main

import (
	"os"

	"golang.org/x/term"

	"github.com/tracesched/tracesched/diff"
)

// tuiRunInfo describes a run for the terminal inspector's overview.
type tuiRunInfo struct {
	inputs  []string
	sched   string
	kernel  string
	sets    map[string]string
	weights map[uint64]int
	device  string
}

func tuiInfo(opts *replayOptions, sched, kernel string, sets map[string]string, weights map[uint64]int, dev string) tuiRunInfo {
	return tuiRunInfo{inputs: []string{opts.input}, sched: sched, kernel: kernel, sets: sets, weights: weights, device: dev}
}

// runTUI opens the terminal inspector (wired when the tui package lands).
func runTUI(ios *IOStreams, res *diff.Result, info tuiRunInfo) error {
	return usagef("the terminal inspector is not available in this build")
}

// termWidth returns stdout's width when it is a terminal, else 100.
func termWidth(ios *IOStreams) int {
	if ios.OutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 20 {
			return w
		}
	}
	return 100
}

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracesched/tracesched/diff"
)

// Flag values that were accepted silently (issue 14 item 11) are checked
// here, against what a kernel accepts.

// kernelHZ are the tick rates kernel/Kconfig.hz offers (CONFIG_HZ_100 ...
// CONFIG_HZ_1000).
var kernelHZ = []int{100, 250, 300, 1000}

// checkHZ refuses a --hz no kernel is built with (0 made every jiffy
// conversion divide by zero or stall).
func checkHZ(hz int) error {
	if !slices.Contains(kernelHZ, hz) {
		return usagef("invalid value for --hz: %d (a kernel's CONFIG_HZ is 100, 250, 300 or 1000)", hz)
	}
	return nil
}

// maxQueueDepth bounds nr_requests and queue_depth: blk-mq allocates at
// most BLK_MQ_MAX_DEPTH (10240) tags per hardware queue, and
// queue_requests_store refuses more.
const maxQueueDepth = 10240

// warnUnknownWeights warns about --weight cgroups that no bio of the
// capture belongs to: a typo, or an id from another capture, that
// otherwise changed nothing without a word.
func warnUnknownWeights(ios *IOStreams, input string, weights map[uint64]int, real *diff.Side) {
	if len(weights) == 0 {
		return
	}
	seen := map[uint64]bool{}
	for i := range real.NumBios() {
		seen[real.BioAt(i).Cgroup] = true
	}
	var missing []string
	for id := range weights {
		if !seen[id] {
			missing = append(missing, fmt.Sprint(id))
		}
	}
	if len(missing) == 0 {
		return
	}
	slices.Sort(missing)
	var have []string
	for id := range seen {
		have = append(have, fmt.Sprint(id))
	}
	slices.Sort(have)
	fmt.Fprintf(ios.ErrOut, "tracesched: warning: --weight for cgroup %s: no bio of %s is in it (its cgroups: %s)\n",
		strings.Join(missing, ", "), input, strings.Join(have, ", "))
}

// requestsFileHint explains the refusal of a requests file where events
// are read: convert writes both, and only the events file is an INPUT.
func requestsFileHint(name string, err error) error {
	if err != nil && strings.Contains(err.Error(), `is "requests", want "events"`) {
		return fmt.Errorf("%s is a requests file (tracesched convert -o): stats, calibrate, replay and diff read events; give the capture, or the file convert wrote with --events", name)
	}
	return err
}

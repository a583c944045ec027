package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// The garbage collector's targets (GOGC) for the phases of replay and diff
// after the capture is read. The live heap is then mostly the diff sides'
// tables (diff.Side) and the workload's (replay.Collector): a few bytes per
// field, in blocks the collector marks without scanning, so collecting
// before the heap doubles (GOGC=100) costs little and keeps the peak
// nearer the live heap:
//
//   - arrayPhaseGCPercent, for the phases that allocate a few large
//     arrays beside it: the calibration's copy of the requests (as large
//     as the sides), the device model's coverage of the prediction, and
//     the comparison;
//   - replayPhaseGCPercent, for the replay, which also allocates many
//     small objects (the engine's records and events).
//
// Reading the capture keeps the default: its live heap is still small.
const (
	arrayPhaseGCPercent  = 25
	replayPhaseGCPercent = 50
)

// phaseGC sets the target percent, unless GOGC is in the environment (which
// then decides throughout, as for any Go program), and returns the function
// that restores the previous target. With collect, restoring also collects
// once, so that the next phase's heap target is reckoned from what
// outlives this phase, not from the phase's own large arrays.
func phaseGC(percent int, collect bool) (restore func()) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() {
		debug.SetGCPercent(old)
		if collect {
			runtime.GC()
		}
	}
}

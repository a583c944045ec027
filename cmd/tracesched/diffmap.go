package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/diff"
)

// parsePIDMap parses --map-pid REAL=PREDICTED values into predicted pid
// -> real pid.
func parsePIDMap(vals []string) (map[uint32]uint32, error) {
	out := map[uint32]uint32{}
	for _, v := range vals {
		a, b, ok := strings.Cut(v, "=")
		r, err1 := strconv.ParseUint(a, 10, 32)
		p, err2 := strconv.ParseUint(b, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("invalid value for --map-pid: %q (want REAL=PREDICTED, two pids)", v)
		}
		out[uint32(p)] = uint32(r)
	}
	return out, nil
}

// sharesBio reports whether the two sides have a bio with the same
// (PID, Index).
func sharesBio(real, pred *diff.Side) bool {
	for i := range pred.NumBios() {
		if b := pred.BioAt(i); real.Bio(b.PID, b.Index) >= 0 {
			return true
		}
	}
	return false
}

// mapSides applies --map and --map-pid: pred with its processes (and, for
// auto, cgroups) renamed to real's. With neither flag, two traces that
// share no bio are mapped as with --map auto, and stderr says so.
func mapSides(ios *IOStreams, real, pred *diff.Side, mode string, pidFlags []string) (*diff.Side, error) {
	pids, err := parsePIDMap(pidFlags)
	if err != nil {
		return nil, err
	}
	switch {
	case len(pids) > 0:
		return pred.Remap(pids, nil), nil
	case mode == "none":
		return pred, nil
	case mode == "" && sharesBio(real, pred):
		return pred, nil
	}
	pids = diff.MapByCommand(real, pred)
	cgs := diff.MapCgroupsByPath(real, pred)
	byPath := len(cgs)
	cgs = diff.MapCgroupsByProcess(real, pred, pids, cgs)
	if mode == "" {
		fmt.Fprintf(ios.ErrOut, "tracesched: the traces share no bio (process, position): %d processes paired by command name and start order, %d cgroups by path and %d by their processes (--map none to compare as they are)\n", len(pids), byPath, len(cgs)-byPath)
	}
	return pred.Remap(pids, cgs), nil
}

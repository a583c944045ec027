package main

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/pipeline"
	"github.com/tracesched/tracesched/trace"
)

// pooledRequests reads every input (captures of one device), each into a
// compact table of its requests (a diff.Side, without its scheduler
// messages), and lays their requests on the busiest device of each end to
// end (device.PoolSeq), with what they cover (device.Coverage, pooled).
// One input gives its requests unchanged. The sequence can be read again,
// as device.CalibrateSeq does.
func pooledRequests(ctx context.Context, ios *IOStreams, inputs []string) (iter.Seq[*trace.Request], *device.Coverage, string, error) {
	if err := distinctInputs(inputs); err != nil {
		return nil, nil, "", err
	}
	var sets []iter.Seq[*trace.Request]
	cov := &device.Coverage{}
	var devs []string
	for _, in := range inputs {
		side, err := readSide(ctx, ios, in)
		if err != nil {
			return nil, nil, "", err
		}
		dev := busiestDevice(side)
		r := pipeline.SideRequests(side, dev)
		c := device.CoverageOfSeq(r)
		c.Sources = []string{in}
		cov.Merge(c)
		sets = append(sets, r)
		devs = append(devs, dev.String())
	}
	if len(sets) == 1 {
		return sets[0], cov, devs[0], nil
	}
	return device.PoolSeq(sets...), cov, strings.Join(devs, ", "), nil
}

// readSide reads a whole input into a finished diff.Side: its rebuilt
// requests and bios, stored compactly. Scheduler messages are left out:
// the calibration does not read them.
func readSide(ctx context.Context, ios *IOStreams, name string) (*diff.Side, error) {
	side := diff.NewSide(trace.Meta{})
	meta, _, err := readInput(ctx, ios, name, "reading "+name, func(e *trace.Event) error {
		if e.Action != trace.ActionMessage {
			side.Add(e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	side.Meta = meta
	side.Finish()
	return side, nil
}

// busiestDevice returns the device with the most issued requests in side
// (the lowest of those tied).
func busiestDevice(side *diff.Side) trace.Dev {
	n := map[trace.Dev]int{}
	var best trace.Dev
	for i := range side.NumRequests() {
		r := side.RequestAt(i)
		if r.Issue.Valid() {
			d := r.Dev
			n[d]++
			if n[d] > n[best] || n[d] == n[best] && d < best {
				best = d
			}
		}
	}
	return best
}

// coverageWarnings compares a replay's predicted requests with what the
// device model's calibration saw, and states each extrapolation on stderr.
// A model without coverage (one saved before models carried it, from
// path) cannot be checked: that is said on stderr, and nothing returned.
func coverageWarnings(ios *IOStreams, m *device.Model, path string, pred iter.Seq[*trace.Request]) []string {
	if m == nil {
		return nil
	}
	if m.Coverage == nil {
		fmt.Fprintf(ios.ErrOut, "tracesched: %s does not say what its calibration saw (no coverage): whether the replay extrapolates is not checked\n", path)
		return nil
	}
	w := m.Coverage.Outside(device.CoverageOfSeq(pred))
	for _, s := range w {
		fmt.Fprintf(ios.ErrOut, "tracesched: device model extrapolates: %s\n", s)
	}
	return w
}

package main

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/internal/pipeline"
	"github.com/tracesched/tracesched/trace"
)

// pooledRequests reads every input (captures of one device) and lays their
// requests on the busiest device of each end to end (device.Pool), with
// what they cover (device.Coverage, pooled). One input gives its requests
// unchanged.
func pooledRequests(ctx context.Context, ios *IOStreams, inputs []string) ([]trace.Request, *device.Coverage, string, error) {
	var sets [][]trace.Request
	cov := &device.Coverage{}
	var devs []string
	for _, in := range inputs {
		reqs, _, err := readRequests(ctx, ios, in)
		if err != nil {
			return nil, nil, "", err
		}
		dev := busiestDevice(reqs)
		r := pipeline.OnDevice(reqs, dev)
		c := device.CoverageOf(r)
		c.Sources = []string{in}
		cov.Merge(c)
		sets = append(sets, r)
		devs = append(devs, dev.String())
	}
	if len(sets) == 1 {
		return sets[0], cov, devs[0], nil
	}
	return device.Pool(sets...), cov, strings.Join(devs, ", "), nil
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

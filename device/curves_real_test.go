package device_test

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace"
)

// TestDepthCurvesRawSweep: raw-sweep-none is a sweep of the loop device
// as the probe's is (fio: 4 KiB random reads at iodepth 1, 2, 4, ..., 64,
// then 64 KiB random reads, then 4 KiB random writes, one process per
// step, each 0.4 s). Calibrated on the whole capture, the model must time
// every step's requests, each issued at its real D with the real requests
// on the device (ProbeResult.StepFits, as the probe scores its cells),
// within 10 % of the step's mean D2C in the capture. The model with one
// in-flight factor for every size and the count at the issue as the load
// (CalibrateOptions.NoCurves) times the qd1 4 KiB reads at 154 us where
// the capture shows 69 us: the loop device completes in bunches, so the
// qd16 step issues its requests with 1 to 16 on the device in equal
// parts, all taking about 460 us, and the factor at 1 mixes them with
// the qd1 step's.
func TestDepthCurvesRawSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates a 244,749-request capture")
	}
	dir := shared.Path(t, "captures", "recorded-fs", "raw-sweep-none")
	reqs := readRequests(t, filepath.Join(dir, "raw-sweep-none"))
	res := sweepOf(t, reqs)
	if len(res.Steps) != 21 {
		t.Fatalf("%d steps, want the sweep's 21", len(res.Steps))
	}
	m, fit, err := device.Calibrate(res.Requests, device.CalibrateOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	if n := m.NonRotational; n == nil || len(n.Curves) == 0 || n.DepthWindow <= 0 {
		t.Fatalf("model without depth curves: load measured by %q", fit.Load)
	}
	for _, s := range res.StepFits(m, 1) {
		t.Logf("%-18s %6d requests, mean %v, model %v (%+.1f%%)", s.Step, s.Requests, s.Mean, s.ModelMean, 100*s.Error())
		if !(math.Abs(s.Error()) <= 0.10) {
			t.Errorf("%s: model mean %v, capture %v: %+.1f%%, want within 10%%", s.Step, s.ModelMean, s.Mean, 100*s.Error())
		}
	}
	old, _, err := device.Calibrate(res.Requests, device.CalibrateOptions{Seed: 1, NoCurves: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.StepFits(old, 1) {
		t.Logf("without curves: %-18s mean %v, model %v (%+.1f%%)", s.Step, s.Mean, s.ModelMean, 100*s.Error())
	}
}

// sweepOf returns raw-sweep-none as a ProbeResult: one step per process,
// in the order they ran (fio's job names: the op, size and depth).
func sweepOf(t *testing.T, reqs []trace.Request) *device.ProbeResult {
	first := map[uint32]trace.Time{}
	for _, r := range reqs {
		if f, ok := first[r.PID]; r.Queue.Valid() && (!ok || r.Queue < f) {
			first[r.PID] = r.Queue
		}
	}
	var pids []uint32
	for p := range first {
		pids = append(pids, p)
	}
	slices.SortFunc(pids, func(a, b uint32) int { return int(first[a] - first[b]) })
	depths := []int{1, 2, 4, 8, 16, 32, 64}
	res := &device.ProbeResult{}
	for i, p := range pids {
		if i >= 3*len(depths) {
			t.Fatalf("process %d beyond the sweep's 21 steps", p)
		}
		st := device.ProbeStep{Write: i >= 2*len(depths), Size: 4096, Depth: depths[i%len(depths)]}
		if i/len(depths) == 1 {
			st.Size = 65536
		}
		sp := device.ProbeSpan{First: len(res.Requests), Start: trace.NoTime}
		for _, r := range reqs {
			if r.PID != p {
				continue
			}
			if r.Bytes != st.Size || r.Cat.IsWrite() != st.Write {
				t.Fatalf("process %d (step %s): a request of %d bytes, write %v", p, st, r.Bytes, r.Cat.IsWrite())
			}
			res.Requests = append(res.Requests, r)
			if r.Issue.Valid() && (!sp.Start.Valid() || r.Issue < sp.Start) {
				sp.Start = r.Issue
			}
			if r.Complete.Valid() {
				sp.Stop = max(sp.Stop, r.Complete)
			}
		}
		sp.End = len(res.Requests)
		res.Steps = append(res.Steps, st)
		res.Spans = append(res.Spans, sp)
	}
	return res
}

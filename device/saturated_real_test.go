package device_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestSaturatedBelowRawSweep: raw-sweep-none runs 4 KiB random reads on
// the loop device at iodepth 1, 2, 4, ..., 64, one fio process per step
// (the first seven processes, in order). A model calibrated on the qd32
// step alone saw 32 requests on the device nearly all the time, so it
// holds the throughput below that (SaturatedBelow). Its mean latency at
// 4 on the device must come within a third of what the capture measured
// in the qd4 step (the real device at that depth), where holding the
// latency instead (the model without SaturatedBelow) predicts the qd32
// step's, several times too slow.
func TestSaturatedBelowRawSweep(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "raw-sweep-none")
	reqs := readRequests(t, filepath.Join(dir, "raw-sweep-none"))
	first := map[uint32]trace.Time{}
	for _, r := range reqs {
		if f, ok := first[r.PID]; !ok || r.Queue < f {
			first[r.PID] = r.Queue
		}
	}
	var pids []uint32
	for p := range first {
		pids = append(pids, p)
	}
	slices.SortFunc(pids, func(a, b uint32) int { return int(first[a] - first[b]) })
	if len(pids) < 7 {
		t.Fatalf("%d processes, want the sweep's steps", len(pids))
	}
	step := func(i int) []trace.Request {
		var out []trace.Request
		for _, r := range reqs {
			if r.PID == pids[i] && r.Issue.Valid() && r.Complete.Valid() {
				out = append(out, r)
			}
		}
		return out
	}
	meanD2C := func(rs []trace.Request) float64 {
		var s float64
		for _, r := range rs {
			s += float64(r.Complete - r.Issue)
		}
		return s / float64(len(rs))
	}
	qd4, qd32 := step(2), step(5)
	for _, r := range append(slices.Clone(qd4), qd32...) {
		if r.Bytes != 4096 || r.Cat.IsWrite() {
			t.Fatalf("step request of %d bytes, write %v: not the 4 KiB read steps", r.Bytes, r.Cat.IsWrite())
		}
	}
	m, fit, err := device.Calibrate(qd32, device.CalibrateOptions{Seed: 1, Kind: device.KindNonRotational})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", fit)
	n := m.NonRotational
	if n.SaturatedBelow < 16 {
		t.Fatalf("SaturatedBelow %d for a capture at 32 on the device", n.SaturatedBelow)
	}
	// The model's mean latency with 4 on the device.
	at4 := func(m *device.Model) float64 {
		dev := m.NewDevice(3)
		var sum float64
		const rounds = 2000
		for i := range rounds {
			now := trace.Time(i) * 10_000_000
			var rs []*replay.Request
			for j := range 4 {
				r := &replay.Request{ID: uint64(4*i + j + 1), Sector: uint64(4*i+j) * 997 * 8, Bytes: 4096, Cat: trace.CatRead}
				rs = append(rs, r)
				if d := dev.Issue(now, r); j == 3 {
					sum += float64(d - now)
				}
			}
			for _, r := range rs {
				dev.Done(now+5_000_000, r)
			}
		}
		return sum / rounds
	}
	real4, real32 := meanD2C(qd4), meanD2C(qd32)
	got := at4(m)
	flat := *m
	fn := *n
	fn.SaturatedBelow = 0
	flat.NonRotational = &fn
	held := at4(&flat)
	t.Logf("mean D2C: capture qd4 %.0f us, qd32 %.0f us; model at 4: %.0f us (holding the latency: %.0f us)",
		real4/1e3, real32/1e3, got/1e3, held/1e3)
	if got < real4*2/3 || got > real4*4/3 {
		t.Errorf("model at 4 on the device: mean %.0f us, want within a third of the capture's qd4 step, %.0f us", got/1e3, real4/1e3)
	}
}

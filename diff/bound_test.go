package diff

import (
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Issue 14 item 2: one completion 13 days after the rest (a flipped bit
// 50 of its time, within trace.MaxSpan) made the bandwidth series 11 M
// windows long per cgroup; they are widened to stay within MaxWindows.
func TestBandwidthWindowsBounded(t *testing.T) {
	real := synthSide(2000, 4, 1)
	pred := cloneSide(real)
	far := trace.Time(1) << 50 // 13.03 days
	bios, reqs := real.BioSlice(), real.RequestSlice()
	last := &reqs[len(reqs)-1]
	last.Complete = far
	for i := range bios {
		if bios[i].Request == last.ID {
			bios[i].Done = far
		}
	}
	real = FromData(real.Meta, bios, reqs, nil)
	res := Compare(real, pred, Options{})
	bw := res.Bandwidth
	if bw.Windows > MaxWindows || bw.Windows < MaxWindows/2 {
		t.Errorf("%d windows, want at most %d (and more than half of it)", bw.Windows, MaxWindows)
	}
	// The widened window covers the span: windows*width >= 13 days.
	if got := float64(bw.Windows) * bw.WindowSeconds; got < far.Seconds() {
		t.Errorf("%d windows of %.3f s cover %.0f s, want >= %.0f", bw.Windows, bw.WindowSeconds, got, far.Seconds())
	}
	// A whole multiple of the 100 ms default.
	if w := time.Duration(bw.WindowSeconds * 1e9); w%(100*time.Millisecond) != 0 {
		t.Errorf("window %v is not a multiple of 100ms", w)
	}
	for _, c := range res.Cgroups {
		if len(c.RealSeries) != bw.Windows {
			t.Errorf("cgroup %d: %d windows in its series, want %d", c.ID, len(c.RealSeries), bw.Windows)
		}
	}
	// An ordinary capture keeps the asked window.
	if w := Compare(pred, cloneSide(pred), Options{}).Bandwidth.WindowSeconds; w != 0.1 {
		t.Errorf("window %v s on a 0.2 s capture, want 0.1", w)
	}
}

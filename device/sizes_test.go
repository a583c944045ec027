package device

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// sizedCapture is a capture of reads one at a time whose latency is not
// affine in their size, as a fast loop device's (rig/wi-mix4-mqdl on the
// third VM: 4 KiB random reads 5 us D2C p50, 64 KiB 150 us, 1 MiB 620 us):
// n requests of each size, each 0.8, 1 or 1.2 times its size's latency.
func sizedCapture(n int) []trace.Request {
	sizes := []uint32{4096, 65536, 1 << 20}
	lat := []trace.Time{5_000, 150_000, 620_000}
	spread := []float64{0.8, 1, 1.2}
	var rs []trace.Request
	t, sector := trace.Time(1_000_000), uint64(12345)
	for i := range 3 * n {
		b := i % 3
		sector = (sector*6364136223846793005 + 1442695040888963407) % (1 << 30) &^ 7
		d := trace.Time(float64(lat[b]) * spread[(i/3)%3])
		rs = append(rs, trace.Request{ID: uint64(i + 1), Dev: 1, Sector: sector, Bytes: sizes[b], Cat: trace.CatRead, PID: 7,
			Queue: t, Get: t, Insert: t, Issue: t, Complete: t + d, Bios: 1})
		t += d + 20_000
	}
	return rs
}

// The line Base+PerByte*bytes, fitted over the three sizes, gives the
// 4 KiB reads tens of microseconds; the size bands give each size its
// own mean latency (the capture's, computed by hand: 5, 150 and 620 us)
// and its own spread.
func TestSizeBandsMeanLatency(t *testing.T) {
	reqs := sizedCapture(1000)
	m, _, err := Calibrate(reqs, CalibrateOptions{Kind: KindNonRotational, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rd := m.NonRotational.Read
	if len(rd.Sizes) != 3 {
		t.Fatalf("read size bands %+v, want 3", rd.Sizes)
	}
	for i, want := range []float64{5_000, 150_000, 620_000} {
		b := rd.Sizes[i]
		got := rd.mean(b.Bytes) * m.NonRotational.saturation(1)
		within(t, fmt.Sprintf("mean latency at %d bytes", b.Bytes), got, want, 0.05)
		// The band's table keeps its size's spread: 0.8 to 1.2.
		if lo, hi := b.Residual.At(0.01), b.Residual.At(0.99); lo < 0.75 || hi > 1.25 {
			t.Errorf("%d bytes: residual p1 %.3f p99 %.3f, want within 0.75-1.25", b.Bytes, lo, hi)
		}
	}
	line := float64(rd.Base) + rd.PerByte*4096
	if line < 2*5_000 {
		t.Errorf("the line gives 4 KiB reads %.0f ns: the capture shows nothing the bands correct", line)
	}
	// A size between two bands: interpolated in log size and factor.
	if f, lo, hi := rd.sizeFactor(16384), rd.Sizes[0].Factor, rd.Sizes[1].Factor; !(f > min(lo, hi) && f < max(lo, hi)) {
		t.Errorf("16 KiB factor %.3f not between the 4 KiB and 64 KiB ones (%.3f, %.3f)", f, lo, hi)
	}
	// The bands survive Save and Load.
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.NonRotational.Read.Sizes; len(got) != 3 || got[0].Bytes != 4096 || got[0].Factor != rd.Sizes[0].Factor || got[2].Residual.Len() != rd.Sizes[2].Residual.Len() {
		t.Errorf("loaded size bands %+v, saved %+v", got, rd.Sizes)
	}
}

// sizeSplitDemerit scores each class and quarter octave of sizes on its
// own: 500 reads of 4 KiB timed right (demerit 0) and 500 of 1 MiB timed
// twice too slow (every quantile off by its own value: 1.0 of the mean)
// average to 0.5; groups under minSizeBand requests are left out. The
// pooled figure of the same timings, by hand: the lower half of the
// quantiles right, the upper half 1000 ns off, RMS sqrt(0.5)*1000 = 707
// ns over the mean of 550 ns, 1.286.
func TestSizeSplitDemerit(t *testing.T) {
	var ss []sample
	var real, model []float64
	for range 500 {
		ss = append(ss, sample{op: OpRead, bytes: 4096})
		real, model = append(real, 100), append(model, 100)
		ss = append(ss, sample{op: OpRead, bytes: 1 << 20})
		real, model = append(real, 1000), append(model, 2000)
	}
	for range 10 { // too few to count
		ss = append(ss, sample{op: OpWrite, bytes: 8192})
		real, model = append(real, 50), append(model, 5000)
	}
	within(t, "by class and size", sizeSplitDemerit(ss, real, model), 0.5, 0.01)
	_, _, pooled := score(real[:1000], model[:1000])
	within(t, "pooled", pooled, 1.286, 0.01)
}

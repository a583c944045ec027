package device

import "testing"

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

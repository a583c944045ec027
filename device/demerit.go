package device

import (
	"math"
	"slices"
)

// demeritSteps is the number of probabilities Demerit compares: 1e-4 to 1
// in steps of 1e-4, as DiskSim's rms.c (RMS_INCR) does.
const demeritSteps = 10000

// Demerit returns DiskSim's demerit figure for two samples of a latency:
// the root mean square horizontal distance between their cumulative
// distributions, read at the probabilities 0.0001, 0.0002, ..., 1
// (benh/disksim src/rms.c, compute_rms). Each CDF is the empirical one
// through the points (x_(i), i/n) of its sorted sample x_(1..n), with x
// interpolated linearly between points and x_(1) below 1/n. Units are
// those of the samples (seconds in, seconds out). It returns NaN when
// either sample is empty. Neither slice is modified.
func Demerit(real, model []float64) float64 {
	if len(real) == 0 || len(model) == 0 {
		return math.NaN()
	}
	a, b := slices.Clone(real), slices.Clone(model)
	sortFloats(a)
	sortFloats(b)
	sum := 0.0
	for i := 1; i <= demeritSteps; i++ {
		p := float64(i) / demeritSteps
		dx := cdfX(a, p) - cdfX(b, p)
		sum += dx * dx
	}
	return math.Sqrt(sum / demeritSteps)
}

// cdfX returns the x at which the empirical CDF of sorted s reaches p,
// interpolating between the points (s[k], (k+1)/n).
func cdfX(s []float64, p float64) float64 {
	n := float64(len(s))
	h := p*n - 1 // fractional index: point k sits at probability (k+1)/n
	if h <= 0 {
		return s[0]
	}
	k := int(h)
	if k >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[k] + (h-float64(k))*(s[k+1]-s[k])
}

package diff

import (
	"math"
	"slices"
)

// Dist summarises a latency distribution, in seconds.
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// LatencyPair compares one latency (Q2C or D2C) on the two sides.
type LatencyPair struct {
	Real Dist `json:"real"`
	Pred Dist `json:"predicted"`
	// Demerit is DiskSim's demerit figure: the root mean square horizontal
	// distance between the two CDFs, in seconds (see demerit).
	Demerit float64 `json:"demerit_seconds"`
	// Relative is Demerit as a fraction of the real mean (0 when that is 0).
	Relative float64 `json:"demerit"`
}

// Latency compares request latencies: Q2C (first bio queued to completion)
// and D2C (issue to completion) over each side's completed requests.
type Latency struct {
	D2CDemerit float64     `json:"d2c_demerit"` // D2C.Relative
	Q2CDemerit float64     `json:"q2c_demerit"` // Q2C.Relative
	D2C        LatencyPair `json:"d2c"`
	Q2C        LatencyPair `json:"q2c"`
}

// demeritSteps is the number of quantiles the demerit figure samples:
// 1e-4, 2e-4, ..., 1.
const demeritSteps = 10000

// Quantile returns the q-quantile of sorted xs by linear interpolation
// between order statistics at position q*(n-1) (Hyndman and Fan's type 7),
// the rule of every percentile the diff reports; ok is false when xs is
// empty.
func Quantile(xs []float64, q float64) (v float64, ok bool) {
	if len(xs) == 0 {
		return 0, false
	}
	return quantile(xs, q), true
}

// quantile is Quantile with 0 for an empty xs.
func quantile(xs []float64, q float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	p := q * float64(n-1)
	lo := int(math.Floor(p))
	if lo >= n-1 {
		return xs[n-1]
	}
	f := p - float64(lo)
	return xs[lo] + f*(xs[lo+1]-xs[lo])
}

// demerit returns the RMS horizontal distance between the empirical CDFs of
// two sorted samples: sqrt(mean over q = 1e-4, 2e-4, ..., 1 of
// (quantile_a(q) - quantile_b(q))^2), in the samples' unit; 0 when either
// is empty.
func demerit(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	var s float64
	for i := 1; i <= demeritSteps; i++ {
		q := float64(i) / demeritSteps
		d := quantile(a, q) - quantile(b, q)
		s += d * d
	}
	return math.Sqrt(s / demeritSteps)
}

func summarise(xs []float64) Dist {
	d := Dist{N: len(xs)}
	if len(xs) == 0 {
		return d
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	d.Mean = s / float64(len(xs))
	d.P50, d.P90, d.P99, d.P999 = quantile(xs, 0.5), quantile(xs, 0.9), quantile(xs, 0.99), quantile(xs, 0.999)
	d.Max = xs[len(xs)-1]
	return d
}

func pair(a, b []float64) LatencyPair {
	slices.Sort(a)
	slices.Sort(b)
	return sortedPair(a, b)
}

// sortedPair compares two sorted samples.
func sortedPair(a, b []float64) LatencyPair {
	p := LatencyPair{Real: summarise(a), Pred: summarise(b), Demerit: demerit(a, b)}
	if p.Real.Mean > 0 {
		p.Relative = p.Demerit / p.Real.Mean
	}
	return p
}

func compareLatency(real, pred *Side) Latency {
	rp, pp := real.prepared(), pred.prepared()
	l := Latency{D2C: sortedPair(rp.d2c, pp.d2c), Q2C: sortedPair(rp.q2c, pp.q2c)}
	l.D2CDemerit, l.Q2CDemerit = l.D2C.Relative, l.Q2C.Relative
	return l
}

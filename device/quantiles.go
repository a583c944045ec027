package device

import (
	"container/heap"
	"errors"
	"math"
	"slices"
)

// Quantiles is an empirical distribution as a quantile table: X[i] is the
// value at probability P[i]. P rises strictly from 0 to 1 and X does not
// decrease; between entries values are interpolated linearly. The unit of
// X is the one of what the table describes (a multiplier, nanoseconds).
//
// QuantilesOf places the entries where the values change fastest (tails,
// jumps between modes), which is where an evenly spaced table loses most
// against a demerit.
type Quantiles struct {
	P []float64 `json:"p"` // probabilities, 0 first and 1 last
	X []float64 `json:"x"` // values at P
}

// QuantilesOf returns a table of at most n+1 entries (n >= 16) for the
// sample xs; the zero table for an empty xs. xs is not modified.
//
//  1. Sort a copy of xs; the p-quantile interpolates between order
//     statistics (quantileSorted).
//  2. Start from 17 even probabilities, 0 to 1.
//  3. Repeatedly split the interval [p0, p1] with the largest
//     (p1-p0)*(x1-x0)^2, the squared-distance mass a linear
//     interpolation across it can lose, at its midpoint, while it still
//     spans more than one order statistic, until the table has n+1
//     entries or no interval can be split.
func QuantilesOf(xs []float64, n int) Quantiles {
	if len(xs) == 0 {
		return Quantiles{}
	}
	if n < 16 {
		panic("device: QuantilesOf with n < 16")
	}
	s := slices.Clone(xs)
	sortFloats(s)
	last := float64(len(s) - 1)
	var h qHeap
	prevP, prevX := 0.0, s[0]
	ps := []float64{0}
	for i := 1; i <= 16; i++ {
		p := float64(i) / 16
		x := quantileSorted(s, p)
		h = append(h, qInterval{prevP, prevX, p, x})
		ps = append(ps, p)
		prevP, prevX = p, x
	}
	heap.Init(&h)
	for len(ps) < n+1 && h.Len() > 0 {
		iv := heap.Pop(&h).(qInterval)
		if iv.score() <= 0 {
			break
		}
		if (iv.p1-iv.p0)*last <= 1 {
			continue // nothing between its ends to resolve
		}
		pm := (iv.p0 + iv.p1) / 2
		xm := quantileSorted(s, pm)
		ps = append(ps, pm)
		heap.Push(&h, qInterval{iv.p0, iv.x0, pm, xm})
		heap.Push(&h, qInterval{pm, xm, iv.p1, iv.x1})
	}
	slices.Sort(ps)
	q := Quantiles{P: ps, X: make([]float64, len(ps))}
	for i, p := range ps {
		q.X[i] = quantileSorted(s, p)
	}
	return q
}

// qInterval is an interval of a quantile table under construction.
type qInterval struct{ p0, x0, p1, x1 float64 }

func (iv qInterval) score() float64 { return (iv.p1 - iv.p0) * (iv.x1 - iv.x0) * (iv.x1 - iv.x0) }

// qHeap is a max-heap of intervals by score; ties by lower p0, so the
// construction is deterministic.
type qHeap []qInterval

func (h qHeap) Len() int { return len(h) }
func (h qHeap) Less(i, j int) bool {
	a, b := h[i].score(), h[j].score()
	if a != b {
		return a > b
	}
	return h[i].p0 < h[j].p0
}
func (h qHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *qHeap) Push(x any)   { *h = append(*h, x.(qInterval)) }
func (h *qHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// quantileSorted returns the p-quantile of sorted s (type 7: linear
// interpolation between s[floor(h)] and s[ceil(h)], h = p*(len-1)).
func quantileSorted(s []float64, p float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	h := p * float64(len(s)-1)
	i := int(h)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := h - float64(i)
	return s[i] + f*(s[i+1]-s[i])
}

// Len returns the number of entries.
func (q Quantiles) Len() int { return len(q.X) }

// At returns the value at probability p in [0, 1], interpolating linearly
// between entries; NaN for an empty table.
func (q Quantiles) At(p float64) float64 {
	n := len(q.X)
	switch {
	case n == 0:
		return math.NaN()
	case n == 1 || p <= 0:
		return q.X[0]
	case p >= 1:
		return q.X[n-1]
	}
	// The first P >= p (sort.SearchFloat64s, without its closure); i >= 1
	// as P[0] = 0 < p.
	i, j := 0, len(q.P)
	for i < j {
		h := int(uint(i+j) >> 1)
		if !(q.P[h] >= p) {
			i = h + 1
		} else {
			j = h
		}
	}
	if i >= n {
		return q.X[n-1]
	}
	p0, p1 := q.P[i-1], q.P[i]
	return q.X[i-1] + (p-p0)/(p1-p0)*(q.X[i]-q.X[i-1])
}

// Mean returns the mean of the distribution the table describes (the
// integral of At over [0, 1]); NaN when empty.
func (q Quantiles) Mean() float64 {
	switch len(q.X) {
	case 0:
		return math.NaN()
	case 1:
		return q.X[0]
	}
	s := 0.0
	for i := 1; i < len(q.X); i++ {
		s += (q.P[i] - q.P[i-1]) * (q.X[i-1] + q.X[i]) / 2
	}
	return s
}

func (q Quantiles) validate() error {
	if len(q.P) != len(q.X) {
		return errors.New("p and x differ in length")
	}
	if len(q.X) == 0 {
		return nil
	}
	if len(q.X) > 1 && (q.P[0] != 0 || q.P[len(q.P)-1] != 1) {
		return errors.New("probabilities must run from 0 to 1")
	}
	for i := range q.X {
		if math.IsNaN(q.X[i]) || math.IsInf(q.X[i], 0) || math.IsNaN(q.P[i]) {
			return errors.New("non-finite quantile")
		}
		if i > 0 && (q.X[i] < q.X[i-1] || q.P[i] <= q.P[i-1]) {
			return errors.New("probabilities must rise and values must not fall")
		}
	}
	return nil
}

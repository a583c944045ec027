package diff

import (
	"math"
	"math/bits"
	"slices"
)

// quantiles2 returns quantile(sorted xs, q1) and quantile(sorted xs, q2)
// for 0 <= q1 <= q2 <= 1, the same values to the bit, without sorting xs:
// the four order statistics they interpolate between are selected
// (quickselect, O(len(xs))), reordering xs. xs holds no NaN.
func quantiles2(xs []float64, q1, q2 float64) (float64, float64) {
	n := len(xs)
	if n == 0 {
		return 0, 0
	}
	if n < 64 {
		slices.Sort(xs)
		return quantile(xs, q1), quantile(xs, q2)
	}
	// quantile(xs, q) interpolates xs[lo] and xs[lo+1], lo = floor(q(n-1)),
	// or is xs[n-1] when lo >= n-1.
	stat := func(q float64) (lo int, f float64) {
		p := q * float64(n-1)
		lo = int(math.Floor(p))
		return lo, p - float64(lo)
	}
	lo2, f2 := stat(q2)
	lo1, f1 := stat(q1)
	depth := 2 * bits.Len(uint(n))
	var x2, x2n float64
	if lo2 >= n-1 {
		selectNth(xs, n-1, depth)
		x2 = xs[n-1]
	} else {
		selectNth(xs, lo2, depth)
		x2, x2n = xs[lo2], slices.Min(xs[lo2+1:])
	}
	// xs[:lo2+1] holds the lo2+1 least values: the lesser statistics are
	// among them.
	p2 := x2
	if lo2 < n-1 {
		p2 = x2 + f2*(x2n-x2)
	}
	if lo1 >= n-1 {
		return xs[n-1], p2 // lo1 <= lo2: lo2 >= n-1 too, and xs[n-1] is the greatest
	}
	var x1, x1n float64
	switch {
	case lo1 == lo2:
		x1, x1n = x2, x2n
	default: // lo1 < lo2 < n
		selectNth(xs[:lo2+1], lo1, depth)
		x1, x1n = xs[lo1], slices.Min(xs[lo1+1:lo2+1])
	}
	return x1 + f1*(x1n-x1), p2
}

// selectNth reorders a so that a[k] is the value sorting would put there,
// with a[:k] <= a[k] <= a[k+1:] (introselect: a sort of what is left once
// depth partitions have not finished).
func selectNth(a []float64, k int, depth int) {
	for len(a) > 16 {
		if depth == 0 {
			slices.Sort(a)
			return
		}
		depth--
		// Median of three as the pivot, then a three-way partition:
		// [< p | == p | > p].
		m := len(a) / 2
		x, y, z := a[0], a[m], a[len(a)-1]
		p := max(min(x, y), min(max(x, y), z))
		lt, i, gt := 0, 0, len(a)
		for i < gt {
			switch v := a[i]; {
			case v < p:
				a[lt], a[i] = v, a[lt]
				lt++
				i++
			case v > p:
				gt--
				a[gt], a[i] = v, a[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			a = a[:lt]
		case k >= gt:
			a, k = a[gt:], k-gt
		default:
			return // a[k] == p, in place
		}
	}
	slices.Sort(a)
}

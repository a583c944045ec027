package device

import "math"

// leastSquares solves min sum (y_i - x_i·beta)^2 over the rows x of X by
// the normal equations with partial pivoting. Columns that are all zero,
// or that are linearly dependent on earlier ones, get a zero coefficient.
// It returns beta and the residual sum of squares.
func leastSquares(X [][]float64, y []float64) ([]float64, float64) {
	p := 0
	if len(X) > 0 {
		p = len(X[0])
	}
	a := make([][]float64, p)
	for i := range a {
		a[i] = make([]float64, p+1)
	}
	for r, row := range X {
		for i := 0; i < p; i++ {
			if row[i] == 0 {
				continue
			}
			for j := 0; j < p; j++ {
				a[i][j] += row[i] * row[j]
			}
			a[i][p] += row[i] * y[r]
		}
	}
	// Gaussian elimination; a column whose pivot vanishes (relative to its
	// diagonal) is dropped.
	scale := make([]float64, p)
	for i := range p {
		scale[i] = a[i][i]
	}
	used := make([]bool, p)
	piv := make([]int, p) // row holding the pivot of column j
	for i := range piv {
		piv[i] = -1
	}
	rowUsed := make([]bool, p)
	for j := 0; j < p; j++ {
		best, bv := -1, 0.0
		for i := 0; i < p; i++ {
			if rowUsed[i] {
				continue
			}
			if v := math.Abs(a[i][j]); v > bv {
				best, bv = i, v
			}
		}
		if best < 0 || scale[j] == 0 || bv <= 1e-9*scale[j] {
			continue
		}
		rowUsed[best], used[j], piv[j] = true, true, best
		for i := 0; i < p; i++ {
			if i == best || a[i][j] == 0 {
				continue
			}
			f := a[i][j] / a[best][j]
			for k := j; k <= p; k++ {
				a[i][k] -= f * a[best][k]
			}
		}
	}
	beta := make([]float64, p)
	for j := 0; j < p; j++ {
		if used[j] {
			beta[j] = a[piv[j]][p] / a[piv[j]][j]
		}
	}
	rss := 0.0
	for r, row := range X {
		e := y[r]
		for j, v := range row {
			e -= v * beta[j]
		}
		rss += e * e
	}
	return beta, rss
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func variance(xs []float64) float64 {
	m := mean(xs)
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs))
}

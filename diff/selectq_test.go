package diff

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantiles2 checks quantiles2 against quantile of the sorted sample,
// bit for bit, on latency-like samples (random, with ties, sorted,
// reversed) of every small size and some large ones.
func TestQuantiles2(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gens := map[string]func(i, n int) float64{
		"random":   func(int, int) float64 { return rng.ExpFloat64() / 1e3 },
		"ties":     func(int, int) float64 { return float64(rng.IntN(5)) * 1e-4 },
		"sorted":   func(i, _ int) float64 { return float64(i) * 1e-6 },
		"reversed": func(i, n int) float64 { return float64(n-i) * 1e-6 },
		"constant": func(int, int) float64 { return 0.25 },
	}
	qs := [][2]float64{{0.5, 0.99}, {0.99, 0.99}, {0, 1}, {0.5, 0.5}, {0.25, 0.75}, {1, 1}}
	sizes := []int{1, 2, 3, 63, 64, 65, 100, 101, 1000, 4097, 100_000}
	for n := 4; n < 300; n += 7 {
		sizes = append(sizes, n)
	}
	for name, gen := range gens {
		for _, n := range sizes {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = gen(i, n)
			}
			sorted := slices.Clone(xs)
			slices.Sort(sorted)
			for _, q := range qs {
				a, b := quantiles2(slices.Clone(xs), q[0], q[1])
				wa, wb := quantile(sorted, q[0]), quantile(sorted, q[1])
				if math.Float64bits(a) != math.Float64bits(wa) || math.Float64bits(b) != math.Float64bits(wb) {
					t.Fatalf("%s, n %d, q %v: %v %v, want %v %v", name, n, q, a, b, wa, wb)
				}
			}
		}
	}
}

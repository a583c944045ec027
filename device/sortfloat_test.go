package device

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestSortFloats: sortFloats orders like slices.Sort, bit for bit, on
// samples of the shapes calibration sorts (latencies in ns, signed
// residuals, many ties, sorted and reversed runs), and hands NaNs and
// negative zeros to slices.Sort.
func TestSortFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func(i int) float64{
		"latency":  func(int) float64 { return math.Round(rng.ExpFloat64() * 80000) },
		"residual": func(int) float64 { return rng.NormFloat64() * 0.3 },
		"ties":     func(int) float64 { return float64(rng.IntN(7)) - 3 },
		"sorted":   func(i int) float64 { return float64(i) * 1.5 },
		"reversed": func(i int) float64 { return -float64(i) },
		"wide": func(int) float64 {
			return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(2046)+1)<<52)
		},
		"nan":     func(i int) float64 { return [...]float64{1, math.NaN(), -2, math.Inf(1), math.Inf(-1)}[i%5] },
		"negzero": func(i int) float64 { return [...]float64{0, math.Copysign(0, -1), -1, 1}[i%4] },
	}
	for name, g := range gens {
		for _, n := range []int{0, 1, 100, radixMin, 50000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g(i)
			}
			want := slices.Clone(xs)
			slices.Sort(want)
			sortFloats(xs)
			for i := range xs {
				if math.Float64bits(xs[i]) != math.Float64bits(want[i]) && !(math.IsNaN(xs[i]) && math.IsNaN(want[i])) {
					t.Fatalf("%s n=%d: at %d got %v, want %v", name, n, i, xs[i], want[i])
				}
			}
		}
	}
}

// TestSortEvents: the radix path of sortEvents (events in ID order) gives
// the comparison sort's order, on random events with many equal times,
// and events out of ID order take the comparison sort.
func TestSortEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{10, radixMin, 3 * radixMin} {
		for _, inOrder := range []bool{true, false} {
			ids := make([]uint64, n)
			var evs []event
			for i := range ids {
				ids[i] = uint64(10 * (i + 1))
				if !inOrder && i%7 == 3 {
					ids[i] = uint64(rng.IntN(10 * n))
				}
				iss := trace.Time(1000 + rng.IntN(n/4+1))
				evs = append(evs, event{t: iss, req: i})
				if rng.IntN(8) != 0 {
					evs = append(evs, event{t: iss + trace.Time(rng.IntN(50)), done: true, req: i})
				}
			}
			want := slices.Clone(evs)
			slices.SortFunc(want, func(a, b event) int {
				if a.t != b.t {
					return cmp.Compare(a.t, b.t)
				}
				if a.done != b.done {
					if a.done {
						return -1
					}
					return 1
				}
				return cmp.Compare(ids[a.req], ids[b.req])
			})
			sortEvents(evs, ids, 1000)
			if !slices.Equal(evs, want) {
				t.Fatalf("n=%d in order %v: the orders differ", n, inOrder)
			}
		}
	}
}

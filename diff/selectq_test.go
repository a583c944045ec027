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

// TestInFlight checks inFlight against the definition computed directly:
// every dispatch and completion sorted together (completions first at
// equal times) and the depth integrated over them, on synthetic sides.
func TestInFlight(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		s := synthSide(50_000, 8, seed)
		var ev []int64
		for i := range s.NumRequests() {
			iss, c := s.reqIssue(i), s.reqComplete(i)
			if iss.Valid() && c.Valid() && c >= iss {
				ev = append(ev, int64(iss)<<1|1, int64(c)<<1)
			}
		}
		slices.Sort(ev)
		var area float64
		depth, prev := 0, ev[0]>>1
		for _, e := range ev {
			area += float64(depth) * float64(e>>1-prev)
			prev = e >> 1
			depth += int(e&1)*2 - 1
		}
		want := area / float64(ev[len(ev)-1]>>1-ev[0]>>1)
		if got := inFlight(s); math.Float64bits(got) != math.Float64bits(want) || got <= 0 {
			t.Fatalf("seed %d: inFlight %v, want %v", seed, got, want)
		}
	}
}

package diff

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixU64 checks radixU64 against the standard library's stable sort
// by v>>shift, on inputs of the shapes a trace gives (nearly sorted, with
// values early or late, interleaved runs) and on random ones, with and
// without an increasing index packed below shift.
func TestRadixU64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(n int) []uint64{
		"sorted":   func(n int) []uint64 { return seq(n, func(i int) uint64 { return uint64(i) * 3 }) },
		"reversed": func(n int) []uint64 { return seq(n, func(i int) uint64 { return uint64(n-i) * 7 }) },
		"random":   func(n int) []uint64 { return seq(n, func(int) uint64 { return rng.Uint64N(1 << 40) }) },
		"few keys": func(n int) []uint64 { return seq(n, func(int) uint64 { return rng.Uint64N(4) }) },
		"jittered": func(n int) []uint64 { // completion order: each late by up to 20 places
			return seq(n, func(i int) uint64 { return uint64(i*1000) + rng.Uint64N(20_000) })
		},
		"outliers": func(n int) []uint64 { // sorted but for a few far early or late values
			return seq(n, func(i int) uint64 {
				switch rng.IntN(50) {
				case 0:
					return rng.Uint64N(uint64(n) * 10)
				}
				return uint64(i) * 10
			})
		},
		"outlier pairs": func(n int) []uint64 { // two far early in a row, at times
			return seq(n, func(i int) uint64 {
				if i%97 == 5 || i%97 == 6 {
					return uint64(n)*10 + uint64(i)
				}
				return uint64(i) * 10
			})
		},
		"first far": func(n int) []uint64 { // the first value far early
			return seq(n, func(i int) uint64 {
				if i == 0 {
					return uint64(n) * 100
				}
				return uint64(i) * 10
			})
		},
		"two halves": func(n int) []uint64 { // one descent, half the values out of the run
			return seq(n, func(i int) uint64 { return uint64((i+n/2)%n) * 3 })
		},
		"streaks": func(n int) []uint64 { // few descents, half the values below the run
			return seq(n, func(i int) uint64 {
				if i/100%2 == 0 {
					return uint64(n)*10 + uint64(i)
				}
				return uint64(i)
			})
		},
		"interleaved": func(n int) []uint64 { // two ascending streams
			return seq(n, func(i int) uint64 { return uint64(i/2)*5 + uint64(i%2)*uint64(n)*5 })
		},
	}
	for name, gen := range shapes {
		for _, n := range []int{0, 1, 100, 5000, 100_000} {
			for _, idx := range []bool{false, true} {
				a := gen(n)
				shift := uint(0)
				if idx { // the index in the low bits, as the callers pack it
					shift = 17
					for i := range a {
						a[i] = a[i]%(1<<40)<<shift | uint64(i)
					}
				}
				want := slices.Clone(a)
				slices.SortStableFunc(want, func(x, y uint64) int { return cmp.Compare(x>>shift, y>>shift) })
				var buf []uint64
				if n%2 == 0 {
					buf = make([]uint64, n)
				}
				radixU64(a, shift, buf)
				if !slices.Equal(a, want) {
					t.Fatalf("%s, n %d, index %v: not sorted as the stable sort sorts", name, n, idx)
				}
			}
		}
	}
}

func seq(n int, f func(i int) uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestRadixLSD checks radixLSD (and sortValues, the latencies' sort)
// against the standard library's stable sort by v>>shift, for spans of
// one to five digits and values whose low or middle digit is the same
// throughout (a pass skipped).
func TestRadixLSD(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, bitsN := range []uint{1, 12, 13, 14, 26, 27, 31, 40, 52, 64} {
		for _, same := range []uint64{0, 0xfff, 0x1fff << 13} {
			for _, shift := range []uint{0, 17} {
				if shift > 0 && bitsN > 47 {
					continue
				}
				a := seq(20_000, func(i int) uint64 {
					v := rng.Uint64() >> (64 - bitsN)
					if same != 0 {
						v |= same // those bits set in every value
					}
					if shift > 0 {
						return v<<shift | uint64(i)
					}
					return v
				})
				want := slices.Clone(a)
				slices.SortStableFunc(want, func(x, y uint64) int { return cmp.Compare(x>>shift, y>>shift) })
				got := slices.Clone(a)
				radixLSD(got, shift, make([]uint64, len(got)))
				if !slices.Equal(got, want) {
					t.Fatalf("%d bits, same %#x, shift %d: not sorted as the stable sort sorts", bitsN, same, shift)
				}
				if shift == 0 {
					got = slices.Clone(a)
					sortValues(got, make([]uint64, len(got)))
					if !slices.Equal(got, want) {
						t.Fatalf("sortValues, %d bits, same %#x: not sorted", bitsN, same)
					}
				}
			}
		}
	}
}

// TestMergeRuns merges ascending runs of many shapes (none, one, an odd
// count, empty ones, interleaved and disjoint values) against a sort.
func TestMergeRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, lens := range [][]int{{}, {5}, {3, 0, 4}, {100, 1, 50, 7, 0, 33, 2}, {1000, 1000}} {
		var a []uint64
		runs := []int{0}
		for _, n := range lens {
			run := make([]uint64, n)
			for i := range run {
				run[i] = rng.Uint64N(500) // equal values across runs too
			}
			slices.Sort(run)
			a = append(a, run...)
			runs = append(runs, len(a))
		}
		want := slices.Clone(a)
		slices.Sort(want)
		mergeRuns(a, runs, make([]uint64, len(a)))
		if !slices.Equal(a, want) {
			t.Errorf("runs %v: merged %v, want %v", lens, a, want)
		}
	}
}

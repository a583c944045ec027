package diff

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// BenchmarkRadixU64 sorts 2 M values of the shapes a trace gives, with an
// index packed below the key as the callers pack it: in order, completions
// of a deep queue (each a few places late), a few values far off, and
// random ones (latencies in request order). Compare the shapes side by
// side: the nearly sorted ones take one or two passes.
func BenchmarkRadixU64(b *testing.B) {
	const n = 2_000_000
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := []struct {
		name string
		key  func(i int) uint64
	}{
		{"sorted", func(i int) uint64 { return uint64(i) * 1000 }},
		{"jittered", func(i int) uint64 { return uint64(i)*1000 + rng.Uint64N(20_000) }},
		{"outliers", func(i int) uint64 {
			if rng.IntN(100) == 0 {
				return rng.Uint64N(n * 1000)
			}
			return uint64(i) * 1000
		}},
		{"random", func(int) uint64 { return rng.Uint64N(1 << 30) }},
	}
	for _, sh := range shapes {
		src := make([]uint64, n)
		for i := range src {
			src[i] = sh.key(i)<<21 | uint64(i)
		}
		b.Run(sh.name, func(b *testing.B) {
			a, buf := make([]uint64, n), make([]uint64, n)
			b.SetBytes(8 * n)
			for b.Loop() {
				copy(a, src)
				radixU64(a, 21, buf)
			}
			if !slices.IsSorted(a) {
				b.Fatal("not sorted")
			}
		})
	}
}

// BenchmarkFinishCompletionOrder builds a Side of 1 M requests handed over
// in completion order, as the Rebuilder hands them: through the ring that
// puts them in ID order (takeRequest, what NewSide does) against straight
// into the table (addRequest, then permuted at Finish). cpu-s/op is the
// process CPU time of taking the requests and finishing.
func BenchmarkFinishCompletionOrder(b *testing.B) {
	_, reqs := synth(1_333_334, 16, 1)
	sortByDone(reqs)
	for _, c := range []struct {
		name string
		take func(s *Side, r *trace.Request)
	}{
		{"ring", (*Side).takeRequest},
		{"direct", (*Side).addRequest},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				c0 := cpuTime()
				s := &Side{}
				for i := range reqs {
					c.take(s, &reqs[i])
				}
				s.flushHeld()
				s.finish()
				cpu += cpuTime() - c0
				if s.NumRequests() != len(reqs) || s.RequestAt(0).ID != 1 {
					b.Fatal("lost requests")
				}
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkWindowQuantiles takes the p50 and p99 of 1 M latencies, as a
// window's figures do: by selection (quantiles2) against sorting first.
func BenchmarkWindowQuantiles(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]float64, 1_000_000)
	for i := range src {
		src[i] = rng.ExpFloat64() / 1e3
	}
	xs := make([]float64, len(src))
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			copy(xs, src)
			quantiles2(xs, 0.5, 0.99)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			copy(xs, src)
			slices.Sort(xs)
			_, _ = quantile(xs, 0.5), quantile(xs, 0.99)
		}
	})
}

// BenchmarkLatencySort sorts 2 M latencies in request order (exponential,
// mean 2 ms, in ns: not nearly sorted) as latencies does: by radixU64 as
// before (its insertion sort tried and given up on), by radixLSD with one
// counting pass per digit as before, and by sortValues (radixLSD, its
// digits counted in one pass). cpu-ms/op is the process CPU time.
//
//	go test -run '^$' -bench LatencySort -cpu 1 ./diff
func BenchmarkLatencySort(b *testing.B) {
	const n = 2_000_000
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]uint64, n)
	for i := range src {
		src[i] = uint64(rng.ExpFloat64() * 2e6)
	}
	a, buf := make([]uint64, n), make([]uint64, n)
	for _, c := range []struct {
		name string
		sort func(a, buf []uint64)
	}{
		{"radixU64", func(a, buf []uint64) { radixU64(a, 0, buf) }},
		{"perPass", func(a, buf []uint64) { radixLSDPerPass(a, 0, buf) }},
		{"sortValues", sortValues},
	} {
		b.Run(c.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				copy(a, src)
				c.sort(a, buf)
			}
			b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
			if !slices.IsSorted(a) {
				b.Fatal("not sorted")
			}
		})
	}
}

// radixLSDPerPass is radixLSD as it was: a counting pass for each digit.
func radixLSDPerPass(a []uint64, shift uint, buf []uint64) {
	n := len(a)
	lo, hi := a[0]>>shift, a[0]>>shift
	for _, v := range a {
		lo, hi = min(lo, v>>shift), max(hi, v>>shift)
	}
	span := hi - lo
	if span == 0 {
		return
	}
	nb := bits.Len64(span)
	passes := (nb + 12) / 13
	width := uint((nb + passes - 1) / passes)
	mask := uint64(1)<<width - 1
	src, dst := a, buf[:n]
	count := make([]int, 1<<width)
	for p := 0; p < passes; p++ {
		d := uint(p) * width
		clear(count)
		for _, v := range src {
			count[((v>>shift-lo)>>d)&mask]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, v := range src {
			k := ((v>>shift - lo) >> d) & mask
			dst[count[k]] = v
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

package device

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace"
)

// coverageCapture is the recorded 10 s BFQ capture's requests (133,514).
func coverageCapture(tb testing.TB) []trace.Request {
	dir := shared.Path(tb, "captures", "recorded", "g-bfq-large-nomsg")
	return readRequestsInternal(tb, filepath.Join(dir, "g-bfq-large-nomsg"))
}

// BenchmarkCoverageOf: CoverageOf against the literal sweep it replaced,
// on a recorded capture's requests.
func BenchmarkCoverageOf(b *testing.B) {
	reqs := coverageCapture(b)
	b.Run("sorted-apart", func(b *testing.B) {
		for b.Loop() {
			CoverageOf(reqs)
		}
		b.ReportMetric(float64(len(reqs))*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	})
	b.Run("sweep", func(b *testing.B) {
		for b.Loop() {
			sweepCoverage(reqs)
		}
		b.ReportMetric(float64(len(reqs))*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	})
}

// BenchmarkSortFloats: sortFloats against slices.Sort on latencies the
// size of a 2 M-request capture's, in random order and nearly sorted
// (completion times in issue order, as gapFractions sorts them).
func BenchmarkSortFloats(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	random := make([]float64, 1<<21)
	for i := range random {
		random[i] = math.Round(rng.ExpFloat64() * 80000)
	}
	reqs := coverageCapture(b)
	var near []float64
	for c := 0; len(near) < len(random); c++ {
		for i := range reqs {
			if reqs[i].Complete.Valid() {
				near = append(near, float64(reqs[i].Complete)+float64(c)*20e9)
			}
		}
	}
	near = near[:len(random)]
	s := make([]float64, len(random))
	for _, c := range []struct {
		name string
		xs   []float64
	}{{"random", random}, {"nearly-sorted", near}} {
		b.Run(c.name+"/sortFloats", func(b *testing.B) {
			for b.Loop() {
				copy(s, c.xs)
				sortFloats(s)
			}
		})
		b.Run(c.name+"/slices.Sort", func(b *testing.B) {
			for b.Loop() {
				copy(s, c.xs)
				slices.Sort(s)
			}
		})
	}
}

// BenchmarkSortTimes: sortTimes against slices.Sort on a recorded
// capture's issue times, in the requests' order, and repeated 16 times.
func BenchmarkSortTimes(b *testing.B) {
	reqs := coverageCapture(b)
	for _, copies := range []int{1, 16} {
		var ts []trace.Time
		for c := range copies {
			for i := range reqs {
				ts = append(ts, reqs[i].Issue+trace.Time(c)*20e9)
			}
		}
		s := make([]trace.Time, len(ts))
		b.Run(fmt.Sprintf("x%d/radix", copies), func(b *testing.B) {
			for b.Loop() {
				copy(s, ts)
				sortTimes(s)
			}
		})
		b.Run(fmt.Sprintf("x%d/slices.Sort", copies), func(b *testing.B) {
			for b.Loop() {
				copy(s, ts)
				slices.Sort(s)
			}
		})
	}
}

// BenchmarkPrepare: the calibration's preparation of a recorded capture's
// requests (the replay order of their issues and completions included).
func BenchmarkPrepare(b *testing.B) {
	reqs := coverageCapture(b)
	for b.Loop() {
		prepare(reqs)
	}
	b.ReportMetric(float64(len(reqs))*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkFitHinge: the in-flight fit on a capture whose in-flight count
// climbs to 60,000 (public/hadoop-node8 lost a CPU's completions), with a
// group of samples at every 25th count.
func BenchmarkFitHinge(b *testing.B) {
	sum := make([]float64, 60001)
	cnt := make([]float64, 60001)
	for k := 1; k < len(sum); k += 25 {
		cnt[k] = 20
		sum[k] = 20 * (1 + 0.01*float64(max(0, k-30)))
	}
	for b.Loop() {
		fitHinge(sum, cnt)
	}
}

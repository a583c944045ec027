package device

import (
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

// BenchmarkSortFloats: sortFloats against slices.Sort on a latency
// sample the size of a 2 M-request capture's.
func BenchmarkSortFloats(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	xs := make([]float64, 1<<21)
	for i := range xs {
		xs[i] = math.Round(rng.ExpFloat64() * 80000)
	}
	s := make([]float64, len(xs))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(s, xs)
			sortFloats(s)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(s, xs)
			slices.Sort(s)
		}
	})
}

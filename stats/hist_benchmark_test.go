package stats

import "testing"

// BenchmarkSumHistAdd adds latencies of a few hundred microseconds to
// milliseconds, as a D2C row does.
func BenchmarkSumHistAdd(b *testing.B) {
	var h sumHist
	v := int64(1)
	for b.Loop() {
		v = v*6364136223846793005 + 1442695040888963407
		h.add(200_000 + (v>>33)%5_000_000)
	}
}

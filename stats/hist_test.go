package stats

import "testing"

// TestSumHistQuantile checks the nearest-rank quantiles of a histogram
// of both signs against buckets worked out by hand: |v| < 256 is exact;
// 1000 has bit length 10, so its bucket is 2 wide ([1000, 1002), midpoint
// 1001), and -1000 is that bucket's mirror.
func TestSumHistQuantile(t *testing.T) {
	var h sumHist
	for _, v := range []int64{300, 5, -1000, 0, -3} {
		h.add(v)
	}
	for _, c := range []struct {
		p    float64
		want int64
	}{{0.1, -1001}, {0.2, -1001}, {0.4, -3}, {0.6, 0}, {0.8, 5}, {1, 300}} {
		if got := h.quantile(c.p); got != c.want {
			t.Errorf("quantile(%v) = %d, want %d", c.p, got, c.want)
		}
	}
	var empty sumHist
	if got := empty.quantile(0.5); got != 0 {
		t.Errorf("empty quantile = %d, want 0", got)
	}
}

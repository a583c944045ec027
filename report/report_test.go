package report

import (
	"slices"
	"testing"

	"github.com/tracesched/tracesched/diff"
)

func TestShellQuote(t *testing.T) {
	got := ShellQuote([]string{"tracesched", "replay", "--set", "slice_idle_us=2000", "my trace", "it's", ""})
	want := `tracesched replay --set slice_idle_us=2000 'my trace' 'it'\''s' ''`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestChartWindow: 292 bios over 163 ms give at most 292/20 = 14 windows:
// 1, 2, 5 and 10 ms cut the span into 163, 81, 32 and 16; 20 ms into 8.
// A million bios over 80 s: at most 200 windows, 0.5 s (160).
func TestChartWindow(t *testing.T) {
	if got := chartWindow(163_000_000, 292); got != 20_000_000 {
		t.Errorf("fixture window %d ns, want 20 ms", got)
	}
	if got := chartWindow(80_073_000_000, 1_068_112); got != 500_000_000 {
		t.Errorf("large window %d ns, want 500 ms", got)
	}
}

// TestClassStrip: a queue short from 0 to 40 % of the span, long after,
// bins 0..191 short, the bin of the flip both, then long up to its last
// point's bin, and nothing after.
func TestClassStrip(t *testing.T) {
	const end = 1000
	pts := []diff.ThinkPoint{{Time: 0, Short: true}, {Time: 400, Short: false}, {Time: 600, Short: false}}
	got := classStrip(pts, end)
	// 400*480/1000 = 192, 600*480/1000 = 288.
	for b, c := range got {
		var want int8
		switch {
		case b < 192:
			want = 0
		case b == 192:
			want = 2
		case b <= 288:
			want = 1
		default:
			want = -1
		}
		if c != want {
			t.Fatalf("bin %d = %d, want %d", b, c, want)
		}
	}
}

// TestCDF: quantiles interpolate between order statistics as diff's do.
func TestCDF(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	if q := quantile(xs, 0.5); q != 3 {
		t.Errorf("median %v", q)
	}
	if q := quantile(xs, 0.125); q != 1.5 { // position 0.5
		t.Errorf("q(0.125) %v", q)
	}
	x, y := cdf(xs)
	if len(x) != len(cdfLevels) || x[0] != 1 || x[len(x)-1] != 5 || y[len(y)-1] != 1 || !slices.IsSorted(x) {
		t.Errorf("cdf %v %v", x, y)
	}
}

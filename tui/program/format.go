package program

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/tracesched/tracesched/trace"
)

// Seconds prints a trace time as seconds with microsecond precision.
func Seconds(t trace.Time) string {
	if !t.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.6f", t.Seconds())
}

// Duration prints a span compactly: 850µs, 12.3ms, 1.20s.
func Duration(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case a < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case a < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.3gs", d.Seconds())
	}
}

// Bytes prints a size with a binary unit: 4K, 1M, 1.5G.
func Bytes(n uint64) string {
	units := []string{"B", "K", "M", "G", "T"}
	f := float64(n)
	u := 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == math.Trunc(f) || f >= 100 {
		return fmt.Sprintf("%.0f%s", f, units[u])
	}
	return fmt.Sprintf("%.1f%s", f, units[u])
}

// Percent prints a fraction as a percentage with one decimal.
func Percent(f float64) string {
	if math.IsNaN(f) {
		return "n/a" // nothing compared
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

// Tau formats a Kendall tau with four decimals, "n/a" when nothing was
// compared (NaN).
func Tau(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", f)
}

// Truncate cuts s (which may hold ANSI sequences) to w cells, ending in "…".
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// Pad cuts or pads s to exactly w cells.
func Pad(s string, w int) string {
	s = Truncate(s, w)
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// Width returns the cells s takes on screen.
func Width(s string) int { return ansi.StringWidth(s) }

// Fit joins lines into exactly h lines (cutting or padding with empty
// lines), each cut to w cells.
func Fit(lines []string, w, h int) string {
	var b strings.Builder
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(lines) {
			b.WriteString(Truncate(lines[i], w))
		}
	}
	return b.String()
}

// Blocks are the eight levels of a sparkline, lowest first.
var blocks = [...]rune{'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// Level returns the block for v on a scale of 0..top: ' ' for 0 (or less),
// '▁' for the smallest positive values, '█' at the top.
func Level(v, top float64) rune {
	if v <= 0 || top <= 0 {
		return ' '
	}
	i := int(math.Ceil(v/top*8)) - 1
	return blocks[min(max(i, 0), 7)]
}

// Sparkline draws vs on a scale of 0..top, one cell per value.
func Sparkline(vs []float64, top float64) string {
	r := make([]rune, len(vs))
	for i, v := range vs {
		r[i] = Level(v, top)
	}
	return string(r)
}

// Resample maps a series onto n columns: each column is the mean of the
// values it covers (or repeats the value under it when the series is
// shorter than n).
func Resample(vs []float64, n int) []float64 {
	out := make([]float64, n)
	if len(vs) == 0 || n <= 0 {
		return out
	}
	for c := 0; c < n; c++ {
		lo := c * len(vs) / n
		hi := max((c+1)*len(vs)/n, lo+1)
		var s float64
		for _, v := range vs[lo:hi] {
			s += v
		}
		out[c] = s / float64(hi-lo)
	}
	return out
}

// MaxOf returns the largest value of the series (0 when empty).
func MaxOf(series ...[]float64) float64 {
	var m float64
	for _, vs := range series {
		for _, v := range vs {
			m = max(m, v)
		}
	}
	return m
}

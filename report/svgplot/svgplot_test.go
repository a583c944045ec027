package svgplot

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"
)

func TestTicks(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		want   []float64
	}{
		// (1.53-0)/5 = 0.306 rounds up to a step of 0.5.
		{0, 1.53, []float64{0, 0.5, 1, 1.5}},
		// 4000/5 = 800 rounds up to 1000.
		{0, 4000, []float64{0, 1000, 2000, 3000, 4000}},
		// 0.2/5 = 0.04 rounds up to 0.05.
		{0, 0.2, []float64{0, 0.05, 0.1, 0.15, 0.2}},
		// 6/5 = 1.2 rounds up to 2.
		{-3, 3, []float64{-2, 0, 2}},
	} {
		if got := Ticks(tt.lo, tt.hi, 6); !slices.Equal(got, tt.want) {
			t.Errorf("Ticks(%v, %v) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
	if got, want := LogTicks(0, 2), []float64{1, 2, 5, 10, 20, 50, 100}; !slices.Equal(got, want) {
		t.Errorf("LogTicks(0, 2) = %v, want %v", got, want)
	}
	if got, want := LogTicks(-2, 2), []float64{0.01, 0.1, 1, 10, 100}; !slices.Equal(got, want) {
		t.Errorf("LogTicks(-2, 2) = %v, want %v", got, want)
	}
	for v, want := range map[float64]string{0: "0", 0.05: "0.05", 1500: "1500", 1e6: "1000000", 2.5e9: "2.5e+09", 1e-5: "1e-05"} {
		if got := Label(v); got != want {
			t.Errorf("Label(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestLineChartCoordinates: with a 760 x 300 chart and no legend, the
// plotting area spans x 64..730 and y 34..254 (margins 64, 30, 34, 46), so
// (0, 0) on axes 0..10 x 0..100 is (64, 254) and (5, 50) is
// (64 + 666/2, 254 - 220/2) = (397, 144).
func TestLineChartCoordinates(t *testing.T) {
	c := &LineChart{Title: "t <&>", X: Axis{Min: 0, Max: 10}, Y: Axis{Min: 0, Max: 100},
		Series: []Series{{X: []float64{0, 5, 10}, Y: []float64{0, 50, 100}}}}
	svg := c.SVG(false)
	if !strings.Contains(svg, `d="M64 254L397 144L730 34"`) {
		t.Errorf("path not where computed: %s", svg)
	}
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Errorf("not XML: %v", err)
	}
	if !strings.Contains(svg, "<title>t &lt;&amp;&gt;</title>") {
		t.Error("title not escaped")
	}
	// A log axis leaves out values <= 0 and breaks the line there.
	c = &LineChart{X: Axis{Log: true, Min: 1, Max: 100}, Y: Axis{Min: 0, Max: 1},
		Series: []Series{{X: []float64{1, 0, 10, 100}, Y: []float64{0, 0.5, 0.5, 1}}}}
	if svg := c.SVG(false); !strings.Contains(svg, `d="M64 254M397 144L730 34"`) {
		t.Errorf("log path: %s", svg)
	}
}

func TestStandalone(t *testing.T) {
	c := &LineChart{Series: []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}}}
	svg := c.SVG(true)
	for _, want := range []string{`<?xml version="1.0"`, `xmlns="http://www.w3.org/2000/svg"`, "<style>", "prefers-color-scheme:dark"} {
		if !strings.Contains(svg, want) {
			t.Errorf("standalone SVG lacks %q", want)
		}
	}
	if strings.Contains(c.SVG(false), "<style>") {
		t.Error("inline SVG carries its own style")
	}
}

// Package svgplot draws small static charts as SVG: line charts (time
// series, CDFs, on linear or logarithmic axes), heat maps and class strips,
// with axes, ticks, units and a legend.
//
// Charts take no fonts, scripts or images from anywhere: text uses the
// page's sans-serif font and currentColor, and series are coloured through
// the CSS classes c0..c7 (stroke) and f0..f7 (fill), which Style defines
// for light and dark colour schemes (prefers-color-scheme). A chart written
// with WriteSVG(w, true) carries that style itself, so it stands alone as
// an .svg file; inline in an HTML page (false) it uses the page's copy.
//
// Coordinates are written with one decimal in a viewBox of Width x Height
// user units; a chart scales to its container. Callers aggregate their
// data first: a chart draws every point it is given.
package svgplot

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Colours is the number of series colours (classes c0..c7, f0..f7).
const Colours = 8

// Style is the CSS that colours charts: series classes, grid, text. It
// follows prefers-color-scheme. Its colours are the Okabe-Ito palette
// (distinguishable with the common colour-vision deficiencies), lightened
// for dark backgrounds.
const Style = `svg.plot{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;font-size:12px;color:#1a1a1a}
svg.plot text{fill:currentColor}
svg.plot .grid{stroke:currentColor;stroke-opacity:.13;stroke-width:1}
svg.plot .axis{stroke:currentColor;stroke-opacity:.55;stroke-width:1;fill:none}
svg.plot .title{font-size:14px;font-weight:600}
svg.plot .muted{fill-opacity:.7}
svg.plot .band{fill:currentColor;fill-opacity:.08}
svg.plot .bandl{font-size:10px;fill-opacity:.75}
svg.plot .ref{stroke:currentColor;stroke-opacity:.45;stroke-dasharray:3 3;fill:none}
svg.plot .ln{fill:none;stroke-width:1.6;stroke-linejoin:round}
svg.plot .dash{stroke-dasharray:5 3}
svg.plot{--c0:#0072b2;--c1:#d55e00;--c2:#009e73;--c3:#cc79a7;--c4:#e69f00;--c5:#56b4e9;--c6:#8c564b;--c7:#6b6b6b}
@media (prefers-color-scheme:dark){svg.plot{color:#e6e6e6;--c0:#5cb8f0;--c1:#ff8c4a;--c2:#3fd69c;--c3:#e9a6d2;--c4:#f5c04a;--c5:#a6d8f7;--c6:#d4a59a;--c7:#b0b0b0}}
svg.plot .c0{stroke:var(--c0)}svg.plot .f0{fill:var(--c0)}
svg.plot .c1{stroke:var(--c1)}svg.plot .f1{fill:var(--c1)}
svg.plot .c2{stroke:var(--c2)}svg.plot .f2{fill:var(--c2)}
svg.plot .c3{stroke:var(--c3)}svg.plot .f3{fill:var(--c3)}
svg.plot .c4{stroke:var(--c4)}svg.plot .f4{fill:var(--c4)}
svg.plot .c5{stroke:var(--c5)}svg.plot .f5{fill:var(--c5)}
svg.plot .c6{stroke:var(--c6)}svg.plot .f6{fill:var(--c6)}
svg.plot .c7{stroke:var(--c7)}svg.plot .f7{fill:var(--c7)}
`

// Axis describes one axis. Label should carry the unit ("time (s)").
type Axis struct {
	Label string
	// Log draws the axis on a base-10 logarithmic scale; values <= 0 are
	// left out.
	Log bool
	// Min and Max fix the range when Max > Min; otherwise it is fitted to
	// the data (from 0 for a linear axis whose data are all >= 0 when
	// FromZero is set).
	Min, Max float64
	FromZero bool
	// Tight ends the axis at the data (or at Max) rather than at the next
	// whole tick.
	Tight bool
}

// Series is one line of a LineChart: points (X[i], Y[i]), X nondecreasing.
type Series struct {
	Name   string
	Colour int  // 0..Colours-1
	Dashed bool // drawn dashed (the predicted side, by convention)
	Step   bool // drawn as a step function: horizontal to the next X, then vertical
	// Markers draws a dot at every point (for sparse series).
	Markers bool
	X, Y    []float64
}

// Band is a shaded span of the x axis, labelled at its top.
type Band struct {
	X0, X1 float64
	Label  string
}

// LegendItem is one legend entry not tied to a series (a line style).
type LegendItem struct {
	Name   string
	Colour int // -1: drawn in the text colour
	Dashed bool
	Box    bool // a filled box rather than a line
}

// LineChart is a chart of series over a shared x axis.
type LineChart struct {
	Title  string
	X, Y   Axis
	Series []Series
	Bands  []Band
	// RefY draws dashed horizontal reference lines (a threshold).
	RefY []float64
	// Diagonal draws the line y = x (a perfect prediction).
	Diagonal bool
	// Legend overrides the legend built from the series names (Series
	// with an empty Name are left out of it either way).
	Legend []LegendItem
	// Extra legend entries appended after the series' own (line styles).
	LegendExtra   []LegendItem
	Width, Height int // user units; 0 means 760 x 300
}

// canvas is the plotting area and its scales.
type canvas struct {
	w, h                   float64
	left, right, top, bot  float64
	x0, x1, y0, y1         float64
	xlog, ylog             bool
	b                      *strings.Builder
	legendRows, legendCols int
}

func (c *canvas) px(x float64) float64 {
	if c.xlog {
		x = math.Log10(x)
	}
	return c.left + (x-c.x0)/(c.x1-c.x0)*(c.w-c.left-c.right)
}

func (c *canvas) py(y float64) float64 {
	if c.ylog {
		y = math.Log10(y)
	}
	return c.h - c.bot - (y-c.y0)/(c.y1-c.y0)*(c.h-c.top-c.bot)
}

// num formats a coordinate with one decimal, without a trailing ".0".
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}

// esc escapes text for XML.
func esc(s string) string { return html.EscapeString(s) }

// open writes the svg element and, standalone, the style.
func open(b *strings.Builder, w, h float64, title string, standalone bool) {
	if standalone {
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
		fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 %s %s" width="%s" height="%s" role="img">`, num(w), num(h), num(w), num(h))
		b.WriteString("<style>" + Style + "</style>")
	} else {
		fmt.Fprintf(b, `<svg class="plot" viewBox="0 0 %s %s" role="img">`, num(w), num(h))
	}
	fmt.Fprintf(b, "<title>%s</title>", esc(title))
}

// Range returns the data range of a set of values, ignoring NaN, infinities
// and, for a log axis, values <= 0; ok is false when none remain.
func dataRange(vals [][]float64, log bool) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, vs := range vals {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) || (log && v <= 0) {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return lo, hi, lo <= hi
}

// scale fits an axis: its range in the axis's own units (log10 for a log
// axis) and its ticks (in data units).
func scale(a Axis, vals [][]float64) (lo, hi float64, ticks []float64) {
	dlo, dhi, ok := dataRange(vals, a.Log)
	if a.Max > a.Min {
		dlo, dhi, ok = a.Min, a.Max, true
	}
	if !ok {
		dlo, dhi = 0, 1
		if a.Log {
			dlo = 1
			dhi = 10
		}
	}
	if a.Log {
		if dlo <= 0 {
			dlo = dhi / 10
		}
		l, h := math.Floor(math.Log10(dlo)), math.Ceil(math.Log10(dhi))
		if h <= l {
			h = l + 1
		}
		return l, h, LogTicks(l, h)
	}
	if a.FromZero && dlo >= 0 && !(a.Max > a.Min) {
		dlo = 0
	}
	if dhi <= dlo {
		if dlo == 0 {
			dhi = 1
		} else {
			dlo, dhi = dlo-math.Abs(dlo)/2, dhi+math.Abs(dhi)/2
		}
	}
	ticks = Ticks(dlo, dhi, 6)
	if a.Max > a.Min || a.Tight {
		return dlo, dhi, ticks
	}
	// Extend the range to whole ticks.
	step := ticks[1] - ticks[0]
	return math.Floor(dlo/step+1e-9) * step, math.Ceil(dhi/step-1e-9) * step, Ticks(math.Floor(dlo/step+1e-9)*step, math.Ceil(dhi/step-1e-9)*step, 6)
}

// Ticks returns round tick values (1, 2 or 5 times a power of ten apart)
// covering [lo, hi] with about n ticks; at least two ticks, lo < hi.
func Ticks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo, lo + 1}
	}
	raw := (hi - lo) / float64(max(n-1, 1))
	e := math.Floor(math.Log10(raw))
	p := math.Pow(10, e)
	mult := 10.0
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw*0.999 {
			mult = m
			break
		}
	}
	step := mult * p
	// Tick k is k*mult*10^e, computed as k*mult/10^-e for e < 0 so that
	// 3 x 0.05 prints as 0.15.
	at := func(k float64) float64 {
		if e < 0 {
			return k * mult / math.Pow(10, -e)
		}
		return k * step
	}
	var out []float64
	for k := math.Ceil(lo/step - 1e-9); at(k) <= hi+step*1e-9; k++ {
		out = append(out, cleanZero(at(k)))
	}
	if len(out) < 2 {
		out = []float64{lo, hi}
	}
	return out
}

func cleanZero(v float64) float64 {
	if math.Abs(v) < 1e-12 {
		return 0
	}
	return v
}

// LogTicks returns the ticks of a log axis spanning 10^lo..10^hi: every
// decade, and 2 and 5 times it when the axis spans at most two decades.
func LogTicks(lo, hi float64) []float64 {
	var out []float64
	for d := lo; d <= hi; d++ {
		p := math.Pow(10, d)
		out = append(out, p)
		if hi-lo <= 2 && d < hi {
			out = append(out, 2*p, 5*p)
		}
	}
	return out
}

// Label formats a tick value compactly: 0.001, 2.5, 1200, 1500000,
// 1.5e+09.
func Label(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e9 || a < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(v, 'f', 6, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// frame computes the canvas and draws the title, grid, ticks and axis
// labels.
func frame(b *strings.Builder, title string, w, h float64, xa, ya Axis, xv, yv [][]float64, legend []LegendItem) *canvas {
	c := &canvas{w: w, h: h, left: 64, right: 30, top: 34, bot: 46, b: b, xlog: xa.Log, ylog: ya.Log}
	// Legend rows below the x label.
	c.legendCols, c.legendRows = legendLayout(legend, w)
	c.bot += legendHeight(legend, w)
	var xt, yt []float64
	c.x0, c.x1, xt = scale(xa, xv)
	c.y0, c.y1, yt = scale(ya, yv)
	// Room for the longest y label (an estimated 7 units a character) and
	// the axis title beside it.
	long := 0
	for _, t := range yt {
		long = max(long, len(Label(t)))
	}
	c.left = max(c.left, 34+7*float64(long))
	// And for half the last x label past the plotting area.
	if n := len(xt); n > 0 {
		c.right = max(c.right, 8+3.5*float64(len(Label(xt[n-1]))))
	}
	fmt.Fprintf(b, `<text class="title" x="%s" y="20">%s</text>`, num(c.left), esc(title))
	pb := c.h - c.bot
	// Grid and ticks.
	for _, t := range yt {
		y := c.py(t)
		if y < c.top-0.5 || y > pb+0.5 {
			continue
		}
		fmt.Fprintf(b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, num(c.left), num(c.w-c.right), num(y), num(y))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end">%s</text>`, num(c.left-6), num(y+4), Label(t))
	}
	for _, t := range xt {
		x := c.px(t)
		if x < c.left-0.5 || x > c.w-c.right+0.5 {
			continue
		}
		fmt.Fprintf(b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, num(x), num(x), num(c.top), num(pb))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(x), num(pb+16), Label(t))
	}
	fmt.Fprintf(b, `<path class="axis" d="M%s %sV%sH%s"/>`, num(c.left), num(c.top), num(pb), num(c.w-c.right))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(c.left+(c.w-c.left-c.right)/2), num(pb+34), esc(xa.Label))
	fmt.Fprintf(b, `<text transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, num(c.top+(pb-c.top)/2), esc(ya.Label))
	return c
}

// legendLayout returns the legend's columns and rows for its entries on a
// chart w units wide: columns as wide as the longest entry (an estimated
// 7 units a character, 12-unit text) needs.
func legendLayout(items []LegendItem, w float64) (cols, rows int) {
	n := len(items)
	if n == 0 {
		return 0, 0
	}
	long := 0
	for _, it := range items {
		long = max(long, len([]rune(it.Name)))
	}
	colW := 40 + 7*float64(long)
	cols = min(n, max(1, int((w-80)/colW)))
	return cols, (n + cols - 1) / cols
}

// legendHeight is the room the legend takes below the axis label.
func legendHeight(items []LegendItem, w float64) float64 {
	_, rows := legendLayout(items, w)
	if rows == 0 {
		return 0
	}
	return float64(rows)*18 + 4
}

// legend draws the legend entries below the x axis label.
func (c *canvas) legend(items []LegendItem) {
	if len(items) == 0 {
		return
	}
	colW := (c.w - c.left - c.right) / float64(c.legendCols)
	y0 := c.h - c.bot + 54
	for i, it := range items {
		x := c.left + float64(i%c.legendCols)*colW
		y := y0 + float64(i/c.legendCols)*18
		cls := ""
		if it.Colour >= 0 {
			cls = fmt.Sprintf(" c%d", it.Colour%Colours)
		}
		switch {
		case it.Box && it.Colour >= 0:
			fmt.Fprintf(c.b, `<rect class="f%d" x="%s" y="%s" width="14" height="10"/>`, it.Colour%Colours, num(x), num(y-9))
		case it.Box:
			fmt.Fprintf(c.b, `<rect class="band" style="fill-opacity:.25" x="%s" y="%s" width="14" height="10"/>`, num(x), num(y-9))
		default:
			d := ""
			if it.Dashed {
				d = " dash"
			}
			st := ""
			if it.Colour < 0 {
				st = ` style="stroke:currentColor"`
			}
			fmt.Fprintf(c.b, `<path class="ln%s%s"%s d="M%s %sh22"/>`, cls, d, st, num(x), num(y-4))
		}
		fmt.Fprintf(c.b, `<text x="%s" y="%s">%s</text>`, num(x+28), num(y), esc(it.Name))
	}
}

// bands draws shaded x spans with their labels.
func (c *canvas) bands(bands []Band) {
	pb := c.h - c.bot
	for i, bd := range bands {
		if c.xlog && (bd.X0 <= 0 || bd.X1 <= 0) {
			continue
		}
		x0, x1 := c.px(bd.X0), c.px(bd.X1)
		x0 = math.Max(x0, c.left)
		x1 = math.Min(x1, c.w-c.right)
		if x1 < x0 {
			continue
		}
		wd := math.Max(x1-x0, 1.5)
		fmt.Fprintf(c.b, `<rect class="band" x="%s" y="%s" width="%s" height="%s"/>`, num(x0), num(c.top), num(wd), num(pb-c.top))
		if bd.Label != "" {
			// Stagger labels over three rows so neighbours do not overlap.
			fmt.Fprintf(c.b, `<text class="bandl" x="%s" y="%s" text-anchor="middle">%s</text>`, num(x0+wd/2), num(c.top+10+float64(i%3)*11), esc(bd.Label))
		}
	}
}

// WriteSVG writes the chart; standalone adds the XML declaration, the
// namespace and the style.
func (lc *LineChart) WriteSVG(w io.Writer, standalone bool) error {
	_, err := io.WriteString(w, lc.SVG(standalone))
	return err
}

// SVG returns the chart as SVG text.
func (lc *LineChart) SVG(standalone bool) string {
	W, H := float64(lc.Width), float64(lc.Height)
	if W == 0 {
		W = 760
	}
	if H == 0 {
		H = 300
	}
	legend := lc.Legend
	if legend == nil {
		for _, s := range lc.Series {
			if s.Name != "" {
				legend = append(legend, LegendItem{Name: s.Name, Colour: s.Colour, Dashed: s.Dashed})
			}
		}
		legend = append(legend, lc.LegendExtra...)
	}
	var xv, yv [][]float64
	for _, s := range lc.Series {
		xv = append(xv, s.X)
		yv = append(yv, s.Y)
	}
	yv = append(yv, lc.RefY)
	var b strings.Builder
	H += legendHeight(legend, W)
	open(&b, W, H, lc.Title, standalone)
	c := frame(&b, lc.Title, W, H, lc.X, lc.Y, xv, yv, legend)
	c.bands(lc.Bands)
	pb := c.h - c.bot
	inside := func(x, y float64) bool {
		return x >= c.left-0.5 && x <= c.w-c.right+0.5 && y >= c.top-0.5 && y <= pb+0.5
	}
	clampY := func(y float64) float64 { return math.Min(math.Max(y, c.top), pb) }
	for _, r := range lc.RefY {
		if y := c.py(r); inside(c.left, y) {
			fmt.Fprintf(&b, `<path class="ref" d="M%s %sH%s"/>`, num(c.left), num(y), num(c.w-c.right))
		}
	}
	if lc.Diagonal {
		lo := math.Max(c.x0, c.y0)
		hi := math.Min(c.x1, c.y1)
		if c.xlog == c.ylog && hi > lo {
			fl := func(v float64) float64 {
				if c.xlog {
					return math.Pow(10, v)
				}
				return v
			}
			fmt.Fprintf(&b, `<path class="ref" d="M%s %sL%s %s"/>`, num(c.px(fl(lo))), num(c.py(fl(lo))), num(c.px(fl(hi))), num(c.py(fl(hi))))
		}
	}
	for _, s := range lc.Series {
		var d strings.Builder
		pen := false
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if math.IsNaN(x) || math.IsNaN(y) || (c.xlog && x <= 0) || (c.ylog && y <= 0) {
				pen = false
				continue
			}
			X, Y := c.px(x), clampY(c.py(y))
			switch {
			case !pen:
				fmt.Fprintf(&d, "M%s %s", num(X), num(Y))
			case s.Step:
				fmt.Fprintf(&d, "H%sV%s", num(X), num(Y))
			default:
				fmt.Fprintf(&d, "L%s %s", num(X), num(Y))
			}
			pen = true
		}
		if d.Len() == 0 {
			continue
		}
		cls := fmt.Sprintf("ln c%d", s.Colour%Colours)
		if s.Dashed {
			cls += " dash"
		}
		fmt.Fprintf(&b, `<path class="%s" data-series="%s" d="%s"/>`, cls, esc(s.Name), d.String())
		if s.Markers {
			fmt.Fprintf(&b, `<g class="f%d">`, s.Colour%Colours)
			for i := range s.X {
				x, y := s.X[i], s.Y[i]
				if math.IsNaN(x) || math.IsNaN(y) || (c.xlog && x <= 0) || (c.ylog && y <= 0) {
					continue
				}
				r := "2.6"
				if s.Dashed {
					r = "1.8"
				}
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="%s"/>`, num(c.px(x)), num(clampY(c.py(y))), r)
			}
			b.WriteString("</g>")
		}
	}
	c.legend(legend)
	b.WriteString("</svg>")
	return b.String()
}

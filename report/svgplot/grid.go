package svgplot

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Heatmap is a grid of counts over two linear axes: Cols x Rows cells
// spanning [X.Min, X.Max] x [Y.Min, Y.Max], Counts[row*Cols+col] the count
// of cell (col, row), row 0 at the bottom. A cell's opacity grows with the
// logarithm of its count; empty cells are not drawn.
type Heatmap struct {
	Title      string
	X, Y       Axis // Min < Max required
	Cols, Rows int
	Counts     []int
	Colour     int
	Bands      []Band // shaded x spans (drawn over the cells)
	Diagonal   bool   // the line y = x
	Legend     []LegendItem
	Width      int // user units; 0 means 760
	Height     int // 0 means 420
}

// Cells returns how many cells are drawn (non-zero counts).
func (hm *Heatmap) Cells() int {
	n := 0
	for _, c := range hm.Counts {
		if c > 0 {
			n++
		}
	}
	return n
}

// WriteSVG writes the heat map (see LineChart.WriteSVG).
func (hm *Heatmap) WriteSVG(w io.Writer, standalone bool) error {
	_, err := io.WriteString(w, hm.SVG(standalone))
	return err
}

// SVG returns the heat map as SVG text.
func (hm *Heatmap) SVG(standalone bool) string {
	W, H := float64(hm.Width), float64(hm.Height)
	if W == 0 {
		W = 760
	}
	if H == 0 {
		H = 420
	}
	H += legendHeight(hm.Legend, W)
	var b strings.Builder
	open(&b, W, H, hm.Title, standalone)
	xa, ya := hm.X, hm.Y
	c := frame(&b, hm.Title, W, H, xa, ya, nil, nil, hm.Legend)
	maxC := 0
	for _, n := range hm.Counts {
		maxC = max(maxC, n)
	}
	if hm.Cols > 0 && hm.Rows > 0 && maxC > 0 && len(hm.Counts) == hm.Cols*hm.Rows {
		cw := (xa.Max - xa.Min) / float64(hm.Cols)
		ch := (ya.Max - ya.Min) / float64(hm.Rows)
		fmt.Fprintf(&b, `<g class="f%d" data-series="%s">`, hm.Colour%Colours, esc(hm.Title))
		lm := math.Log1p(float64(maxC))
		for r := 0; r < hm.Rows; r++ {
			for col := 0; col < hm.Cols; col++ {
				n := hm.Counts[r*hm.Cols+col]
				if n == 0 {
					continue
				}
				x0, x1 := c.px(xa.Min+float64(col)*cw), c.px(xa.Min+float64(col+1)*cw)
				y1, y0 := c.py(ya.Min+float64(r)*ch), c.py(ya.Min+float64(r+1)*ch)
				op := 0.18 + 0.82*math.Log1p(float64(n))/lm
				fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill-opacity="%.2f"><title>%d</title></rect>`,
					num(x0), num(y0), num(math.Max(x1-x0, 0.8)), num(math.Max(y1-y0, 0.8)), op, n)
			}
		}
		b.WriteString("</g>")
	}
	if hm.Diagonal {
		lo, hi := math.Max(c.x0, c.y0), math.Min(c.x1, c.y1)
		if hi > lo {
			fmt.Fprintf(&b, `<path class="ref" d="M%s %sL%s %s"/>`, num(c.px(lo)), num(c.py(lo)), num(c.px(hi)), num(c.py(hi)))
		}
	}
	c.bands(hm.Bands)
	c.legend(hm.Legend)
	b.WriteString("</svg>")
	return b.String()
}

// Segment is a span [X0, X1) of one class in a strip.
type Segment struct {
	X0, X1 float64
	Colour int
}

// Strip is one row of a Strips chart.
type Strip struct {
	Label    string
	Segments []Segment
}

// Strips draws rows of coloured spans over a shared x axis: a class
// (think-time short or long) over time, one row per queue and side.
// Segments narrower than a quarter of a unit are widened to stay visible.
type Strips struct {
	Title  string
	X      Axis
	Rows   []Strip
	Legend []LegendItem
	Width  int // 0 means 760
	RowH   int // row height, 0 means 16
}

// WriteSVG writes the strips (see LineChart.WriteSVG).
func (st *Strips) WriteSVG(w io.Writer, standalone bool) error {
	_, err := io.WriteString(w, st.SVG(standalone))
	return err
}

// SVG returns the strips as SVG text.
func (st *Strips) SVG(standalone bool) string {
	W := float64(st.Width)
	if W == 0 {
		W = 760
	}
	rh := float64(st.RowH)
	if rh == 0 {
		rh = 16
	}
	left := 150.0
	top := 34.0
	plotH := rh * float64(max(len(st.Rows), 1))
	H := top + plotH + 46 + legendHeight(st.Legend, W)
	var b strings.Builder
	open(&b, W, H, st.Title, standalone)
	var xv [][]float64
	for _, r := range st.Rows {
		var v []float64
		for _, s := range r.Segments {
			v = append(v, s.X0, s.X1)
		}
		xv = append(xv, v)
	}
	c := &canvas{w: W, h: H, left: left, right: 30, top: top, bot: H - top - plotH, b: &b, xlog: st.X.Log}
	var xt []float64
	c.x0, c.x1, xt = scale(st.X, xv)
	c.legendCols, c.legendRows = legendLayout(st.Legend, W)
	fmt.Fprintf(&b, `<text class="title" x="%s" y="20">%s</text>`, num(16), esc(st.Title))
	pb := top + plotH
	for _, t := range xt {
		x := c.px(t)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, num(x), num(x), num(top), num(pb))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(x), num(pb+16), Label(t))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(left+(W-left-30)/2), num(pb+34), esc(st.X.Label))
	for i, r := range st.Rows {
		y := top + float64(i)*rh
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end">%s</text>`, num(left-6), num(y+rh*0.72), esc(r.Label))
		if len(r.Segments) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<g data-series="%s">`, esc(r.Label))
		for _, s := range r.Segments {
			x0, x1 := c.px(s.X0), c.px(s.X1)
			fmt.Fprintf(&b, `<rect class="f%d" x="%s" y="%s" width="%s" height="%s"/>`, s.Colour%Colours, num(x0), num(y+2), num(math.Max(x1-x0, 0.25)), num(rh-4))
		}
		b.WriteString("</g>")
	}
	fmt.Fprintf(&b, `<path class="axis" d="M%s %sV%sH%s"/>`, num(left), num(top), num(pb), num(W-30))
	c.legend(st.Legend)
	b.WriteString("</svg>")
	return b.String()
}

package device

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// curveModel is a known model with depth curves: reads of 100 us (no
// per-byte cost) with a shared factor 1 + 0.5*(k-1), a 4 KiB curve of
// factors 1 at depth 1 and 2 at depth 4, a 64 KiB curve of 3 at depth 1;
// writes of 50 us without curves.
func curveModel() *Model {
	return &Model{Version: Version, Kind: KindNonRotational, NonRotational: &NonRotational{
		Parallelism: 1, Slope: 0.5,
		Read:  &OpTiming{Base: 100 * time.Microsecond},
		Write: &OpTiming{Base: 50 * time.Microsecond},
		Curves: []DepthCurve{
			{Op: "read", Bytes: 4096, Depths: []int{1, 4}, Factors: []float64{1, 2}, N: 100},
			{Op: "read", Bytes: 65536, Depths: []int{1}, Factors: []float64{3}, N: 50},
		},
	}}
}

func TestDepthCurveFactor(t *testing.T) {
	n := curveModel().NonRotational
	for _, c := range []struct {
		name  string
		op    Op
		bytes uint32
		k     int
		want  float64
	}{
		{"4k at a point", OpRead, 4096, 1, 1},
		{"4k at the other point", OpRead, 4096, 4, 2},
		// Linear between depths 1 and 4: 1 + (2-1)*(2-1)/(4-1).
		{"4k between points", OpRead, 4096, 2, 1 + 1.0/3},
		// Beyond the last point, the shared line's shape: 2*(1+0.5*7)/(1+0.5*3).
		{"4k beyond", OpRead, 4096, 8, 2 * 4.5 / 2.5},
		// 16 KiB is half way from 4 KiB to 64 KiB in log size: (1+3)/2.
		{"16k between bands", OpRead, 16384, 1, 2},
		// 16 KiB at depth 2: (1+1/3 + 3*1.5)/2.
		{"16k between bands and depths", OpRead, 16384, 2, (1 + 1.0/3 + 4.5) / 2},
		{"64k beyond", OpRead, 65536, 2, 3 * 1.5},
		{"1M: the nearest band", OpRead, 1 << 20, 1, 3},
		{"512 bytes: the nearest band", OpRead, 512, 4, 2},
		{"writes: the shared line", OpWrite, 4096, 3, 2},
		{"flush-like other: the shared line", OpOther, 0, 3, 2},
	} {
		if got := n.factor(c.op, c.bytes, c.k, false, float64(c.k), float64(c.k)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: factor %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDepthLoad(t *testing.T) {
	n := &NonRotational{}
	if got := n.load(3, 7.4); got != 3 {
		t.Errorf("without a window: load %d, want the count 3", got)
	}
	n.DepthWindow = time.Millisecond
	for _, c := range []struct {
		k    int
		peak float64
		want int
	}{{3, 7.4, 8}, {9, 7.4, 9}, {1, 0, 1}, {2, 2.5, 3}, {1, 4, 4}} {
		if got := n.load(c.k, c.peak); got != c.want {
			t.Errorf("load(%d, %v) = %d, want %d", c.k, c.peak, got, c.want)
		}
	}
	// The peak: 4 requests from 0 to 1000 ns make it 4; two windows with
	// none then leave 4/e^2.
	var a depthPeak
	a.advance(0, 0, 1000)
	a.advance(1000, 4, 1000)
	if a.v != 4 {
		t.Errorf("peak %v, want 4", a.v)
	}
	a.advance(1000, 9, 1000) // no time passed: no change
	a.advance(3000, 0, 1000)
	if want := 4 * math.Exp(-2); math.Abs(a.v-want) > 1e-12 {
		t.Errorf("peak %v, want %v", a.v, want)
	}
	a.advance(3500, 2, 1000) // 2 held: above 4/e^2.5
	if a.v != 2 {
		t.Errorf("peak %v, want 2", a.v)
	}
}

// TestTimingDepthWindow: a request issued on a drained device that was
// just kept busy is timed at the peaked load, not at its count.
func TestTimingDepthWindow(t *testing.T) {
	m := curveModel()
	m.NonRotational.DepthWindow = 1000
	dev := m.NewDevice(1)
	var rqs []*replay.Request
	for i := range 4 {
		r := &replay.Request{ID: uint64(i + 1), Sector: uint64(i) * 1000, Bytes: 4096, Cat: trace.CatRead}
		rqs = append(rqs, r)
		// Issued at 0 on an idle device (average 0): the count decides,
		// 1 to 4 on the 4 KiB curve: 1, 4/3, 5/3, 2 times 100 us.
		want := 100e3 * (1 + float64(i)/3)
		if got := float64(dev.Issue(0, r)); math.Abs(got-want) > 0.5 {
			t.Errorf("request %d: done at %v, want %v", i+1, got, want)
		}
	}
	for _, r := range rqs {
		dev.Done(1000, r)
	}
	// 4 on the device until 1000: peak 4, above the count 1: the curve's
	// factor 2 at depth 4.
	e := &replay.Request{ID: 9, Sector: 1 << 20, Bytes: 4096, Cat: trace.CatRead}
	if got := dev.Issue(1000, e) - 1000; got != 200e3 {
		t.Errorf("after the bunch: latency %d, want 200 us", got)
	}
	dev.Done(1000, e)
	// 693 ns later with none held the peak is 4*exp(-0.693) = 2.0003,
	// rounded up 3: 1 + (2-1)*(3-1)/(4-1).
	got := dev.Issue(1693, &replay.Request{ID: 10, Sector: 2 << 20, Bytes: 4096, Cat: trace.CatRead}) - 1693
	if want := 100e3 * (1 + 2.0/3); math.Abs(float64(got)-want) > 0.5 {
		t.Errorf("after the drain: latency %d, want %v", got, want)
	}
}

func TestDepthCurvesJSON(t *testing.T) {
	m := curveModel()
	m.NonRotational.DepthWindow = 560344
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("Load(Save(m)): %v\n%s", err, buf.String())
	}
	if n := got.NonRotational; n.DepthWindow != 560344 || len(n.Curves) != 2 || n.Curves[1].Factors[0] != 3 || n.Curves[0].Depths[1] != 4 {
		t.Errorf("loaded %+v", n)
	}
	for _, c := range []struct {
		name string
		bad  func(m *Model)
		want string
	}{
		{"version 4", func(m *Model) { m.Version = 4 }, "depth_window_ns or depth_curves in a version 4 model"},
		{"window", func(m *Model) { m.NonRotational.DepthWindow = -1 }, "depth_window_ns -1"},
		{"window too long", func(m *Model) { m.NonRotational.DepthWindow = 40 * time.Second }, "depth_window_ns 40000000000"},
		{"op", func(m *Model) { m.NonRotational.Curves[1].Op = "other" }, `op "other"`},
		{"order", func(m *Model) { m.NonRotational.Curves[1].Bytes = 4000 }, "not after depth_curves[0]"},
		{"bytes", func(m *Model) { m.NonRotational.Curves[0].Bytes = 0 }, "bytes 0"},
		{"factor", func(m *Model) { m.NonRotational.Curves[1].Factors[0] = -3 }, "factors[0] -3"},
		{"factor too large", func(m *Model) { m.NonRotational.Curves[1].Factors[0] = 1e9 }, "factors[0] 1e+09"},
		{"lengths", func(m *Model) { m.NonRotational.Curves[1].Factors = []float64{3, 4} }, "1 depths and 2 factors"},
		{"depths", func(m *Model) { m.NonRotational.Curves[0].Depths = []int{4, 1} }, "depths[1] 1 not rising"},
		{"depth 0", func(m *Model) { m.NonRotational.Curves[0].Depths = []int{0, 4} }, "depths[0] 0 not rising"},
		{"depth too deep", func(m *Model) { m.NonRotational.Curves[0].Depths = []int{1, 1 << 20} }, "depths[1] 1048576 not rising within 1..10240"},
	} {
		bad := curveModel()
		bad.NonRotational.DepthWindow = 560344
		c.bad(bad)
		js, err := json.Marshal(bad)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(bytes.NewReader(js))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Load: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	// Too many curves: refused by count, not read point by point.
	many := `{"version": 5, "kind": "nonrotational", "nonrotational": {"parallelism": 1, "saturation_slope": 0, "read": {"base_ns": 5, "per_byte_ns": 0, "n": 1, "residual": {"p": [], "x": []}}, "depth_curves": [` +
		strings.Repeat(`{"op": "read", "bytes": 1, "depths": [1], "factors": [1], "n": 1},`, maxCurves) + `{"op": "read", "bytes": 1, "depths": [1], "factors": [1], "n": 1}]}}`
	if _, err := Load(strings.NewReader(many)); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("Load of %d curves: %v", maxCurves+1, err)
	}
}

// TestFitCurves: the factor of a point is the sum of its D2C over the sum
// of the unsaturated latencies, and a load seen fewer than minCurveGroup
// times is no point.
func TestFitCurves(t *testing.T) {
	n := &NonRotational{Parallelism: 1, Read: &OpTiming{Base: 100, PerByte: 0}}
	var ss []sample
	add := func(k, count int, bytes uint32, d2c float64) {
		for range count {
			ss = append(ss, sample{k: k, op: OpRead, bytes: bytes, d2c: d2c})
		}
	}
	add(1, 50, 4096, 100)
	add(2, 30, 4096, 200)
	add(2, 30, 4096, 400) // depth 2: (30*200 + 30*400)/(60*100) = 3
	add(3, 49, 4096, 900) // too few
	add(1, 60, 65536, 500)
	add(1, 60, 4096*3, 700) // 12 KiB: the 16 KiB band (log2 3 = 1.58)
	fitCurves(n, ss, 64)
	if len(n.Curves) != 3 {
		t.Fatalf("curves %+v, want 3", n.Curves)
	}
	c := n.Curves[0]
	if c.Op != "read" || c.Bytes != 4096 || len(c.Depths) != 2 || c.Depths[0] != 1 || c.Depths[1] != 2 ||
		c.Factors[0] != 1 || c.Factors[1] != 3 || c.N != 110 {
		t.Errorf("4 KiB curve %+v, want depths [1 2], factors [1 3], n 110", c)
	}
	// The 4 KiB band's size is the geometric mean of its sizes: all 4096.
	if c := n.Curves[1]; c.Bytes != 12288 || c.Factors[0] != 7 {
		t.Errorf("12 KiB curve %+v, want 12288 bytes, factor 7", c)
	}
	if c := n.Curves[2]; c.Bytes != 65536 || c.Factors[0] != 5 {
		t.Errorf("64 KiB curve %+v, want factor 5", c)
	}
	// The residuals are D2C over the curve's latency: 1 for every request
	// at depth 1, 2/3 and 4/3 at depth 2; at depth 3 (no point) the factor
	// extrapolates from depth 2 by the shared factor (1 here): 900/300.
	if r := n.Read.Residual; r.At(0) != 2.0/3 || r.At(1) != 3 {
		t.Errorf("residual from %v to %v, want 2/3 to 3", r.At(0), r.At(1))
	}
}

func TestNondecreasing(t *testing.T) {
	for _, c := range []struct{ fs, ws, want []float64 }{
		{[]float64{1, 3, 2, 4}, []float64{1, 1, 1, 1}, []float64{1, 2.5, 2.5, 4}},
		{[]float64{1, 3, 2, 4}, []float64{1, 1, 3, 1}, []float64{1, 2.25, 2.25, 4}},
		// A fall over three points pools them all: (5+4+3)/3.
		{[]float64{5, 4, 3, 6}, []float64{1, 1, 1, 1}, []float64{4, 4, 4, 6}},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, []float64{1, 2, 3}},
	} {
		got := slices.Clone(c.fs)
		nondecreasing(got, c.ws)
		if !slices.Equal(got, c.want) {
			t.Errorf("nondecreasing(%v, %v) = %v, want %v", c.fs, c.ws, got, c.want)
		}
	}
}

// TestClampCurves: a fit whose curve residuals or window run past the
// bounds is brought within them, so that Calibrate returns a model
// Validate accepts.
func TestClampCurves(t *testing.T) {
	m := curveModel()
	m.NonRotational.DepthWindow = time.Hour
	m.NonRotational.Curves[0].Residual = Quantiles{P: []float64{0, 1}, X: []float64{0.5, 1e9}}
	m.NonRotational.Curves[1].ByInflight = []Quantiles{{}, {P: []float64{0, 1}, X: []float64{1, 1e7}}}
	if err := m.Validate(); err == nil {
		t.Fatal("Validate accepted out-of-bound curves")
	}
	m.clampToBounds()
	if err := m.Validate(); err != nil {
		t.Errorf("after clampToBounds: %v", err)
	}
	if m.NonRotational.DepthWindow != MaxServiceTime || m.NonRotational.Curves[0].Residual.X[1] != maxFactor {
		t.Errorf("clamped to %v and %v", m.NonRotational.DepthWindow, m.NonRotational.Curves[0].Residual.X[1])
	}
}

// TestDepthCurveLocality: a class with curves of both localities times
// the requests that continue a stream by its sequential curves and the
// others by the rest; a class with one locality times both by it.
func TestDepthCurveLocality(t *testing.T) {
	m := curveModel()
	n := m.NonRotational
	n.Curves = []DepthCurve{
		{Op: "read", Bytes: 4096, Depths: []int{1}, Factors: []float64{2}, N: 60},
		{Op: "read", Sequential: true, Bytes: 4096, Depths: []int{1}, Factors: []float64{0.5}, N: 60},
		{Op: "write", Sequential: true, Bytes: 4096, Depths: []int{1}, Factors: []float64{3}, N: 60},
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		op   Op
		seq  bool
		want float64
	}{
		{"random read", OpRead, false, 2},
		{"sequential read", OpRead, true, 0.5},
		{"random write: the sequential curves", OpWrite, false, 3},
		{"sequential write", OpWrite, true, 3},
	} {
		if got := n.factor(c.op, 4096, 1, c.seq, 1, 1); got != c.want {
			t.Errorf("%s: factor %v, want %v", c.name, got, c.want)
		}
	}
	// The device tells the streams apart: a read where the last one ended
	// takes the sequential curve (100 us * 0.5), one elsewhere the other.
	dev := m.NewDevice(1)
	r1 := &replay.Request{ID: 1, Sector: 1000, Bytes: 4096, Cat: trace.CatRead}
	if got := dev.Issue(0, r1); got != 200e3 {
		t.Errorf("first read: %d, want 200 us", got)
	}
	dev.Done(200e3, r1)
	r2 := &replay.Request{ID: 2, Sector: 1008, Bytes: 4096, Cat: trace.CatRead}
	if got := dev.Issue(200e3, r2) - 200e3; got != 50e3 {
		t.Errorf("read continuing the stream: %d, want 50 us", got)
	}
	// Sequential before random within a class is out of order.
	n.Curves[0], n.Curves[1] = n.Curves[1], n.Curves[0]
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "random before sequential") {
		t.Errorf("Validate: %v", err)
	}
}

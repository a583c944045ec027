package device

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDemerit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]float64, 5000)
	for i := range a {
		a[i] = 50e-6 + rng.ExpFloat64()*20e-6
	}
	if d := Demerit(a, a); d != 0 {
		t.Errorf("Demerit(a, a) = %v, want 0", d)
	}
	// A constant shift moves every quantile by the shift.
	b := make([]float64, len(a))
	for i := range a {
		b[i] = a[i] + 10e-6
	}
	if d := Demerit(a, b); math.Abs(d-10e-6) > 1e-12 {
		t.Errorf("Demerit of a 10us shift = %v, want 1e-5", d)
	}
	// Symmetric, independent of order, and the inputs are left alone.
	first := a[0]
	if d1, d2 := Demerit(a, b), Demerit(b, a); d1 != d2 || a[0] != first {
		t.Errorf("Demerit not symmetric (%v, %v) or modified its input", d1, d2)
	}
	// Two uniform samples on [0,1] and [0,2]: the quantile gap at p is p,
	// so the demerit is sqrt(mean(p^2)) = 1/sqrt(3).
	u1 := make([]float64, 10001)
	u2 := make([]float64, 10001)
	for i := range u1 {
		u1[i] = float64(i) / 10000
		u2[i] = 2 * float64(i) / 10000
	}
	if d := Demerit(u1, u2); math.Abs(d-1/math.Sqrt(3)) > 1e-3 {
		t.Errorf("Demerit(U[0,1], U[0,2]) = %v, want %v", d, 1/math.Sqrt(3))
	}
	// Different sample sizes: a single value against many copies of it.
	if d := Demerit([]float64{3}, []float64{3, 3, 3, 3}); d != 0 {
		t.Errorf("Demerit of equal constants = %v", d)
	}
	if d := Demerit(nil, a); !math.IsNaN(d) {
		t.Errorf("Demerit(nil, a) = %v, want NaN", d)
	}
}

func TestQuantiles(t *testing.T) {
	q := Quantiles{P: []float64{0, 0.25, 0.5, 0.75, 1}, X: []float64{1, 2, 3, 4, 5}}
	if v := q.At(0.125); v != 1.5 {
		t.Errorf("At(0.125) = %v, want 1.5", v)
	}
	if v := q.At(-1); v != 1 {
		t.Errorf("At(-1) = %v", v)
	}
	if v := q.At(1); v != 5 {
		t.Errorf("At(1) = %v", v)
	}
	if m := q.Mean(); m != 3 {
		t.Errorf("Mean = %v, want 3", m)
	}
	// A small sample: every order statistic is kept, interpolated exactly.
	xs := []float64{5, 1, 4, 2, 3}
	q = QuantilesOf(xs, 16)
	if xs[0] != 5 {
		t.Error("QuantilesOf sorted its input")
	}
	for _, p := range []float64{0, 0.1, 0.25, 0.6, 0.75, 1} {
		if got, want := q.At(p), 1+4*p; math.Abs(got-want) > 1e-12 {
			t.Errorf("QuantilesOf(1..5).At(%v) = %v, want %v", p, got, want)
		}
	}
	if err := q.validate(); err != nil {
		t.Error(err)
	}
	// Two modes far apart: the entries gather at the jump.
	bi := make([]float64, 10000)
	for i := range bi {
		bi[i] = 1 + float64(i%100)/1000
		if i%100 == 0 {
			bi[i] = 30 + float64(i)/10000
		}
	}
	q = QuantilesOf(bi, 64)
	if q.Len() != 65 {
		t.Errorf("bimodal table has %d entries, want 65", q.Len())
	}
	if v := q.At(0.985); v > 1.2 {
		t.Errorf("bimodal At(0.985) = %v, want in the low mode (the jump is at 0.99)", v)
	}
	// Sampling a table reproduces the distribution it was made from.
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 20000)
	for i := range src {
		src[i] = rng.ExpFloat64()
	}
	// The tails matter: a sample from the same distribution is the yardstick.
	other := make([]float64, len(src))
	for i := range other {
		other[i] = rng.ExpFloat64()
	}
	noise := Demerit(src, other)
	tab := QuantilesOf(src, 256)
	if tab.Len() != 257 {
		t.Errorf("table of %d entries, want 257", tab.Len())
	}
	draws := make([]float64, 20000)
	for i := range draws {
		draws[i] = tab.At(rng.Float64())
	}
	if d := Demerit(src, draws); d > 1.5*noise {
		t.Errorf("draws from the table are %v (demerit) from the source, want < 1.5 * %v (sampling noise)", d, noise)
	}
	if m := tab.Mean(); math.Abs(m-mean(src)) > 0.01 {
		t.Errorf("table mean %v, sample mean %v", m, mean(src))
	}
}

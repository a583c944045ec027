package diff

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

func bruteInversions(x []int32) int64 {
	var n int64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[i] > x[j] {
				n++
			}
		}
	}
	return n
}

func TestCountInversionsBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 200; trial++ {
		n := rng.IntN(300)
		x := make([]int32, n)
		for i := range x {
			x[i] = int32(rng.IntN(n + 1)) // with ties
		}
		if got, want := countInversions(x), bruteInversions(x); got != want {
			t.Fatalf("n=%d: inversions %d, brute force %d", n, got, want)
		}
	}
}

// bruteTau is Kendall's tau-b over all pairs of (a[i], b[i]).
func bruteTau(a, b []trace.Time) float64 {
	var conc, disc, tiesA, tiesB, n0 float64
	for i := range a {
		for j := i + 1; j < len(a); j++ {
			n0++
			da, db := a[i]-a[j], b[i]-b[j]
			switch {
			case da == 0 && db == 0:
				tiesA++
				tiesB++
			case da == 0:
				tiesA++
			case db == 0:
				tiesB++
			case (da > 0) == (db > 0):
				conc++
			default:
				disc++
			}
		}
	}
	return (conc - disc) / math.Sqrt((n0-tiesA)*(n0-tiesB))
}

// TestKendallTauBrute checks compareOrder's tau against a brute-force
// O(n^2) tau on random issue times without ties (where tau-a = tau-b and
// the tie-break rule does not matter).
func TestKendallTauBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	for trial := 0; trial < 50; trial++ {
		n := 2 + rng.IntN(400)
		var rb, pb []trace.Bio
		perm := rng.Perm(n)
		var ra, pa []trace.Time
		for i := 0; i < n; i++ {
			it := trace.Time(i * 10)
			pt := trace.Time(perm[i] * 10)
			if trial%2 == 0 { // partially ordered: a local shuffle
				pt = trace.Time(i*10+rng.IntN(50))*10 + trace.Time(i%7)
			}
			rb = append(rb, trace.Bio{PID: 1, Index: uint32(i), Issue: it, Done: it + 1})
			pb = append(pb, trace.Bio{PID: 1, Index: uint32(i), Issue: pt, Done: pt + 1})
			ra = append(ra, it)
			pa = append(pa, pt)
		}
		real := FromData(trace.Meta{}, rb, nil, nil)
		pred := FromData(trace.Meta{}, pb, nil, nil)
		r := Compare(real, pred, Options{})
		want := bruteTau(ra, pa)
		if math.Abs(r.DispatchOrder.KendallTau-want) > 1e-12 {
			t.Fatalf("trial %d n=%d: tau %v, brute force %v", trial, n, r.DispatchOrder.KendallTau, want)
		}
	}
}

// TestTiesBrokenByKey: bios of one request share an issue time; equal
// groups on both sides give tau 1, and the tie-break is (PID, Index).
func TestTiesBrokenByKey(t *testing.T) {
	var bios []trace.Bio
	for i := 0; i < 40; i++ {
		bios = append(bios, trace.Bio{PID: uint32(1 + i%3), Index: uint32(i / 3), Issue: trace.Time(i / 4), Done: 100})
	}
	real := FromData(trace.Meta{}, append([]trace.Bio(nil), bios...), nil, nil)
	pred := FromData(trace.Meta{}, append([]trace.Bio(nil), bios...), nil, nil)
	r := Compare(real, pred, Options{})
	if r.DispatchOrder.KendallTau != 1 || r.DispatchOrder.Divergences != 0 || r.DispatchOrder.FirstDivergence != nil {
		t.Fatalf("tau %v, divergences %d, first %v", r.DispatchOrder.KendallTau, r.DispatchOrder.Divergences, r.DispatchOrder.FirstDivergence)
	}
}

func TestSelfDiffSynthetic(t *testing.T) {
	a := synthSide(20000, 8, 1)
	b := cloneSide(a)
	r := Compare(a, b, Options{})
	o := r.DispatchOrder
	if o.KendallTau != 1 || o.MeanDisplacement != 0 || o.Divergences != 0 || o.FirstDivergence != nil || o.Inversions != 0 {
		t.Errorf("order: %+v", o)
	}
	if r.Identity.Matched != 20000 || r.Identity.RealOnly != 0 || r.Identity.PredictedOnly != 0 {
		t.Errorf("identity %+v", r.Identity)
	}
	if r.Bandwidth.WorstShareError != 0 || r.Bandwidth.Fairness != 1 {
		t.Errorf("bandwidth %+v", r.Bandwidth)
	}
	for _, c := range r.Cgroups {
		if c.KS != 0 || c.WindowError != 0 || c.BandwidthError != 0 {
			t.Errorf("cgroup %d: KS %v window error %v", c.ID, c.KS, c.WindowError)
		}
	}
	if r.ThinkTime.Agreement != 1 || r.ThinkTime.Compared == 0 {
		t.Errorf("think time %+v", r.ThinkTime)
	}
	if r.Latency.D2CDemerit != 0 || r.Latency.Q2CDemerit != 0 {
		t.Errorf("latency %+v", r.Latency)
	}
	if r.Merges.RealBack != r.Merges.PredBack || r.Merges.RealBack == 0 {
		t.Errorf("merges %+v", r.Merges)
	}
}

// TestReversedStretch reverses the predicted dispatch order of real
// positions 1000..1200 and expects exactly that stretch as the only
// divergence.
func TestReversedStretch(t *testing.T) {
	a := synthSide(5000, 4, 2)
	b := cloneSide(a)
	// Reverse the issue times of requests 1000..1200 (in issue order, which
	// is ID order here).
	lo, hi := 1000, 1200
	bBios, bReqs := b.BioSlice(), b.RequestSlice()
	for i := lo; i <= hi; i++ {
		j := hi - (i - lo)
		if j <= i {
			break
		}
		ri, rj := &bReqs[i], &bReqs[j]
		ri.Issue, rj.Issue = rj.Issue, ri.Issue
	}
	for k := range bBios {
		bi := &bBios[k]
		bi.Issue = bReqs[bi.Request-1].Issue
	}
	b = FromData(b.Meta, bBios, bReqs, nil)
	// Expected stretch: positions of the bios of those requests in real order.
	r := Compare(a, b, Options{})
	o := r.DispatchOrder
	if o.Divergences != 1 {
		t.Fatalf("divergences %d, want 1: %+v", o.Divergences, o.Ranked)
	}
	d := o.Ranked[0]
	first, last := -1, -1
	for pos, bi := range o.RealSequence {
		req := a.BioAt(int(bi)).Request
		if req >= uint64(lo+1) && req <= uint64(hi+1) {
			if first < 0 {
				first = pos
			}
			last = pos
		}
	}
	if d.First != first || d.Last != last {
		t.Errorf("divergence %d..%d, want %d..%d", d.First, d.Last, first, last)
	}
	if d.RealStart != a.RequestAt(lo).Issue || d.RealEnd != a.RequestAt(hi).Issue {
		t.Errorf("real span %s..%s, want %s..%s", d.RealStart, d.RealEnd, a.RequestAt(lo).Issue, a.RequestAt(hi).Issue)
	}
	if o.FirstDivergence == nil || o.FirstDivergence.Position != first {
		t.Errorf("first divergence %+v, want position %d", o.FirstDivergence, first)
	}
	if o.KendallTau >= 1 || o.KendallTau < 0.9 {
		t.Errorf("tau %v", o.KendallTau)
	}
}

// TestSwappedCgroups: in one stretch the prediction serves the two
// cgroups' bios in the opposite order; the divergence names it and the
// served lists differ.
func TestSwappedCgroups(t *testing.T) {
	var rb []trace.Bio
	idx := map[uint32]uint32{}
	for i := 0; i < 3000; i++ {
		pid := uint32(1 + i%2)
		tm := trace.Time(i) * 1000
		rb = append(rb, trace.Bio{PID: pid, Index: idx[pid], Cgroup: uint64(10 * pid), Bytes: 4096, Queue: tm, Issue: tm, Done: tm + 500})
		idx[pid]++
	}
	pb := append([]trace.Bio(nil), rb...)
	// Positions 1000..1399: the prediction serves all of cgroup 10 first,
	// then all of cgroup 20.
	var c10, c20 []int
	for i := 1000; i < 1400; i++ {
		if pb[i].Cgroup == 10 {
			c10 = append(c10, i)
		} else {
			c20 = append(c20, i)
		}
	}
	order := append(c10, c20...)
	times := make([]trace.Time, len(order))
	for k := range order {
		times[k] = rb[1000+k].Issue
	}
	for k, i := range order {
		pb[i].Issue = times[k]
		pb[i].Done = times[k] + 500
	}
	r := Compare(FromData(trace.Meta{}, rb, nil, nil), FromData(trace.Meta{}, pb, nil, nil), Options{})
	o := r.DispatchOrder
	if o.Divergences != 1 {
		t.Fatalf("divergences %d: %+v", o.Divergences, o.Ranked)
	}
	d := o.Ranked[0]
	if d.First < 1000 || d.Last > 1399 || d.First > 1010 || d.Last < 1390 {
		t.Errorf("stretch %d..%d, want about 1000..1399", d.First, d.Last)
	}
	// In the first half of the stretch the prediction served cgroup 10 only.
	half := served(r.PredSide, o.PredictedSequence[1000:1200])
	if len(half.Cgroups) != 1 || half.Cgroups[0].ID != 10 {
		t.Errorf("predicted first half served %+v", half.Cgroups)
	}
}

package device

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// DepthCurve is the latency factor of one operation class and size band
// as a function of the load (NonRotational.Curves): Factors[i] at Depths[i]
// requests on the device (the load measure of the model:
// NonRotational.load), multiplying the class's unsaturated latency
// Base+PerByte*bytes. Version 5 on.
//
// Between two depths the factor is interpolated linearly; below the first
// depth and above the last one it follows the shape of the model's shared
// factor (NonRotational.measured to the class's SatExp) from the nearest
// point, so that a depth the capture did not show for this size is
// extrapolated as the capture's other requests saw the device behave.
type DepthCurve struct {
	// Op is the class: "read" or "write" (the flushes of "other" are
	// timed by flushLatency, without a load factor).
	Op string `json:"op"`
	// Sequential: the curve times the requests of the class that continue
	// a stream (OpTiming.Seq's test), the others those that do not; a
	// class with curves of one locality only times both by them.
	Sequential bool `json:"sequential,omitempty"`
	// Bytes is the band's size, bytes: the geometric mean of the sizes
	// of the requests it was fitted on (a band holds the sizes within a
	// factor sqrt(2) of a power of two times 4 KiB).
	Bytes   uint32    `json:"bytes"`
	Depths  []int     `json:"depths"`  // rising, at least 1
	Factors []float64 `json:"factors"` // factor at Depths[i], > 0
	N       int       `json:"n"`       // requests it was fitted on
	// Residual, when set, is the residual table of the band's requests
	// (multipliers of the latency with the curve's factor, mean about
	// 1): it replaces the class's Residual and ByInflight for the
	// requests nearest this band in log size. A class's pooled table
	// spreads a stall of its 4 KiB requests (hundreds of times their
	// latency) over its 1 MiB ones.
	Residual Quantiles `json:"residual,omitzero"`
	// ByInflight, when set, holds the band's residual tables by load
	// bucket (InflightBucket) where it had at least minBucket requests;
	// an empty or missing entry falls back to Residual. A stall of the
	// host costs a request a time, not a multiple of its latency: 200 ms
	// is 200 times a 1 MiB read at depth 1 and 3 times one at depth 64.
	ByInflight []Quantiles `json:"residual_by_inflight,omitempty"`
}

// Bounds of the depth curves (Validate): at most maxCurves curves of at
// most maxCurvePoints points each.
const (
	maxCurves      = 64
	maxCurvePoints = 1024
	// maxInflightBuckets bounds DepthCurve.ByInflight: the buckets of
	// loads up to maxParallelism (InflightBucket(10240) = 14).
	maxInflightBuckets = 15
)

// curveOp maps DepthCurve.Op to a class.
func curveOp(s string) (Op, bool) {
	switch s {
	case "read":
		return OpRead, true
	case "write":
		return OpWrite, true
	}
	return 0, false
}

// validateCurves reports the first inconsistency of n's depth curves and
// depth window, or nil.
func (n *NonRotational) validateCurves(version int) error {
	if n.DepthWindow < 0 || n.DepthWindow > MaxServiceTime {
		return fmt.Errorf("nonrotational depth_window_ns %d not in 0..%d (device.MaxServiceTime)", n.DepthWindow, MaxServiceTime)
	}
	if (n.DepthWindow > 0 || len(n.Curves) > 0) && version < 5 {
		return fmt.Errorf("nonrotational depth_window_ns or depth_curves in a version %d model", version)
	}
	if len(n.Curves) > maxCurves {
		return fmt.Errorf("nonrotational depth_curves: %d curves, at most %d", len(n.Curves), maxCurves)
	}
	for i, c := range n.Curves {
		o, ok := curveOp(c.Op)
		if !ok {
			return fmt.Errorf("nonrotational depth_curves[%d]: op %q, want \"read\" or \"write\"", i, c.Op)
		}
		if c.Bytes == 0 {
			return fmt.Errorf("nonrotational depth_curves[%d]: bytes 0", i)
		}
		if i > 0 {
			p := &n.Curves[i-1]
			po, _ := curveOp(p.Op)
			if po > o || (po == o && (p.Sequential && !c.Sequential || p.Sequential == c.Sequential && p.Bytes >= c.Bytes)) {
				return fmt.Errorf("nonrotational depth_curves[%d]: not after depth_curves[%d] (want read before write, random before sequential, then rising bytes)", i, i-1)
			}
		}
		if len(c.Depths) == 0 || len(c.Depths) != len(c.Factors) || len(c.Depths) > maxCurvePoints {
			return fmt.Errorf("nonrotational depth_curves[%d]: %d depths and %d factors, want as many, 1 to %d", i, len(c.Depths), len(c.Factors), maxCurvePoints)
		}
		for j, d := range c.Depths {
			if d < 1 || d > maxParallelism || (j > 0 && d <= c.Depths[j-1]) {
				return fmt.Errorf("nonrotational depth_curves[%d]: depths[%d] %d not rising within 1..%d", i, j, d, maxParallelism)
			}
		}
		for j, f := range c.Factors {
			if !(f > 0) || f > maxFactor {
				return fmt.Errorf("nonrotational depth_curves[%d]: factors[%d] %v not in (0, %g]", i, j, f, float64(maxFactor))
			}
		}
		if len(c.ByInflight) > maxInflightBuckets {
			return fmt.Errorf("nonrotational depth_curves[%d]: %d residual_by_inflight tables, at most %d", i, len(c.ByInflight), maxInflightBuckets)
		}
		for _, q := range append([]Quantiles{c.Residual}, c.ByInflight...) {
			if err := q.validate(); err != nil {
				return fmt.Errorf("nonrotational depth_curves[%d] residual: %w", i, err)
			}
			for _, x := range q.X {
				if !(x >= 0) || x > maxFactor {
					return fmt.Errorf("nonrotational depth_curves[%d] residual: multiplier %v not in [0, %g]", i, x, float64(maxFactor))
				}
			}
		}
	}
	return nil
}

// load returns the load measure a request issued with k requests on the
// device (itself included) takes, peak being the decaying peak of the
// requests on the device over DepthWindow (depthPeak): k without a
// DepthWindow, else the larger of k and peak rounded up. The count at the
// issue alone misreads a device that completes in bunches: a closed loop
// resubmits after each bunch, so its first requests find few on a device
// that it keeps full (recorded-fs/raw-sweep-none: 4 KiB reads at iodepth
// 16 are issued with 1 to 16 on the device in equal parts, and all take
// about 460 us, where the qd1 ones, all issued with 1, take 69 us). The
// peak puts every request of such a resubmission at the depth the loop
// keeps, as a replay that completes them one by one issues them; an
// average would put them below it, the more so the longer the device
// stays drained between bunches.
func (n *NonRotational) load(k int, peak float64) int {
	if n.DepthWindow <= 0 {
		return k
	}
	return max(k, int(math.Ceil(min(peak, maxParallelism)-1e-9)))
}

// factor returns the load factor of a request of class o and size bytes at
// load k (NonRotational.load's), as the class takes it: its depth curves
// where it has some, else the shared factor to its SatExp. avg and slow
// are the averages saturationAvg reads (SaturatedBelow).
func (n *NonRotational) factor(o Op, bytes uint32, k int, seq bool, avg, slow float64) float64 {
	ot := n.op(o)
	shared := func(k int) float64 { return ot.sat(n.saturationAvg(k, avg, slow)) }
	if len(n.Curves) == 0 || o == OpOther {
		return shared(k)
	}
	loc := n.curveLocality(o, seq)
	lo, hi := -1, -1 // the curves of o around bytes
	for i := range n.Curves {
		if co, _ := curveOp(n.Curves[i].Op); co != o || n.Curves[i].Sequential != loc {
			continue
		}
		if n.Curves[i].Bytes <= bytes {
			lo = i
		} else if hi < 0 {
			hi = i
		}
	}
	switch {
	case lo < 0 && hi < 0:
		return shared(k)
	case lo < 0:
		return n.Curves[hi].at(k, shared)
	case hi < 0 || n.Curves[lo].Bytes == bytes:
		return n.Curves[lo].at(k, shared)
	}
	a, b := &n.Curves[lo], &n.Curves[hi]
	t := (math.Log(float64(bytes)) - math.Log(float64(a.Bytes))) / (math.Log(float64(b.Bytes)) - math.Log(float64(a.Bytes)))
	fa, fb := a.at(k, shared), b.at(k, shared)
	return fa + (fb-fa)*t
}

// curveLocality returns the locality (DepthCurve.Sequential) of the
// curves that time a request of class o continuing a stream (seq) or
// not: its own where o has curves of it, else the other.
func (n *NonRotational) curveLocality(o Op, seq bool) bool {
	var has [2]bool
	for i := range n.Curves {
		if co, _ := curveOp(n.Curves[i].Op); co == o {
			has[b2i(n.Curves[i].Sequential)] = true
		}
	}
	if has[b2i(seq)] {
		return seq
	}
	return !seq
}

// hasSeqCurves reports whether some curve is of sequential requests.
func (n *NonRotational) hasSeqCurves() bool {
	for i := range n.Curves {
		if n.Curves[i].Sequential {
			return true
		}
	}
	return false
}

// curveResidual returns the residual table of the curve of class o and
// its locality (curveLocality) nearest bytes in log size at load k, empty
// when there is none.
func (n *NonRotational) curveResidual(o Op, bytes uint32, k int, seq bool) Quantiles {
	best := n.nearestCurve(o, bytes, seq)
	if best < 0 {
		return Quantiles{}
	}
	c := &n.Curves[best]
	if b := InflightBucket(k); b < len(c.ByInflight) && c.ByInflight[b].Len() > 0 {
		return c.ByInflight[b]
	}
	return c.Residual
}

// nearestCurve returns the index of the curve of class o and the
// locality that times seq (curveLocality) nearest bytes in log size (the
// first of two as near), -1 when o has none.
func (n *NonRotational) nearestCurve(o Op, bytes uint32, seq bool) int {
	best, bestR := -1, math.Inf(1)
	b := float64(max(bytes, 1))
	loc := n.curveLocality(o, seq)
	for i := range n.Curves {
		if co, _ := curveOp(n.Curves[i].Op); co != o || n.Curves[i].Sequential != loc {
			continue
		}
		c := float64(n.Curves[i].Bytes)
		if r := max(b, c) / min(b, c); r < bestR {
			best, bestR = i, r
		}
	}
	return best
}

// at returns the curve's factor at load k: interpolated linearly between
// its depths, and beyond them the nearest point's factor times shared(k)
// over shared at that point.
func (c *DepthCurve) at(k int, shared func(int) float64) float64 {
	i := sort.SearchInts(c.Depths, k) // first depth >= k
	switch {
	case i < len(c.Depths) && c.Depths[i] == k:
		return c.Factors[i]
	case i == 0:
		return c.Factors[0] * ratio(shared(k), shared(c.Depths[0]))
	case i == len(c.Depths):
		l := len(c.Depths) - 1
		return c.Factors[l] * ratio(shared(k), shared(c.Depths[l]))
	}
	d0, d1 := float64(c.Depths[i-1]), float64(c.Depths[i])
	t := (float64(k) - d0) / (d1 - d0)
	return c.Factors[i-1] + (c.Factors[i]-c.Factors[i-1])*t
}

// ratio returns a/b, 1 when b is not positive.
func ratio(a, b float64) float64 {
	if !(b > 0) {
		return 1
	}
	return a / b
}

// sizeBand returns the band of a request of size bytes (DepthCurve.Bytes):
// log2(bytes/4096) rounded, at least 0.
func sizeBand(bytes uint32) int {
	if bytes <= 4096 {
		return 0
	}
	return int(math.Round(math.Log2(float64(bytes) / 4096)))
}

// depthPeak is the decaying peak of the requests on a device, as
// NonRotational.DepthWindow reads it: the most requests held at once,
// decaying by exp(-dt/window) while fewer are held (a drain shorter than
// a small part of the window leaves it within one request of the peak).
// Timing and the fit (capture's setDepthPeak) update it alike, before
// each issue and each completion.
type depthPeak struct {
	v  float64
	at int64
	on bool
}

// advance brings the peak to now, k requests having been on the device
// since the last update: max(peak*exp(-dt/window), k); the first update
// starts it at 0 (an idle device).
func (a *depthPeak) advance(now int64, k int, window time.Duration) {
	if !a.on {
		a.v, a.at, a.on = 0, now, true
		return
	}
	if dt := now - a.at; dt > 0 {
		a.v = max(a.v*math.Exp(-float64(dt)/float64(window)), float64(k))
		a.at = now
	}
}

// setDepthPeak sets every sample's peak: the decaying peak of the
// requests on the device over window (depthPeak) at its issue, walking
// the capture's events as a Timing driven by them (predict) would.
func (c *capture) setDepthPeak(window time.Duration) {
	if c.peakWindow == window {
		return
	}
	pos := make([]int, len(c.rqs))
	for i := range pos {
		pos[i] = -1
	}
	for i, s := range c.samples {
		pos[s.req] = i
	}
	var a depthPeak
	on := 0
	for _, e := range c.events {
		a.advance(int64(e.t), on, window)
		if e.done {
			on--
			continue
		}
		on++
		if i := pos[e.req]; i >= 0 {
			c.samples[i].peak = a.v
		}
	}
	c.peakWindow = window
}

// minCurveGroup is the fewest requests of a class, size band and load for
// that load to be a point of the band's curve.
const minCurveGroup = 50

// fitCurves gives n depth curves fitted on ss, whose k is the load
// measure n times them by (NonRotational.load):
//
//  1. The reads and the writes (flushes and "other" left out) are grouped
//     by locality (continuing a stream or not, sample.seq), size band
//     (sizeBand) and load: on a loop device a write continuing a stream
//     takes half the time of a random one at low depths (a probe here:
//     4 KiB writes at qd1 51 us sequential, 108 us random), where the
//     reads of either kind take about the same.
//  2. Each group of at least minCurveGroup requests is a point of its
//     band's curve: the factor is the sum of their D2C over the sum of
//     their unsaturated latencies (Base+PerByte*bytes), so that the
//     model's mean latency of the group is the capture's; then the
//     factors of a curve are made nondecreasing in the load (pooling
//     adjacent points that fall, nondecreasing): a device is not faster
//     with more requests on it, and a fall says where in a bunch a
//     request was issued, not the load (recorded-fs rig capture
//     fs-mqdl-fsync1-vs-seqread: 1.25 MiB reads issued with 2 to 9 on
//     the device took 6.5 to 5.6 ms, the last issued of each
//     resubmission the shortest, as they completed together).
//  3. A band's size is the geometric mean of its requests' sizes.
//  4. The residual tables are fitted again on D2C over the latency with
//     the curves (by in-flight bucket where n has such tables).
func fitCurves(n *NonRotational, ss []sample, nq int) {
	type key struct {
		op   Op
		seq  bool
		band int
	}
	type point struct{ y, u float64 }
	type band struct {
		logs float64
		n    int
		pts  map[int]*point
	}
	bands := map[key]*band{}
	for _, s := range ss {
		if s.op == OpOther {
			continue
		}
		kk := key{s.op, s.seq, sizeBand(s.bytes)}
		b := bands[kk]
		if b == nil {
			b = &band{pts: map[int]*point{}}
			bands[kk] = b
		}
		b.logs += math.Log(float64(max(s.bytes, 1)))
		b.n++
		p := b.pts[s.k]
		if p == nil {
			p = &point{}
			b.pts[s.k] = p
		}
		p.y += s.d2c
		p.u += n.op(s.op).mean(s.bytes)
	}
	// Count per point to apply minCurveGroup.
	cnt := map[key]map[int]int{}
	for _, s := range ss {
		if s.op == OpOther {
			continue
		}
		kk := key{s.op, s.seq, sizeBand(s.bytes)}
		if cnt[kk] == nil {
			cnt[kk] = map[int]int{}
		}
		cnt[kk][s.k]++
	}
	keys := make([]key, 0, len(bands))
	for k := range bands {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.op != b.op {
			return int(a.op) - int(b.op)
		}
		if a.seq != b.seq {
			return b2i(a.seq) - b2i(b.seq)
		}
		return a.band - b.band
	})
	var curves []DepthCurve
	for _, kk := range keys {
		b := bands[kk]
		c := DepthCurve{Op: kk.op.String(), Sequential: kk.seq, Bytes: uint32(math.Round(math.Exp(b.logs / float64(b.n))))}
		var ds []int
		for d := range b.pts {
			if cnt[kk][d] >= minCurveGroup && b.pts[d].u > 0 && b.pts[d].y > 0 {
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		ws := make([]float64, 0, len(ds))
		for _, d := range ds {
			c.Depths = append(c.Depths, d)
			c.Factors = append(c.Factors, b.pts[d].y/b.pts[d].u)
			ws = append(ws, b.pts[d].u)
			c.N += cnt[kk][d]
		}
		nondecreasing(c.Factors, ws)
		for i := range c.Factors {
			c.Factors[i] = min(c.Factors[i], maxFactor)
		}
		if len(c.Depths) == 0 || len(curves) == maxCurves {
			continue
		}
		if l := len(c.Depths); l > maxCurvePoints { // keep every l/max-th
			var d2 []int
			var f2 []float64
			for j := 0; j < l; j += (l + maxCurvePoints - 1) / maxCurvePoints {
				d2, f2 = append(d2, c.Depths[j]), append(f2, c.Factors[j])
			}
			c.Depths, c.Factors = d2, f2
		}
		// Bands whose geometric means round to one size: keep the first.
		if l := len(curves); l > 0 && curves[l-1].Op == c.Op && curves[l-1].Sequential == c.Sequential && curves[l-1].Bytes >= c.Bytes {
			continue
		}
		curves = append(curves, c)
	}
	n.Curves = curves
	// The residuals with the curves.
	for o := range numOps {
		t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]
		if t == nil || Op(o) == OpOther {
			continue
		}
		var r []float64
		var byB inflightResiduals
		for _, s := range ss {
			if s.op != Op(o) {
				continue
			}
			if m := t.mean(s.bytes) * n.sampleFactor(s); m > 0 {
				r = append(r, s.d2c/m)
				byB.add(InflightBucket(s.k), s.d2c/m)
			}
		}
		if len(r) == 0 {
			continue
		}
		t.Residual = QuantilesOf(r, nq)
		if t.ByInflight != nil {
			t.ByInflight = byB.tables(nq)
		}
	}
	// Each curve's own residuals: of the requests nearest it.
	byC := make([][]float64, len(n.Curves))
	byCB := make([]inflightResiduals, len(n.Curves))
	for _, s := range ss {
		if s.op == OpOther {
			continue
		}
		best := n.nearestCurve(s.op, s.bytes, s.seq)
		if m := n.op(s.op).mean(s.bytes) * n.sampleFactor(s); best >= 0 && m > 0 {
			byC[best] = append(byC[best], s.d2c/m)
			byCB[best].add(min(InflightBucket(s.k), maxInflightBuckets-1), s.d2c/m)
		}
	}
	for i, rs := range byC {
		if len(rs) >= minBucket {
			n.Curves[i].Residual = QuantilesOf(rs, max(nq/4, 16))
		}
		if len(byCB[i]) > 1 {
			n.Curves[i].ByInflight = byCB[i].tables(nq)
		}
	}
}

// nondecreasing replaces fs by its weighted least-squares fit among the
// nondecreasing sequences (pool adjacent violators), weights ws > 0: the
// mean of each pooled run weighted by ws. With ws the points' summed
// unsaturated latencies, a pooled run's factor is still the sum of its
// D2C over the sum of those latencies.
func nondecreasing(fs, ws []float64) {
	type block struct {
		v, w float64
		n    int
	}
	var bs []block
	for i := range fs {
		bs = append(bs, block{fs[i], ws[i], 1})
		for len(bs) > 1 && bs[len(bs)-2].v > bs[len(bs)-1].v {
			a, b := bs[len(bs)-2], bs[len(bs)-1]
			bs = bs[:len(bs)-2]
			bs = append(bs, block{(a.v*a.w + b.v*b.w) / (a.w + b.w), a.w + b.w, a.n + b.n})
		}
	}
	i := 0
	for _, b := range bs {
		for range b.n {
			fs[i] = b.v
			i++
		}
	}
}

// minCurveSpan is the least ratio of a curve's deepest load to its
// shallowest for Calibrate's step 5 to consider a model with depth
// curves (curvesSpan).
const minCurveSpan = 8

// curvesSpan reports whether some depth curve of n spans loads a factor
// minCurveSpan apart: a capture that shows a size band over a range of
// depths, as a sweep does (recorded-fs/raw-sweep-none: 1 to 64; a probe:
// 1 to 64 for every cell). Over a narrower range the curves say little
// the shared factor does not, and they follow where in a bunch the
// capture issued its requests: the rig capture fs-mqdl-fsync1-vs-seqread
// (1.25 MiB reads at loads 2 to 9), whose in-sample and cross-validated
// demerits fall from 8.0 % to 4.0 % and 46 % to 39 % with them, replays
// its reader 17 % slow with them and 9 % without.
func (n *NonRotational) curvesSpan() bool {
	for _, c := range n.Curves {
		if c.Depths[len(c.Depths)-1] >= minCurveSpan*c.Depths[0] {
			return true
		}
	}
	return false
}

// withLoad returns a copy of ss with each sample's k replaced by the load
// measure of a model with DepthWindow window (NonRotational.load; the
// samples' peak set for it).
func withLoad(ss []sample, window time.Duration) []sample {
	n := &NonRotational{DepthWindow: window}
	out := slices.Clone(ss)
	for i := range out {
		out[i].k = n.load(out[i].k, out[i].peak)
	}
	return out
}

package device

import (
	"math"
	"sort"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// fitNonRotational fits a non-rotational model to samples.
//
//  1. Start with no saturation (factor 1 at every k).
//  2. Per operation class, fit D2C/factor(k) = Base + PerByte*bytes by
//     least squares (PerByte 0 unless two sizes were each seen at least
//     minGroup times, or when the slope comes out negative).
//  3. Group the ratios D2C/(Base+PerByte*bytes) by k (groups of at least
//     minGroup requests) and fit their means,
//     weighted by group size, with c*(1 + Slope*max(0, k-P)) for every
//     P from 1 to the largest k (least squares in c and c*Slope, Slope >= 0),
//     keeping the P with the smallest error; fold c into Base and PerByte.
//  4. Repeat 2-3 until P stops changing (at most 8 rounds).
//  5. For k = 1, 2, ... while at least minGroup requests saw k, the mean
//     of D2C/(unsaturated mean) at k becomes the measured factor at k.
//  6. Residuals D2C/(unsaturated mean * factor(k)) per class become the
//     class's quantile table (at most nq+1 entries), and per in-flight
//     bucket (InflightBucket) with at least minBucket requests a table of
//     at most nq/4+1 entries.
func fitNonRotational(ss []sample, nq int) *NonRotational {
	maxK := 1
	for _, s := range ss {
		maxK = max(maxK, s.k)
	}
	n := &NonRotational{Parallelism: maxK}
	var byOp [numOps][]int
	for i, s := range ss {
		byOp[s.op] = append(byOp[s.op], i)
	}
	for round := 0; round < 8; round++ {
		for o := range numOps {
			if len(byOp[o]) == 0 {
				continue
			}
			xs := make([]float64, len(byOp[o]))
			ys := make([]float64, len(byOp[o]))
			for j, i := range byOp[o] {
				xs[j] = float64(ss[i].bytes)
				ys[j] = ss[i].d2c / n.sampleSat(ss[i])
			}
			base, per, _ := fitClass(xs, nil, ys)
			n.setOp(Op(o), &OpTiming{Base: time.Duration(math.Round(base)), PerByte: per, N: len(xs)})
		}
		sum := make([]float64, maxK+1)
		cnt := make([]float64, maxK+1)
		for _, s := range ss {
			m := n.op(s.op).mean(s.bytes)
			if m <= 0 || s.flush() {
				continue
			}
			sum[s.k] += s.d2c / m
			cnt[s.k]++
		}
		for k := range cnt {
			if cnt[k] < minGroup {
				sum[k], cnt[k] = 0, 0
			}
		}
		p, c, slope := fitHinge(sum, cnt)
		for o := range numOps {
			if t := n.op(Op(o)); t != nil && len(byOp[o]) > 0 {
				t.Base = time.Duration(math.Round(float64(t.Base) * c))
				t.PerByte *= c
				t.Ahead *= c
			}
		}
		if slope == 0 {
			p = maxK // no slowdown seen up to the most requests seen at once
		}
		same := p == n.Parallelism && math.Abs(slope-n.Slope) <= 1e-3*max(slope, 1e-9)
		n.Parallelism, n.Slope = p, slope
		if same && round > 0 {
			break
		}
	}
	// Measured factors at the counts seen often enough, from k = 1 on.
	sum := make([]float64, maxK+1)
	cnt := make([]float64, maxK+1)
	for _, s := range ss {
		if m := n.op(s.op).mean(s.bytes) * n.hinge(s.k); m > 0 && !s.flush() {
			sum[s.k] += s.d2c / m
			cnt[s.k]++
		}
	}
	for k := 1; k <= maxK && cnt[k] >= minGroup; k++ {
		n.Factors = append(n.Factors, n.hinge(k)*sum[k]/cnt[k])
	}
	fitSatExp(n, ss, byOp)
	for o := range numOps {
		if len(byOp[o]) == 0 {
			continue
		}
		t := n.op(Op(o))
		r := make([]float64, 0, len(byOp[o]))
		var byB inflightResiduals
		for _, i := range byOp[o] {
			s := ss[i]
			if m := t.mean(s.bytes) * t.sat(n.sampleSat(s)); m > 0 {
				r = append(r, s.d2c/m)
				byB.add(InflightBucket(s.k), s.d2c/m)
			}
		}
		t.Residual = QuantilesOf(r, nq)
		if len(byB) > 1 { // one bucket only: Residual says it all
			t.ByInflight = byB.tables(nq)
		}
	}
	return n
}

// minSaturatedBelow is the least lowDepth for which a model holds the
// device's throughput below it (NonRotational.SaturatedBelow): a device
// that spent a tenth of its busy time with fewer than 4 requests on it
// shows its low-depth behaviour itself.
const minSaturatedBelow = 4

// saturationCycles is the slow average of NonRotational.SaturatedBelow in
// SaturationWindows (mean D2Cs): the regime test must span many
// completion cycles (a loop device completes in bunches about one mean
// D2C apart, and between two the device looks drained while its workload
// resubmits), so that only a lower operating point held for longer, as
// another scheduler holds it, passes it.
const saturationCycles = 10

// lowDepth returns the fewest requests the capture kept on the device for
// nine tenths of the time the device was busy (one request or more on it,
// counted from the samples' issues and completions), 0 without samples. A
// time measure, not one of the issues: a bursty workload issues most of
// its requests in bursts of many while the device spends most of its time
// with one or two (it is not saturated), and a closed loop on a device
// that completes in bunches issues the first requests of each
// resubmission with few left on the device while the device stays full.
// The model compares it with a time average too (Timing's averaged
// depth).
func lowDepth(ss []sample) int {
	// The issues and completions sorted apart (the samples come in issue
	// order, their completions nearly so) and swept as CoverageOf sweeps
	// them.
	var issues, dones []trace.Time
	for _, s := range ss {
		if s.done >= s.issue {
			issues = append(issues, s.issue)
			dones = append(dones, s.done)
		}
	}
	if len(issues) == 0 {
		return 0
	}
	sortTimes(issues)
	sortTimes(dones)
	var at []trace.Time // at[k]: time spent with k requests on the device
	sweepLoad(issues, dones, func(from, to trace.Time, k int) {
		if k > 0 {
			for len(at) <= k {
				at = append(at, 0)
			}
			at[k] += to - from
		}
	}, nil)
	var busy trace.Time
	for _, t := range at {
		busy += t
	}
	var below trace.Time
	for k := 1; k < len(at); k++ {
		if below+at[k] > busy/10 {
			return k
		}
		below += at[k]
	}
	return max(len(at)-1, 0)
}

// minGroup is the fewest requests seen at one in-flight count for that
// count to inform the saturation fit.
const minGroup = 20

// minAheadGroup is the fewest requests of a class with more bytes ahead
// than its median request (and with at most as many) for fitClass to fit
// the class's bytes-ahead term. Fewer than minGroup: under a scheduler
// that serves one queue at a time, the requests issued behind another
// are rare, and each says much (in recorded-fs/fs-bfq-fsync-vs-seqread 14
// writes of 6425 and 8 flushes of 4286 had a read on the device, and
// waited 1.8 and 1.5 ms where the others took 0.11 and 0.27: 0.5 and 0.95
// ns per byte ahead); Calibrate's step 5 keeps the term only where it
// lowers the demerit.
const minAheadGroup = 8

// inflightResiduals gathers residual multipliers by in-flight bucket
// (InflightBucket of the count on the device at their issue).
type inflightResiduals [][]float64

// add files x under bucket bk.
func (b *inflightResiduals) add(bk int, x float64) {
	for len(*b) <= bk {
		*b = append(*b, nil)
	}
	(*b)[bk] = append((*b)[bk], x)
}

// tables returns a residual table per bucket (Quantiles of max(nq/4, 16)
// entries), a zero one for a bucket of fewer than minBucket samples.
func (b inflightResiduals) tables(nq int) []Quantiles {
	q := make([]Quantiles, len(b))
	for bk, rs := range b {
		if len(rs) >= minBucket {
			q[bk] = QuantilesOf(rs, max(nq/4, 16))
		}
	}
	return q
}

// minBucket is the fewest requests of an in-flight bucket for it to get
// its own residual table.
const minBucket = 200

// fitClass fits one class's latencies ys against the requests' sizes xs
// and the bytes ahead of them as (nil: no bytes-ahead term), returning
// Base, PerByte and Ahead, ns and ns per byte, all at least 0:
//
//  1. Without the term: y = Base + PerByte*x by fitLine when two sizes
//     were each seen minGroup times (twoSizes), else Base = mean(y).
//  2. With as, when at least minAheadGroup requests had more bytes ahead
//     than the median request of the class and minAheadGroup had at most
//     as many: y = Base + PerByte*x + Ahead*a by least
//     squares (the x column only as in 1), kept when every coefficient
//     is at least 0 and Ahead above 0; a negative PerByte is dropped and
//     the rest refitted. Otherwise 1's line.
func fitClass(xs, as, ys []float64) (base, per, ahead float64) {
	sizes := twoSizes(xs)
	base, per = fitLine(xs, ys)
	if !sizes {
		base, per = max(mean(ys), 0), 0
	}
	if as == nil {
		return base, per, 0
	}
	// Enough spread in the bytes ahead: minAheadGroup samples above the
	// median ahead and minAheadGroup at or below it.
	am := make([]float64, len(as))
	copy(am, as)
	sortFloats(am)
	med := am[len(am)/2]
	hi := len(am) - sort.SearchFloat64s(am, math.Nextafter(med, math.Inf(1)))
	if hi < minAheadGroup || len(am)-hi < minAheadGroup {
		return base, per, 0
	}
	// Columns scaled to about 1 for the normal equations.
	sx, sa := max(mean(xs), 1), max(mean(as), 1)
	for _, withX := range []bool{sizes, false} {
		X := make([][]float64, len(ys))
		for i := range ys {
			if withX {
				X[i] = []float64{1, xs[i] / sx, as[i] / sa}
			} else {
				X[i] = []float64{1, as[i] / sa}
			}
		}
		beta, _ := leastSquares(X, ys)
		b0, bx, ba := beta[0], 0.0, beta[len(beta)-1]/sa
		if withX {
			bx = beta[1] / sx
		}
		if withX && bx < 0 {
			continue // refit without the size
		}
		if b0 < 0 || !(ba > 0) || math.IsInf(ba, 0) {
			break
		}
		return b0, bx, ba
	}
	return base, per, 0
}

// fitLine fits y = a + b*x by least squares with b >= 0 and a >= 0.
func fitLine(xs, ys []float64) (a, b float64) {
	mx, my := mean(xs), mean(ys)
	sxx, sxy := 0.0, 0.0
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx <= 1e-12*max(mx*mx, 1)*float64(len(xs)) || sxy <= 0 {
		return max(my, 0), 0
	}
	b = sxy / sxx
	a = my - b*mx
	if a < 0 { // through the origin
		sx2, sxy0 := 0.0, 0.0
		for i := range xs {
			sx2 += xs[i] * xs[i]
			sxy0 += xs[i] * ys[i]
		}
		return 0, max(sxy0/sx2, 0)
	}
	return a, b
}

// fitHinge fits the weighted group means sum[k]/cnt[k] with
// c*(1 + slope*max(0, k-p)) and returns the best p (1 to len-1), c and
// slope >= 0. Without growth it returns p = the largest k seen, slope 0.
//
// Only the groups with samples are visited, in order of k (the sums are
// the same, term for term, as over every k skipping empty ones), so the
// cost is the number of candidate p times the number of non-empty groups:
// a capture whose in-flight count climbs to tens of thousands (requests
// whose completions are missing) has few groups of minGroup samples each.
func fitHinge(sum, cnt []float64) (p int, c, slope float64) {
	var gs []hingeGroup
	maxK := 0
	w, sw := 0.0, 0.0
	for k := range sum {
		if cnt[k] > 0 {
			maxK = k
			w += cnt[k]
			sw += sum[k]
			gs = append(gs, hingeGroup{k: float64(k), n: cnt[k], m: sum[k] / cnt[k]})
		}
	}
	if w == 0 {
		return max(maxK, 1), 1, 0
	}
	// No growth: c is the weighted mean of the ratios.
	bestP, bestC, bestS := maxK, sw/w, 0.0
	bestErr := hingeErr(gs, float64(maxK), bestC, 0)
	for p := 1; p < maxK; p++ {
		// Weighted least squares of m_k = c + e*h_k, h_k = max(0, k-p).
		fp := float64(p)
		var s0, sh, shh, sm, shm float64
		for _, g := range gs {
			h := max(0, g.k-fp)
			s0 += g.n
			sh += g.n * h
			shh += g.n * h * h
			sm += g.n * g.m
			shm += g.n * h * g.m
		}
		det := s0*shh - sh*sh
		if det <= 0 {
			continue
		}
		e := (s0*shm - sh*sm) / det
		cc := (sm - e*sh) / s0
		if e <= 0 || cc <= 0 {
			continue
		}
		if err := hingeErr(gs, fp, cc, e/cc); err < bestErr*(1-1e-9) {
			bestP, bestC, bestS, bestErr = p, cc, e/cc, err
		}
	}
	return bestP, bestC, bestS
}

// hingeGroup is one in-flight count k with samples: n of them, mean ratio m.
type hingeGroup struct{ k, n, m float64 }

// hingeErr is the weighted squared error of the groups' means against
// c*(1 + slope*max(0, k-p)).
func hingeErr(gs []hingeGroup, p, c, slope float64) float64 {
	e := 0.0
	for _, g := range gs {
		d := g.m - c*(1+slope*max(0, g.k-p))
		e += g.n * d * d
	}
	return e
}

// fitRotational fits a rotational model to the samples whose service time
// and head position are known.
//
//  1. Split them into sequential accesses (0 to seqWindow sectors forward
//     of the head) and random ones.
//  2. For each candidate boundary between short and long seeks (the 5th to
//     95th percentiles of the random distances, and none), fit the service
//     times by least squares on: sequential, random, random*sqrt(d) (short),
//     long, long*d, bytes, random write; keep the boundary with the least
//     squared error. Negative costs are clamped to 0.
//  3. With seek, transfer and write costs fixed, the rest e of a random
//     access's service time is overhead plus positional delay: the
//     revolution is sqrt(12*var(e)) (e uniform over a revolution), the
//     overhead mean(e) - revolution/2 (at least 0: a rest that is not
//     uniform can make it negative), and the residual table the quantiles
//     of e - overhead. Sequential accesses likewise give SeqBase = mean of
//     their rest (at least 0) and SeqResidual the quantiles of the rest
//     less SeqBase.
func fitRotational(ss []sample, seqWindow uint64, nq int) *Rotational {
	r := &Rotational{SeqWindow: seqWindow}
	var use []sample
	for _, s := range ss {
		if s.hasPrev {
			use = append(use, s)
		}
	}
	r.N = len(use)
	if len(use) == 0 {
		return r
	}
	var dists []float64
	for _, s := range use {
		if !r.sequential(s.head, s.sector) {
			dists = append(dists, float64(distance(s.head, s.sector)))
		}
	}
	sortFloats(dists)
	cands := []uint64{0} // 0: no long seeks
	for pc := 5; pc <= 95 && len(dists) > 0; pc += 5 {
		b := uint64(quantileSorted(dists, float64(pc)/100))
		if b > 0 && b != cands[len(cands)-1] {
			cands = append(cands, b)
		}
	}
	// Two passes: ordinary least squares, then weighted by the inverse
	// residual variance of each path (sequential accesses have no
	// rotational delay and so pin the transfer cost down).
	seqW, rndW := 1.0, 1.0
	var best []float64
	var bestB uint64
	X := make([][]float64, len(use))
	y := make([]float64, len(use))
	for pass := 0; pass < 2; pass++ {
		bestRSS := math.Inf(1)
		for _, b := range cands {
			for i, s := range use {
				row := make([]float64, 7)
				w := rndW
				if r.sequential(s.head, s.sector) {
					row[0] = 1
					w = seqW
				} else {
					d := distance(s.head, s.sector)
					row[1] = 1
					if b == 0 || d < b {
						row[2] = math.Sqrt(float64(d))
					} else {
						row[3] = 1
						row[4] = float64(d)
					}
					if s.write {
						row[6] = 1
					}
				}
				row[5] = float64(s.bytes)
				for j := range row {
					row[j] *= w
				}
				X[i], y[i] = row, s.service*w
			}
			beta, rss := leastSquares(X, y)
			if rss < bestRSS {
				bestRSS, best, bestB = rss, beta, b
			}
		}
		// Residual variance of each path under the best fit of this pass.
		ss, sr := pathVariance(use, r, best, bestB)
		if ss <= 0 || sr <= 0 {
			break // one path only, or an exact fit: weights change nothing
		}
		seqW, rndW = 1/math.Sqrt(ss), 1/math.Sqrt(sr)
	}
	r.SeekBoundary = bestB
	r.SeekSqrt = max(best[2], 0)
	r.SeekLongPerSector = max(best[4], 0)
	r.SeekLongBase = time.Duration(math.Round(max(best[3], 0)))
	r.PerByte = max(best[5], 0)
	r.Write = time.Duration(math.Round(best[6]))
	if bestB == 0 {
		r.SeekBoundary = 0
	}
	var rnd, seq []float64
	for _, s := range use {
		if r.sequential(s.head, s.sector) {
			seq = append(seq, s.service-r.PerByte*float64(s.bytes))
		} else {
			rnd = append(rnd, s.service-r.randomMean(distance(s.head, s.sector), s.bytes, s.write))
		}
	}
	r.NSeq = len(seq)
	if len(rnd) > 0 {
		rev := math.Sqrt(12 * variance(rnd))
		r.Revolution = time.Duration(math.Round(rev))
		// A rest not uniform over a revolution can give mean - rev/2 < 0:
		// the overhead is then 0 and the residual table carries the rest.
		r.Overhead = time.Duration(math.Round(max(mean(rnd)-rev/2, 0)))
		for i := range rnd {
			rnd[i] -= float64(r.Overhead)
		}
		r.Residual = QuantilesOf(rnd, nq)
	}
	if len(seq) > 0 {
		m := mean(seq)
		r.SeqBase = time.Duration(math.Round(max(m, 0)))
		for i := range seq {
			seq[i] -= float64(r.SeqBase)
		}
		r.SeqResidual = QuantilesOf(seq, nq)
	}
	return r
}

// pathVariance returns the mean squared residual of the sequential and the
// random samples under the coefficients beta (boundary b; see fitRotational).
func pathVariance(use []sample, r *Rotational, beta []float64, b uint64) (seq, rnd float64) {
	var ns, nr float64
	for _, s := range use {
		var pred float64
		if r.sequential(s.head, s.sector) {
			pred = beta[0] + beta[5]*float64(s.bytes)
			e := s.service - pred
			seq += e * e
			ns++
			continue
		}
		d := distance(s.head, s.sector)
		pred = beta[1] + beta[5]*float64(s.bytes)
		if b == 0 || d < b {
			pred += beta[2] * math.Sqrt(float64(d))
		} else {
			pred += beta[3] + beta[4]*float64(d)
		}
		if s.write {
			pred += beta[6]
		}
		e := s.service - pred
		rnd += e * e
		nr++
	}
	if ns > 0 {
		seq /= ns
	}
	if nr > 0 {
		rnd /= nr
	}
	return seq, rnd
}

// twoSizes reports whether at least two sizes occur minGroup times each.
func twoSizes(xs []float64) bool {
	// Captures hold few sizes: count them in a short list until it grows
	// past 32, then in a map.
	type count struct {
		x float64
		n int
	}
	var few []count
	var seen map[float64]int
	n := 0
	for _, x := range xs {
		c := 0
		if seen == nil {
			j := 0
			for j < len(few) && few[j].x != x {
				j++
			}
			if j == len(few) {
				few = append(few, count{x, 0})
			}
			few[j].n++
			c = few[j].n
			if len(few) > 32 {
				seen = make(map[float64]int, 64)
				for _, f := range few {
					seen[f.x] = f.n
				}
			}
		} else {
			seen[x]++
			c = seen[x]
		}
		if c == minGroup {
			n++
			if n == 2 {
				return true
			}
		}
	}
	return false
}

// flatten removes the in-flight dependence of n: no saturation, and the
// residual tables refitted on ss without it. With ahead, the bytes on the
// device ahead of each request measure the load instead (fitClass: each
// class whose samples show them varying gets its OpTiming.Ahead).
func flatten(n *NonRotational, ss []sample, nq int, ahead bool) {
	maxK := 1
	for _, s := range ss {
		maxK = max(maxK, s.k)
	}
	n.Parallelism, n.Slope, n.Factors = maxK, 0, nil
	for o := range numOps {
		t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]
		if t == nil {
			continue
		}
		var r, ys, xs, as []float64
		for _, s := range ss {
			if s.op == Op(o) {
				xs = append(xs, float64(s.bytes))
				ys = append(ys, s.d2c)
				as = append(as, s.ahead)
			}
		}
		if len(ys) == 0 {
			continue
		}
		if !ahead {
			as = nil
		}
		base, per, ah := fitClass(xs, as, ys)
		t.Base, t.PerByte, t.Ahead, t.SatExp, t.ByInflight = time.Duration(math.Round(base)), per, ah, 0, nil
		for i, y := range ys {
			if as != nil { // the residual is the own service's (OpTiming.wait)
				y = max(y-t.wait(as[i]), 0)
			}
			if m := t.mean(uint32(xs[i])); m > 0 {
				r = append(r, y/m)
			}
		}
		t.Residual = QuantilesOf(r, nq)
	}
}

// flush reports whether s is a flush the flush machinery made (zero
// bytes, class other): flushLatency times it without the saturation
// factor, and the fit must not divide it by one.
func (s *sample) flush() bool { return s.op == OpOther && s.bytes == 0 }

// sampleSat returns the saturation factor the device applies to s: 1 for
// a flush (flushLatency), the factor at its k otherwise.
func (n *NonRotational) sampleSat(s sample) float64 {
	if s.flush() {
		return 1
	}
	return n.saturation(s.k)
}

// sampleFactor returns the load factor the device applies to s as its
// class takes it: 1 for a flush, the depth curves' factor or the shared
// one to the class's SatExp at its k otherwise (s.k the load measure).
func (n *NonRotational) sampleFactor(s sample) float64 {
	if s.flush() {
		return 1
	}
	return n.factor(s.op, s.bytes, s.k, s.seq, float64(s.k), float64(s.k))
}

// maxSatExp bounds OpTiming.SatExp.
const maxSatExp = 2

// fitSatExp gives each class but the largest its own saturation exponent
// (OpTiming.SatExp), fitted on ss with the factors n has now:
//
//  1. The largest class (most samples) keeps 1: the factors were fitted
//     mostly on it.
//  2. Another class is fitted only when its samples show the factor
//     varying: at least minGroup of them where the factor is at most 1.5
//     and minGroup where it is 2 or more.
//  3. For each exponent g in 0.05, 0.10, ..., maxSatExp, the least-squares
//     scale a of D2C = a*mean(bytes)*f^g (f the factor at the sample's k)
//     and its squared error; the g with the least error is kept, its
//     scale folded into Base and PerByte, unless it is 1 (nothing
//     changes).
func fitSatExp(n *NonRotational, ss []sample, byOp [numOps][]int) {
	largest := -1
	for o := range numOps {
		if largest < 0 || len(byOp[o]) > len(byOp[largest]) {
			largest = int(o)
		}
	}
	for o := range numOps {
		t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]
		idx := byOp[o]
		if t == nil || int(o) == largest || len(idx) < 2*minGroup {
			continue
		}
		fs := make([]float64, len(idx))
		ms := make([]float64, len(idx))
		low, high := 0, 0
		for j, i := range idx {
			fs[j] = n.sampleSat(ss[i])
			ms[j] = t.mean(ss[i].bytes)
			switch {
			case fs[j] <= 1.5:
				low++
			case fs[j] >= 2:
				high++
			}
		}
		if low < minGroup || high < minGroup {
			continue
		}
		bestG, bestA, bestErr := 1.0, 1.0, math.Inf(1)
		for step := 1; step <= 20*maxSatExp; step++ {
			g := float64(step) / 20
			var sgg, syg float64
			for j, i := range idx {
				x := ms[j] * math.Pow(fs[j], g)
				sgg += x * x
				syg += ss[i].d2c * x
			}
			if sgg <= 0 {
				continue
			}
			a := syg / sgg
			var e float64
			for j, i := range idx {
				d := ss[i].d2c - a*ms[j]*math.Pow(fs[j], g)
				e += d * d
			}
			if e < bestErr {
				bestG, bestA, bestErr = g, a, e
			}
		}
		if bestG == 1 || !(bestA > 0) {
			continue
		}
		t.SatExp = bestG
		t.Base = time.Duration(math.Round(float64(t.Base) * bestA))
		t.PerByte *= bestA
		t.Ahead *= bestA
	}
}

// minSeqGroup is the fewest requests of a class that continue a stream,
// and the fewest that do not, for fitSeq to give the class a
// sequential-stream factor.
const minSeqGroup = 50

// fitSeq gives each class of n (reads and writes) whose samples in ss show both sequential
// and other requests (minSeqGroup of each, flushes left out) its
// sequential-stream factor (OpTiming.Seq), against the latencies n gives
// them now (u_i = mean(bytes)*factor at k, less the Ahead wait w_i):
//
//  1. B = sum(d2c_i - w_i)/sum(u_i) over the non-sequential requests, A
//     the same over the sequential ones (ratios of sums: a few slow
//     requests do not decide them);
//  2. Base and PerByte are scaled by B (the non-sequential requests keep
//     the level the line gives them), Seq = A/B;
//  3. the residual tables are fitted again with the factor: the
//     sequential requests' (SeqResidual), and the others' as the fit that
//     made n fitted them (by in-flight bucket where n has them).
//
// It reports whether any class got a factor. A class whose factor comes
// within 5 % of 1 gets none: locality makes no difference there.
func fitSeq(n *NonRotational, ss []sample, nq int) bool {
	any := false
	for _, o := range [...]Op{OpRead, OpWrite} { // "other" times the flushes (flushLatency): no streams
		t := [numOps]*OpTiming{n.Read, n.Write, n.Other}[o]
		if t == nil || n.curveLocality(o, true) && n.curveLocality(o, false) != n.curveLocality(o, true) {
			continue // the depth curves tell the streams apart already
		}
		var idx []int
		var nSeq int
		for i, s := range ss {
			if s.op == o {
				idx = append(idx, i)
				if s.seq {
					nSeq++
				}
			}
		}
		if nSeq < minSeqGroup || len(idx)-nSeq < minSeqGroup {
			continue
		}
		var ySeq, uSeq, yRnd, uRnd float64
		for _, i := range idx {
			s := ss[i]
			u := t.mean(s.bytes) * n.sampleFactor(s)
			y := max(s.d2c-t.wait(s.ahead), 0)
			if s.seq {
				ySeq, uSeq = ySeq+y, uSeq+u
			} else {
				yRnd, uRnd = yRnd+y, uRnd+u
			}
		}
		if !(uSeq > 0 && uRnd > 0 && yRnd > 0) {
			continue
		}
		b := yRnd / uRnd
		seq := (ySeq / uSeq) / b
		if !(seq > 0) || math.Abs(seq-1) < 0.05 {
			continue
		}
		t.Base = time.Duration(math.Round(float64(t.Base) * b))
		t.PerByte *= b
		t.Seq = min(max(seq, 1/maxFactor), maxFactor)
		any = true
		// The residuals with the factor: the sequential requests' table,
		// and the others' as the fit that made n had them.
		var rSeq, rRnd []float64
		var byB inflightResiduals
		for _, i := range idx {
			s := ss[i]
			m := t.mean(s.bytes) * n.sampleFactor(s) * t.seqScale(s.seq)
			if m <= 0 {
				continue
			}
			x := max(s.d2c-t.wait(s.ahead), 0) / m
			if s.seq {
				rSeq = append(rSeq, x)
				continue
			}
			rRnd = append(rRnd, x)
			byB.add(InflightBucket(s.k), x)
		}
		t.Residual = QuantilesOf(rRnd, nq)
		t.SeqResidual = QuantilesOf(rSeq, nq)
		if t.ByInflight != nil {
			t.ByInflight = byB.tables(nq)
		}
	}
	return any
}

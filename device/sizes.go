package device

import (
	"maps"
	"math"
	"slices"
)

// Size bands (OpTiming.Sizes).
const (
	// minSizeBand is the fewest requests of one size band of a class for
	// it to get a factor of its own.
	minSizeBand = 500
	// sizeBandSpread: the bands are kept when one of them is at least
	// this factor off the line (or under its inverse).
	sizeBandSpread = 1.25
	// minSizeFactor and maxSizeFactor bound a band's factor (Validate).
	minSizeFactor = 1e-3
	maxSizeFactor = 1e3
)

// fitSizesOn returns a copy of n with its size bands fitted (fitSizes),
// or nil when no class got any; n is not changed.
func fitSizesOn(n *NonRotational, ss []sample, nq int) *NonRotational {
	c := *n
	for o := range numOps {
		if t := c.op(Op(o)); t != nil {
			cp := *t
			c.setOp(Op(o), &cp)
		}
	}
	fitSizes(&c, ss, nq)
	for o := range numOps {
		if t := c.op(Op(o)); t != nil && len(t.Sizes) > 0 {
			return &c
		}
	}
	return nil
}

// fitSizes fits the size bands of n's read and write classes on ss (the
// samples the chosen model was fitted on, with its load measure), last,
// on the chosen model (Calibrate keeps them where they lower its
// in-sample demerit): for each class, each quarter octave of sizes with
// at least minSizeBand of its requests gets the mean over them of D2C
// (less the wait for the bytes ahead) over the model's latency without a
// residual, at its most common size; with two bands or more and one off
// the line by sizeBandSpread or more, they become the class's Sizes and
// its residual tables are fitted again on the corrected latency, one
// table a band. With Batching, ss are the bunches' openers (a bunch's
// members complete with their opener, not at their own latency;
// Calibrate's step 7). Not with Curves (whose bands are fitted by size
// already).
func fitSizes(n *NonRotational, ss []sample, nq int) {
	if len(n.Curves) > 0 {
		return
	}
	for _, o := range []Op{OpRead, OpWrite} {
		t := n.op(o)
		if t == nil || len(t.Sizes) > 0 {
			continue
		}
		type band struct {
			sum    float64
			n      int
			counts map[uint32]int
		}
		bands := map[int]*band{}
		for _, s := range ss {
			if s.op != o || s.bytes == 0 {
				continue
			}
			r, ok := sizeResidual(n, t, s)
			if !ok {
				continue
			}
			k := int(math.Round(4 * math.Log2(float64(s.bytes))))
			b := bands[k]
			if b == nil {
				b = &band{counts: map[uint32]int{}}
				bands[k] = b
			}
			b.sum += r
			b.n++
			b.counts[s.bytes]++
		}
		var sizes []SizeBand
		off := false
		for _, k := range slices.Sorted(maps.Keys(bands)) {
			b := bands[k]
			if b.n < minSizeBand || b.sum <= 0 {
				continue
			}
			var most uint32
			for sz, c := range b.counts {
				if c > b.counts[most] || (c == b.counts[most] && sz < most) {
					most = sz
				}
			}
			f := min(max(b.sum/float64(b.n), minSizeFactor), maxSizeFactor)
			off = off || f >= sizeBandSpread || f <= 1/sizeBandSpread
			sizes = append(sizes, SizeBand{Bytes: most, Factor: f, N: b.n})
		}
		if len(sizes) < 2 || !off {
			continue
		}
		// The residuals, taken again with the bands' correction: each
		// band's own table, of the requests nearest its size (the spread
		// is the size's: 0.07-20 times the mean for 4 KiB reads above,
		// half of them under 0.12), and the class's of them all. Not by
		// in-flight bucket: split by both, the tables of
		// rig/wi-mix4-mqdl and wi-mix3-mqdl are too thin, and the
		// what-ifs from them come out worse (wi-mix3-mqdl -> BFQ
		// 200:300:500: share error 5.1 pp pooled, 9.1 by bucket).
		var all, seq []float64
		per := make([][]float64, len(sizes))
		for _, s := range ss {
			if s.op != o {
				continue
			}
			x, ok := sizeResidual(n, t, s)
			if !ok {
				continue
			}
			x /= bandFactor(sizes, s.bytes)
			if s.seq && t.Seq > 0 && t.SeqResidual.Len() > 0 {
				seq = append(seq, x)
				continue
			}
			all = append(all, x)
			i := nearestBand(sizes, s.bytes)
			per[i] = append(per[i], x)
		}
		for i := range sizes {
			sizes[i].Residual = QuantilesOf(per[i], max(nq/4, 16))
		}
		t.Sizes, t.ByInflight = sizes, nil
		t.Residual = QuantilesOf(all, nq)
		if len(seq) > 0 {
			t.SeqResidual = QuantilesOf(seq, nq)
		}
	}
}

// nearestBand returns the index of the band of b nearest bytes in log
// size (the smaller one on a tie).
func nearestBand(b []SizeBand, bytes uint32) int {
	best, d := 0, math.Inf(1)
	for i, sb := range b {
		if x := math.Abs(math.Log(float64(max(bytes, 1)) / float64(sb.Bytes))); x < d {
			best, d = i, x
		}
	}
	return best
}

// sizeResidual returns s's D2C, less its wait for the bytes ahead, over
// the latency t (of n) gives it before its residual draw; ok is false
// when that latency is not positive.
func sizeResidual(n *NonRotational, t *OpTiming, s sample) (float64, bool) {
	m := t.mean(s.bytes) * n.sampleFactor(s) * t.seqScale(s.seq)
	if !(m > 0) || s.flush() {
		return 0, false
	}
	return max(s.d2c-t.wait(s.ahead), 0) / m, true
}

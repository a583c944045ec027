package report

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

const mib = 1 << 20

// timeBins is about how many windows a time series gets.
const timeBins = 200

// minPerWindow is the fewest completions a window should see on average.
const minPerWindow = 20

// chartWindow returns a window width for a span of end ns in which n bios
// completed: the smallest of 1, 2, 5 x 10^k ns, at least 1 ms, that cuts
// the span into at most timeBins windows holding minPerWindow completions
// each on average.
func chartWindow(end int64, n int) int64 {
	w := int64(1_000_000)
	bins := int64(min(timeBins, max(n/minPerWindow, 1)))
	for steps := 0; end/w >= bins; steps++ {
		switch steps % 3 {
		case 0, 2:
			w *= 2
		case 1:
			w = w / 2 * 5
		}
	}
	return w
}

// sideEnd returns the last completion time over both sides' bios, ns (0
// when none).
func sideEnd(sides ...*diff.Side) int64 {
	var end int64
	for _, s := range sides {
		if s == nil {
			continue
		}
		for i := range s.NumBios() {
			if d := s.BioAt(i).Done; d.Valid() && int64(d) > end {
				end = int64(d)
			}
		}
	}
	return end
}

// keyed bytes per window: bytes of bios completed in each window, by key.
type binned struct {
	win   int64
	n     int
	bytes map[uint64][]uint64
	tot   map[uint64]uint64
}

func binBytes(s *diff.Side, win int64, n int, key func(b *trace.Bio) uint64) binned {
	bb := binned{win: win, n: n, bytes: map[uint64][]uint64{}, tot: map[uint64]uint64{}}
	if s == nil {
		return bb
	}
	for i := range s.NumBios() {
		bv := s.BioAt(i)
		b := &bv
		if !b.Done.Valid() || b.Done < 0 {
			continue
		}
		k := key(b)
		v := bb.bytes[k]
		if v == nil {
			v = make([]uint64, n)
			bb.bytes[k] = v
		}
		w := min(int(int64(b.Done)/win), n-1)
		v[w] += uint64(b.Bytes)
		bb.tot[k] += uint64(b.Bytes)
	}
	return bb
}

// mibps returns the MiB/s series of the keys (summed), one value a window.
func (bb binned) mibps(keys ...uint64) []float64 {
	out := make([]float64, bb.n)
	ws := float64(bb.win) / 1e9
	for _, k := range keys {
		for w, v := range bb.bytes[k] {
			out[w] += float64(v) / mib / ws
		}
	}
	return out
}

// topKeys returns the keys with the most bytes over both binnings (at most
// n, by bytes descending then key), and the rest.
func topKeys(n int, bs ...binned) (top, rest []uint64) {
	tot := map[uint64]uint64{}
	for _, b := range bs {
		for k, v := range b.tot {
			tot[k] += v
		}
	}
	keys := make([]uint64, 0, len(tot))
	for k := range tot {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b uint64) int {
		if c := cmp.Compare(tot[b], tot[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(keys) <= n+1 {
		return keys, nil
	}
	top, rest = keys[:n], keys[n:]
	slices.Sort(rest)
	return top, rest
}

// windowCentres returns the centre of each of n windows of win ns, in s.
func windowCentres(win int64, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = (float64(i) + 0.5) * float64(win) / 1e9
	}
	return x
}

// latencyOf returns a side's Q2C and D2C latencies per cgroup, in ms,
// sorted, over its completed requests (as diff counts them).
func latencyOf(s *diff.Side) (q2c, d2c map[uint64][]float64) {
	q2c, d2c = map[uint64][]float64{}, map[uint64][]float64{}
	if s == nil {
		return
	}
	// Count first, so that each slice is allocated once.
	nq, nd := map[uint64]int{}, map[uint64]int{}
	for i := range s.NumRequests() {
		rv := s.RequestAt(i)
		r := &rv
		if !r.Complete.Valid() {
			continue
		}
		if r.Queue.Valid() && r.Complete >= r.Queue {
			nq[r.Cgroup]++
		}
		if r.Issue.Valid() && r.Complete >= r.Issue {
			nd[r.Cgroup]++
		}
	}
	for k, n := range nq {
		q2c[k] = make([]float64, 0, n)
	}
	for k, n := range nd {
		d2c[k] = make([]float64, 0, n)
	}
	for i := range s.NumRequests() {
		rv := s.RequestAt(i)
		r := &rv
		if !r.Complete.Valid() {
			continue
		}
		if r.Queue.Valid() && r.Complete >= r.Queue {
			q2c[r.Cgroup] = append(q2c[r.Cgroup], float64(r.Complete-r.Queue)/1e6)
		}
		if r.Issue.Valid() && r.Complete >= r.Issue {
			d2c[r.Cgroup] = append(d2c[r.Cgroup], float64(r.Complete-r.Issue)/1e6)
		}
	}
	for _, m := range []map[uint64][]float64{q2c, d2c} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	return
}

// quantile returns the q-quantile of sorted xs as diff computes it
// (diff.Quantile); NaN when xs is empty.
func quantile(xs []float64, q float64) float64 {
	if v, ok := diff.Quantile(xs, q); ok {
		return v
	}
	return math.NaN()
}

// cdfLevels are the probabilities a CDF is drawn at: every 0.5 %, then
// the tail.
var cdfLevels = func() []float64 {
	var ps []float64
	for i := 0; i <= 200; i++ {
		ps = append(ps, float64(i)/200)
	}
	ps = append(ps, 0.9925, 0.999, 0.9999)
	slices.Sort(ps)
	return slices.Compact(ps)
}()

// cdf returns the CDF of sorted xs at cdfLevels: x = quantile, y = level.
func cdf(xs []float64) (x, y []float64) {
	if len(xs) == 0 {
		return nil, nil
	}
	for _, p := range cdfLevels {
		x = append(x, quantile(xs, p))
		y = append(y, p)
	}
	return x, y
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// classBins is how many time bins a think-time strip gets.
const classBins = 480

// classStrip bins a queue's think-time points over [0, end) ns: each bin
// holds short (0), long (1), both (2) or nothing (-1, before the queue's
// first point or after its last).
func classStrip(pts []diff.ThinkPoint, end int64) []int8 {
	out := make([]int8, classBins)
	for i := range out {
		out[i] = -1
	}
	if len(pts) == 0 || end <= 0 {
		return out
	}
	bin := func(t trace.Time) int { return min(max(int(int64(t)*classBins/end), 0), classBins-1) }
	cls := func(short bool) int8 {
		if short {
			return 0
		}
		return 1
	}
	for i, p := range pts {
		b0 := bin(p.Time)
		b1 := b0
		if i+1 < len(pts) {
			b1 = bin(pts[i+1].Time)
		}
		c := cls(p.Short)
		for b := b0; b <= b1; b++ {
			switch {
			case out[b] == -1:
				out[b] = c
			case out[b] != c:
				out[b] = 2
			}
		}
	}
	return out
}

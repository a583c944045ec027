package diff

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// Identity says how the two sides' bios line up by (PID, Index).
type Identity struct {
	Matched       int `json:"matched"`        // bios on both sides
	RealOnly      int `json:"real_only"`      // bios only in the real trace
	PredictedOnly int `json:"predicted_only"` // bios only in the prediction
	Ordered       int `json:"ordered"`        // matched bios issued on both sides: the ones the dispatch order ranks
}

// BioRef names a bio on both sides: its key and its index among each Side's bios (Side.BioAt).
type BioRef struct {
	PID   uint32 `json:"pid"`
	Index uint32 `json:"index"`
	Real  int    `json:"-"` // index among the real Side's bios (Side.BioAt)
	Pred  int    `json:"-"` // index among the predicted Side's bios
}

// Point is a position in the real dispatch order and the times it stands for.
type Point struct {
	Position  int        `json:"position"`       // rank in the real dispatch order, from 0
	Bio       BioRef     `json:"bio"`            // the bio the real trace issued there
	Predicted BioRef     `json:"predicted_bio"`  // the bio the prediction issued there
	RealTime  trace.Time `json:"real_time"`      // ns: real issue time at that position
	PredTime  trace.Time `json:"predicted_time"` // ns: predicted issue time at that position
}

// Count is how much of one thing (a cgroup, a process, a queue) was served.
type Count struct {
	ID    uint64 `json:"id"`   // cgroup id, or pid
	Name  string `json:"name"` // cgroup path, or queue name such as "1234S"
	Bios  int    `json:"bios"`
	Bytes uint64 `json:"bytes"`
}

// Served is what one side issued over a stretch of dispatch positions,
// each list sorted by bios (descending), then ID and Name.
type Served struct {
	Cgroups   []Count `json:"cgroups"`
	Processes []Count `json:"processes"`
	Queues    []Count `json:"queues"` // (process, sync) queues, named "<pid>S" or "<pid>A"
}

// Divergence is a stretch of the real dispatch order where the prediction
// departs from it: a maximal run of positions covered by sliding windows
// (Options.DivergenceWindow bios) whose mean |displacement| exceeds
// Options.DivergenceThreshold, trimmed to its first and last bio displaced
// by more than the threshold.
//
// Severity = sum over the stretch's bios of |displacement| (ranks), that is
// bios affected × mean displacement. The ranked list is sorted by severity
// descending, then by First.
type Divergence struct {
	Rank             int     `json:"rank"`  // 1 = most severe
	First            int     `json:"first"` // first position (real order, from 0)
	Last             int     `json:"last"`  // last position, inclusive
	Bios             int     `json:"bios"`  // Last-First+1
	Bytes            uint64  `json:"bytes"` // bytes of the stretch's bios
	MeanDisplacement float64 `json:"mean_displacement"`
	MaxDisplacement  int     `json:"max_displacement"`
	Severity         float64 `json:"severity"`

	RealStart trace.Time `json:"real_start"`      // ns: real issue time at First
	RealEnd   trace.Time `json:"real_end"`        // ns: real issue time at Last
	PredStart trace.Time `json:"predicted_start"` // ns: predicted issue time at position First of the predicted order
	PredEnd   trace.Time `json:"predicted_end"`   // ns: predicted issue time at position Last of the predicted order

	// PredFirst and PredLast bound where the prediction put the stretch's
	// bios (positions in the predicted order).
	PredFirst int `json:"predicted_first"`
	PredLast  int `json:"predicted_last"`

	Real      Served `json:"real"`      // what the real trace issued at positions First..Last
	Predicted Served `json:"predicted"` // what the prediction issued at positions First..Last
}

// Order compares the dispatch (issue) order of the matched bios.
//
// Both orders sort bios by issue time and break ties (the bios of one
// request share its issue time) by (PID, Index), the same key on both
// sides, so no ties remain and tau is Kendall's tau-a = tau-b:
// 1 - 2*inversions/(n(n-1)/2). Displacement of a bio = its predicted
// position - its real position.
type Order struct {
	// KendallTau is NaN, null in JSON and "n/a" in text, when no bio is
	// matched: a comparison of nothing is not perfect agreement.
	KendallTau       float64 `json:"kendall_tau"`
	MeanDisplacement float64 `json:"mean_displacement"` // mean |displacement|, ranks
	Divergences      int     `json:"divergences"`       // number of divergent stretches

	Bios            int    `json:"bios"`              // ranked bios (Identity.Ordered)
	Inversions      int64  `json:"inversions"`        // discordant pairs
	MaxDisplacement int    `json:"max_displacement"`  // largest |displacement|, ranks
	MaxDisplaced    BioRef `json:"max_displaced_bio"` // the first bio displaced that much
	// FirstDivergence is the first position where the two orders issue
	// different bios; nil when they agree throughout.
	FirstDivergence *Point       `json:"first_divergence"`
	Ranked          []Divergence `json:"ranked"` // at most Options.MaxDivergences, most severe first

	// RealSequence lists the ranked bios in real dispatch order, as indexes
	// into the real Side's bios (Side.BioAt); PredictedSequence the same bios in
	// predicted order, as indexes into the predicted Side's bios.
	// Displacement[i] belongs to the bio at RealSequence[i].
	RealSequence      []int32 `json:"-"`
	PredictedSequence []int32 `json:"-"`
	Displacement      []int32 `json:"-"`
}

// matchBios merge-joins the two sides' bios (both sorted by (PID, Index))
// and returns the index pairs of the matched ones.
func matchBios(real, pred *Side) (rIdx, pIdx []int32, id Identity) {
	nr, np := real.NumBios(), pred.NumBios()
	n := min(nr, np)
	rIdx, pIdx = make([]int32, 0, n), make([]int32, 0, n)
	i, j := 0, 0
	for i < nr && j < np {
		rk := uint64(real.bioPID(i))<<32 | uint64(real.bioIndex(i))
		pk := uint64(pred.bioPID(j))<<32 | uint64(pred.bioIndex(j))
		switch c := cmp.Compare(rk, pk); {
		case c < 0:
			id.RealOnly++
			i++
		case c > 0:
			id.PredictedOnly++
			j++
		default:
			rIdx = append(rIdx, int32(i))
			pIdx = append(pIdx, int32(j))
			i++
			j++
		}
	}
	id.RealOnly += nr - i
	id.PredictedOnly += np - j
	id.Matched = len(rIdx)
	return rIdx, pIdx, id
}

type keyed struct {
	t trace.Time
	c int32
}

// compareOrder computes the Order of the matched bios (rIdx[k], pIdx[k]).
func compareOrder(real, pred *Side, rIdx, pIdx []int32, opts Options) Order {
	// 1. Keep the matched bios issued on both sides (candidates c, in
	//    (PID, Index) order, so c itself breaks issue-time ties).
	rc := make([]int32, real.NumBios()) // bio index -> candidate, or -1
	pc := make([]int32, pred.NumBios())
	for i := range rc {
		rc[i] = -1
	}
	for i := range pc {
		pc[i] = -1
	}
	cr := make([]int32, 0, len(rIdx)) // candidate -> bio index on each side
	cp := make([]int32, 0, len(rIdx))
	for k := range rIdx {
		if !real.bioIssue(int(rIdx[k])).Valid() || !pred.bioIssue(int(pIdx[k])).Valid() {
			continue
		}
		c := int32(len(cr))
		rc[rIdx[k]] = c
		pc[pIdx[k]] = c
		cr = append(cr, rIdx[k])
		cp = append(cp, pIdx[k])
	}
	n := len(cr)
	o := Order{Bios: n, KendallTau: 1}
	if n == 0 {
		// Nothing to compare: not perfect agreement (see Order.KendallTau).
		o.KendallTau = math.NaN()
		return o
	}
	// 2. Each side's dispatch order, sorted by (issue time, bio index) once
	//    per Side, restricted to the candidates: since candidate order is
	//    bio index order on both sides, that is the order by (issue time,
	//    candidate).
	o.RealSequence = make([]int32, 0, n)
	o.PredictedSequence = make([]int32, 0, n)
	for _, bi := range real.prepared().issueOrder {
		if rc[bi] >= 0 {
			o.RealSequence = append(o.RealSequence, bi)
		}
	}
	predRank := make([]int32, n)
	for _, bi := range pred.prepared().issueOrder {
		if c := pc[bi]; c >= 0 {
			predRank[c] = int32(len(o.PredictedSequence))
			o.PredictedSequence = append(o.PredictedSequence, bi)
		}
	}
	// 3. x[i] = predicted position of the bio at real position i.
	x := make([]int32, n)
	o.Displacement = make([]int32, n)
	var sumAbs float64
	for i, rbi := range o.RealSequence {
		c := rc[rbi]
		x[i] = predRank[c]
		d := x[i] - int32(i)
		o.Displacement[i] = d
		ad := int(abs32(d))
		sumAbs += float64(ad)
		if ad > o.MaxDisplacement {
			o.MaxDisplacement = ad
			o.MaxDisplaced = BioRef{PID: real.bioPID(int(rbi)), Index: real.bioIndex(int(rbi)), Real: int(rbi), Pred: int(cp[c])}
		}
		if o.FirstDivergence == nil {
			pbi := o.PredictedSequence[i]
			if pk := pc[pbi]; pk != c {
				rb, pb := real.BioAt(int(rbi)), pred.BioAt(int(pbi))
				o.FirstDivergence = &Point{
					Position:  i,
					Bio:       BioRef{PID: rb.PID, Index: rb.Index, Real: int(rbi), Pred: int(cp[c])},
					Predicted: BioRef{PID: pb.PID, Index: pb.Index, Real: int(cr[pk]), Pred: int(pbi)},
					RealTime:  rb.Issue,
					PredTime:  pb.Issue,
				}
			}
		}
	}
	o.MeanDisplacement = sumAbs / float64(n)
	// 4. Kendall tau from the inversions of x.
	o.Inversions = countInversionsBuf(x, rc, pc) // rc, pc: scratch now
	if n > 1 {
		pairs := float64(n) * float64(n-1) / 2
		o.KendallTau = 1 - 2*float64(o.Inversions)/pairs
	}
	// 5. Divergent stretches.
	all := findDivergences(o.Displacement, opts)
	o.Divergences = len(all)
	slices.SortStableFunc(all, func(a, b Divergence) int {
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		return cmp.Compare(a.First, b.First)
	})
	if len(all) > opts.MaxDivergences {
		all = all[:opts.MaxDivergences]
	}
	for k := range all {
		all[k].Rank = k + 1
		describeDivergence(&all[k], real, pred, o.RealSequence, o.PredictedSequence, x)
	}
	o.Ranked = all
	return o
}

func abs32(d int32) int32 {
	if d < 0 {
		return -d
	}
	return d
}

// countInversions returns the number of pairs i < j with x[i] > x[j], by a
// bottom-up merge sort in O(n log n). x is left unchanged.
func countInversions(x []int32) int64 {
	return countInversionsBuf(x, nil, nil)
}

// countInversionsBuf is countInversions with scratch space a and b (each
// allocated when shorter than x): insertion sorts of runs of 32, then
// bottom-up merges, copying pairs of runs already in order.
func countInversionsBuf(x, a, b []int32) int64 {
	n := len(x)
	if len(a) < n {
		a = make([]int32, n)
	}
	if len(b) < n {
		b = make([]int32, n)
	}
	a, b = a[:n], b[:n]
	copy(a, x)
	var inv int64
	const run = 32
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		for i := lo + 1; i < hi; i++ {
			v := a[i]
			j := i
			for j > lo && a[j-1] > v {
				a[j] = a[j-1]
				j--
			}
			a[j] = v
			inv += int64(i - j)
		}
	}
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid := min(lo+width, n)
			hi := min(lo+2*width, n)
			if mid >= hi || a[mid-1] <= a[mid] {
				copy(b[lo:hi], a[lo:hi])
				continue
			}
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if a[i] <= a[j] {
					b[k] = a[i]
					i++
				} else {
					b[k] = a[j]
					inv += int64(mid - i)
					j++
				}
				k++
			}
			k += copy(b[k:], a[i:mid])
			copy(b[k:], a[j:hi])
		}
		a, b = b, a
	}
	return inv
}

// findDivergences returns the divergent stretches of a displacement
// sequence (unsorted, without descriptions), following Divergence's
// definition:
//  1. mark every position covered by a window of W positions whose mean
//     |displacement| exceeds the threshold;
//  2. split the marks into maximal runs;
//  3. trim each run to its first and last position whose own |displacement|
//     exceeds the threshold (runs without one are kept whole).
func findDivergences(disp []int32, opts Options) []Divergence {
	n := len(disp)
	if n == 0 {
		return nil
	}
	w := min(opts.DivergenceWindow, n)
	thr := opts.DivergenceThreshold
	limit := thr * float64(w)
	// Difference array of coverage.
	cover := make([]int32, n+1)
	var sum int64
	for i := 0; i < n; i++ {
		sum += int64(abs32(disp[i]))
		if i >= w {
			sum -= int64(abs32(disp[i-w]))
		}
		if i >= w-1 && float64(sum) > limit {
			cover[i-w+1]++
			cover[i+1]--
		}
	}
	var out []Divergence
	run := int32(0)
	start := -1
	for i := 0; i <= n; i++ {
		if i < n {
			run += cover[i]
		}
		in := i < n && run > 0
		if in && start < 0 {
			start = i
		}
		if !in && start >= 0 {
			first, last := start, i-1
			for first < last && float64(abs32(disp[first])) <= thr {
				first++
			}
			for last > first && float64(abs32(disp[last])) <= thr {
				last--
			}
			if float64(abs32(disp[first])) <= thr {
				first, last = start, i-1
			}
			d := Divergence{First: first, Last: last, Bios: last - first + 1}
			var s float64
			for k := first; k <= last; k++ {
				a := int(abs32(disp[k]))
				s += float64(a)
				d.MaxDisplacement = max(d.MaxDisplacement, a)
			}
			d.Severity = s
			d.MeanDisplacement = s / float64(d.Bios)
			out = append(out, d)
			start = -1
		}
	}
	return out
}

// describeDivergence fills the times, bounds and served lists of d.
func describeDivergence(d *Divergence, real, pred *Side, realSeq, predSeq, x []int32) {
	d.RealStart = real.bioIssue(int(realSeq[d.First]))
	d.RealEnd = real.bioIssue(int(realSeq[d.Last]))
	d.PredStart = pred.bioIssue(int(predSeq[d.First]))
	d.PredEnd = pred.bioIssue(int(predSeq[d.Last]))
	d.PredFirst, d.PredLast = math.MaxInt, -1
	for k := d.First; k <= d.Last; k++ {
		d.PredFirst = min(d.PredFirst, int(x[k]))
		d.PredLast = max(d.PredLast, int(x[k]))
		d.Bytes += uint64(real.bioBytes(int(realSeq[k])))
	}
	d.Real = served(real, realSeq[d.First:d.Last+1])
	d.Predicted = served(pred, predSeq[d.First:d.Last+1])
}

// served tallies the bios idx... of s by cgroup, process and queue.
func served(s *Side, idx []int32) Served {
	var cg, pr, qu tally
	for _, i := range idx {
		pid, bytes := s.bioPID(int(i)), s.bioBytes(int(i))
		cg.add(s.bioCgroup(int(i)), bytes)
		pr.add(uint64(pid), bytes)
		k := uint64(pid) << 1
		if isSync(s.bioCat(int(i))) {
			k |= 1
		}
		qu.add(k, bytes)
	}
	for k := range cg.counts {
		cg.counts[k].Name = cgroupPath(cg.counts[k].ID, s)
	}
	for k := range qu.counts {
		c := &qu.counts[k]
		c.Name = queueID{uint32(c.ID >> 1), c.ID&1 == 1}.String()
		c.ID >>= 1
	}
	return Served{Cgroups: cg.sorted(), Processes: pr.sorted(), Queues: qu.sorted()}
}

// tally counts bios and bytes by id: a list searched from the last id hit,
// and a map once the list is long.
type tally struct {
	counts []Count
	last   int
	index  map[uint64]int
}

func (t *tally) add(id uint64, bytes uint32) {
	if t.last < len(t.counts) && t.counts[t.last].ID == id {
		t.counts[t.last].Bios++
		t.counts[t.last].Bytes += uint64(bytes)
		return
	}
	k := -1
	if t.index != nil {
		if j, ok := t.index[id]; ok {
			k = j
		}
	} else {
		for j := range t.counts {
			if t.counts[j].ID == id {
				k = j
				break
			}
		}
	}
	if k < 0 {
		k = len(t.counts)
		t.counts = append(t.counts, Count{ID: id})
		if t.index != nil {
			t.index[id] = k
		} else if len(t.counts) > 32 {
			t.index = make(map[uint64]int, 64)
			for j := range t.counts {
				t.index[t.counts[j].ID] = j
			}
		}
	}
	t.last = k
	t.counts[k].Bios++
	t.counts[k].Bytes += uint64(bytes)
}

func (t *tally) sorted() []Count {
	out := t.counts
	if out == nil {
		out = []Count{}
	}
	slices.SortFunc(out, countCmp)
	return out
}

func countCmp(a, b Count) int {
	if c := cmp.Compare(b.Bios, a.Bios); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

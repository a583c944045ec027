package diff

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// sidePrep is what Compare derives from one Side alone, whatever the other
// side and (except where noted) the Options: computed once per Side, on its
// first Compare, and shared by every later one (a real capture is often
// compared with many predictions).
type sidePrep struct {
	first, last trace.Time // span(): first Q, last C over the bios

	// issueOrder lists the bios with a valid Issue, as bio indexes (Side.BioAt),
	// sorted by (Issue, index): the side's dispatch order.
	issueOrder []int32

	// q2c and d2c are the side's request latencies in seconds, sorted.
	q2c, d2c []float64

	// Think time, before the Options-dependent replay: the sync queues in
	// the order of their first request, each queue's first queue time, and
	// its events, ev[off[k]:off[k+1]], sorted by (time, kind, request)
	// (decoded by event).
	queues  []uint32 // pids (all sync queues)
	firstQ  []trace.Time
	off     []int
	ev      []uint64
	inserts int  // the insertion events (ttInsert) in ev
	packed  bool // ev holds ((t-tlo)<<2 | kind) << idxBits | request, else request<<2 | kind
	tlo     trace.Time
	idxBits uint
	// writeBack: the side has the flush machinery's own flushes (the
	// device has a write-back cache), so a PREFLUSH request's data goes
	// to the scheduler at the head (see thinkAtHead).
	writeBack bool

	// logged lists the think-time classes the scheduler logged, per
	// (pid, sync) queue, by queue.
	logged []queueLogged
}

type queueLogged struct {
	q   queueID
	pts []LoggedPoint
}

// prepared returns the Side's sidePrep, computing it on first use.
func (s *Side) prepared() *sidePrep {
	s.prepOnce.Do(func() { s.prep = s.computePrep() })
	return s.prep
}

func (s *Side) computePrep() *sidePrep {
	p := &sidePrep{first: trace.NoTime, last: trace.NoTime}
	p.first, p.last = s.span()
	// One scratch buffer for the sorts below.
	scratch := make([]uint64, max(2*s.NumBios(), 3*s.NumRequests()))
	p.issueOrder = issueOrder(s, scratch)
	p.q2c, p.d2c = latencies(s, scratch)
	p.prepThink(s, scratch)
	p.prepLogged(s)
	return p
}

// packBits is the room for keys packed with an index in a uint64 (less
// in tests, to exercise the paths taken when keys do not fit).
var packBits = 64

// radixU64 sorts a by v>>shift, stably, with a least-significant-digit
// radix sort on digits of at most 13 bits of (v>>shift)-min. When the bits
// below shift increase along a (an index packed there), that is the same as
// sorting a by value. buf, if at least len(a) long, is used as scratch.
func radixU64(a []uint64, shift uint, buf []uint64) {
	n := len(a)
	if n < 2 {
		return
	}
	if n < 512 {
		if shift == 0 {
			slices.Sort(a)
		} else {
			slices.SortStableFunc(a, func(x, y uint64) int { return cmp.Compare(x>>shift, y>>shift) })
		}
		return
	}
	// One pass for the range and for how far a is from sorted (desc: the
	// keys less than the one before). ordered: the bits below shift
	// increase along a, so that sorting by value is sorting by v>>shift
	// stably.
	lowMask := uint64(1)<<shift - 1
	lo, hi := a[0]>>shift, a[0]>>shift
	ordered := true
	desc := 0
	for i := 1; i < n; i++ {
		k := a[i] >> shift
		lo = min(lo, k)
		hi = max(hi, k)
		if k < a[i-1]>>shift {
			desc++
		}
		ordered = ordered && a[i-1]&lowMask < a[i]&lowMask
	}
	span := hi - lo
	if span == 0 || desc == 0 {
		return
	}
	if len(buf) < n {
		buf = make([]uint64, n)
	}
	// Nearly in order (a trace's times, its requests in completion order,
	// with a few far early or late): the values out of the ascending run
	// put aside, sorted and merged back.
	if (shift == 0 || ordered) && desc <= n/nearlySortedFraction {
		if sortNearly(a, buf[:n]) {
			return
		}
		// Given up on, a is in another order of the same values: sort
		// them by value.
		radixLSD(a, 0, buf)
		return
	}
	// Many values a few places off (completions of a deep queue): an
	// insertion sort, given up past a bound on its moves (stable, so the
	// radix passes then finish the sort from where it stopped).
	if desc <= n/2 && insertionSort(a, shift, jitterMoves*n) {
		return
	}
	radixLSD(a, shift, buf)
}

// radixLSD is radixU64's least-significant-digit radix sort, buf at least
// len(a) long. The counts of keys of one or two digits (latencies, the
// usual spans of times) are taken in one pass over a, not one pass per
// digit; wider keys count each digit on its pass, as before. A digit that
// is the same for every value (all of a in one bucket) is skipped: its
// pass would leave the order as it is.
func radixLSD(a []uint64, shift uint, buf []uint64) {
	n := len(a)
	lo, hi := a[0]>>shift, a[0]>>shift
	for _, v := range a {
		lo, hi = min(lo, v>>shift), max(hi, v>>shift)
	}
	span := hi - lo
	if span == 0 {
		return
	}
	nb := bits.Len64(span)
	passes := (nb + 12) / 13
	width := uint((nb + passes - 1) / passes)
	mask := uint64(1)<<width - 1
	nd := 1 << width
	counts := make([]int, passes*nd)
	switch passes {
	case 1:
		for _, v := range a {
			counts[(v>>shift-lo)&mask]++
		}
	case 2:
		c0, c1 := counts[:nd], counts[nd:2*nd]
		for _, v := range a {
			k := v>>shift - lo
			c0[k&mask]++
			c1[(k>>width)&mask]++
		}
	}
	src, dst := a, buf[:n]
	for p := range passes {
		count := counts[p*nd : (p+1)*nd]
		d := uint(p) * width
		if passes > 2 { // wider keys: each digit counted on its pass
			for _, v := range src {
				count[((v>>shift-lo)>>d)&mask]++
			}
		}
		if count[((src[0]>>shift-lo)>>d)&mask] == n {
			continue
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, v := range src {
			k := ((v>>shift - lo) >> d) & mask
			dst[count[k]] = v
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

// nearlySortedFraction: radixU64 tries sortNearly when at most one key in
// nearlySortedFraction is less than the one before it; sortNearly gives up
// when more than one value in restFraction is out of the run.
const (
	nearlySortedFraction = 16
	restFraction         = 4
	// nearlyPops: how many of the run's last values sortNearly puts aside
	// for one that would then extend it (values that came early).
	nearlyPops = 4
)

// jitterMoves bounds radixU64's insertion sort: moves per value.
const jitterMoves = 32

// insertionSort sorts a by v>>shift, stably, unless that takes more than
// budget moves: it then stops and returns false, a still a permutation of
// its values with equal keys in their original order.
func insertionSort(a []uint64, shift uint, budget int) bool {
	for i := 1; i < len(a); i++ {
		v := a[i]
		k := v >> shift
		if a[i-1]>>shift <= k {
			continue
		}
		j := i - 1
		for j >= 0 && a[j]>>shift > k {
			a[j+1] = a[j]
			j--
		}
		a[j+1] = v
		if budget -= i - 1 - j; budget < 0 {
			return false
		}
	}
	return true
}

// sortNearly sorts a by value when few values are out of its ascending
// run: the run is kept in a, the others put aside in buf (len(a) long),
// sorted, and merged back from the end. A value below the run's last that
// would extend the run without its last few (at most nearlyPops) puts
// those aside instead. It gives up, returning false with a in another order
// of its values, when more than len(a)/restFraction are put aside.
func sortNearly(a []uint64, buf []uint64) bool {
	n := len(a)
	rest := buf[:0]
	w := 1
	for i := 1; i < n; i++ {
		v := a[i]
		if v >= a[w-1] {
			a[w] = v
			w++
			continue
		}
		j := 1 // a[w-j:] would go aside
		for j <= nearlyPops && w-j > 0 && a[w-j-1] > v {
			j++
		}
		if j <= nearlyPops {
			rest = append(rest, a[w-j:w]...)
			w -= j
			a[w] = v
			w++
		} else {
			rest = append(rest, v)
		}
		if len(rest) > n/restFraction {
			copy(a[w:], rest) // a[w:i+1] is free: the values taken aside
			return false
		}
	}
	radixU64(rest, 0, nil)
	// Merge a[:w] and rest into a, from the end.
	i, j := w-1, len(rest)-1
	for k := n - 1; j >= 0; k-- {
		if i >= 0 && a[i] > rest[j] {
			a[k] = a[i]
			i--
		} else {
			a[k] = rest[j]
			j--
		}
	}
	return true
}

// issueOrder returns the indexes of the bios with a valid Issue sorted by
// (Issue, index).
func issueOrder(s *Side, scratch []uint64) []int32 {
	lo, hi := trace.NoTime, trace.NoTime
	m := 0
	n := s.NumBios()
	var ib [chunk]int64
	var pb [chunk]uint64
	for from := 0; from < n; from += chunk {
		for _, v := range s.bios.issue.Values(from, ib[:]) {
			if t := trace.Time(v); t.Valid() {
				if m == 0 {
					lo, hi = t, t
				}
				lo, hi = min(lo, t), max(hi, t)
				m++
			}
		}
	}
	out := make([]int32, 0, m)
	if m == 0 {
		return out
	}
	idxBits := bits.Len(uint(n - 1))
	if bits.Len64(uint64(hi-lo))+idxBits <= packBits {
		ks, buf := scratch[:0:m], scratch[m:]
		if len(scratch) < 2*m {
			ks, buf = make([]uint64, 0, m), nil
		}
		// The bios are in (PID, Index) order, and a process's are issued
		// nearly in index order: each process's run of ks is sorted
		// (radixU64 takes a nearly sorted one in one pass), then the runs
		// are merged. The keys are unique (the index is in them), so that
		// is the one sorted order.
		runs := []int{0} // where each process's keys start in ks
		lastPID := uint64(0)
		for from := 0; from < n; from += chunk {
			issues, pids := s.bios.issue.Values(from, ib[:]), s.bios.pid.Values(from, pb[:])
			for j, v := range issues {
				if t := trace.Time(v); t.Valid() {
					if p := pids[j]; p != lastPID {
						if len(ks) > 0 {
							runs = append(runs, len(ks))
						}
						lastPID = p
					}
					ks = append(ks, uint64(t-lo)<<idxBits|uint64(from+j))
				}
			}
		}
		runs = append(runs, len(ks))
		if len(runs)-1 <= maxMergedRuns {
			for k := 0; k+1 < len(runs); k++ {
				radixU64(ks[runs[k]:runs[k+1]], uint(idxBits), buf)
			}
			mergeRuns(ks, runs, buf)
		} else {
			radixU64(ks, uint(idxBits), buf)
		}
		mask := uint64(1)<<idxBits - 1
		for _, k := range ks {
			out = append(out, int32(k&mask))
		}
		return out
	}
	ks := make([]keyed, 0, m)
	for i := range n {
		if t := s.bioIssue(i); t.Valid() {
			ks = append(ks, keyed{t, int32(i)})
		}
	}
	radixSort(ks, nil)
	for _, k := range ks {
		out = append(out, k.c)
	}
	return out
}

// latencies returns a side's Q2C and D2C samples in seconds, sorted.
func latencies(s *Side, scratch []uint64) (q2c, d2c []float64) {
	n := s.NumRequests()
	if len(scratch) < 3*n {
		scratch = make([]uint64, 3*n)
	}
	q, d, buf := scratch[:0:n], scratch[n:n:2*n], scratch[2*n:3*n]
	var qb, ib, cb [chunk]int64
	for from := 0; from < n; from += chunk {
		qs, is, cs := s.reqs.queue.Values(from, qb[:]), s.reqs.issue.Values(from, ib[:]), s.reqs.complete.Values(from, cb[:])
		for j := range cs {
			c := trace.Time(cs[j])
			if !c.Valid() {
				continue
			}
			if qt := trace.Time(qs[j]); qt.Valid() && c >= qt {
				q = append(q, uint64(c-qt))
			}
			if it := trace.Time(is[j]); it.Valid() && c >= it {
				d = append(d, uint64(c-it))
			}
		}
	}
	conv := func(k []uint64) []float64 {
		sortValues(k, buf)
		out := make([]float64, len(k))
		for i, v := range k {
			out[i] = float64(int64(v)) / 1e9
		}
		return out
	}
	return conv(q), conv(d)
}

// sortValues sorts a by value, buf (at least len(a) long) as scratch: a
// side's latencies, in request order, which are not nearly sorted (each
// is about as likely to be below the one before as above), so radixU64's
// cheaper sorts for nearly sorted keys would only be tried and given up
// on. Sorting values has one result, whichever sort makes it.
func sortValues(a, buf []uint64) {
	if len(a) < 512 {
		radixU64(a, 0, buf)
		return
	}
	radixLSD(a, 0, buf)
}

// thinkInsert returns the insertion time computeThink uses for request i:
// I, else Q.
func (s *Side) thinkInsert(i int) trace.Time {
	if t := s.reqInsert(i); t.Valid() {
		return t
	}
	return s.reqQueue(i)
}

// thinkAtHead reports whether request i reached the scheduler at the head
// of its dispatch list, bypassing the queue: the data of a PREFLUSH request
// on a device with a write-back cache (writeBack). blk_insert_flush sends
// it through the flush state machine; after the preflush,
// blk_flush_complete_seq (REQ_FSEQ_DATA) moves it to the requeue list and
// blk_mq_requeue_work inserts it with BLK_MQ_INSERT_AT_HEAD, which
// bfq_insert_request puts on bfqd->dispatch without __bfq_insert_request:
// no think-time sample, no class, not queued in its bfq_queue; it counts in
// bfqq->dispatched from its dispatch and updates last_end_request at its
// completion. fs-bfq-fsync-vs-seqread shows it: BFQ logged "add_request"
// for 2139 of jbd2's 4278 insertions, the 2139 journal writes, none within
// 10 us of a commit block's I (REQ_FUA alone takes the normal insertion in
// Linux 6.18: fio's 4 FUA writes have theirs).
func (p *sidePrep) thinkAtHead(s *Side, i int) bool {
	return p.writeBack && s.reqCat(i)&trace.CatFlush != 0
}

// completeKind returns the kind of request i's completion event:
// ttCompleteLate when it completed at the instant it was issued (or, never
// issued, inserted), which a replay's zero-time service gives: it follows
// its own issue there, not, as other completions, every event of its
// instant.
func (s *Side) completeKind(i int) uint64 {
	return completeKind(s.thinkInsert(i), s.reqIssue(i), s.reqComplete(i))
}

// completeKind is Side.completeKind for a request with think-time
// insertion ins, issue and completion times.
func completeKind(ins, issue, complete trace.Time) uint64 {
	start := issue
	if !start.Valid() {
		start = ins
	}
	if complete == start {
		return ttCompleteLate
	}
	return ttComplete
}

// prepThink numbers the sync queues and sorts each one's events.
func (p *sidePrep) prepThink(s *Side, scratch []uint64) {
	nr := s.NumRequests()
	// 1. Number the sync queues and count their events.
	qIndex := map[uint32]int32{}
	var counts, counts3 []int // per queue; per queue and run (insert, issue, complete)
	rq := make([]int32, nr)
	tlo, thi := trace.Time(math.MaxInt64), trace.Time(math.MinInt64)
	lastPID, lastK := uint32(0), int32(-1)
	// The request columns, a chunk at a time.
	t := &s.reqs
	var qb, ib, db, cb [chunk]int64
	var catb, bb, fb, pb [chunk]uint64
	for from := 0; from < nr; from += chunk {
		queue, insert, issue, complete := t.queue.Values(from, qb[:]), t.insert.Values(from, ib[:]), t.issue.Values(from, db[:]), t.complete.Values(from, cb[:])
		cats, bytes, flagv, pids := t.cat.Values(from, catb[:]), t.bytes.Values(from, bb[:]), t.flags.Values(from, fb[:]), t.pid.Values(from, pb[:])
		for j := range queue {
			i := from + j
			rq[i] = -1
			qt, ins := trace.Time(queue[j]), trace.Time(insert[j])
			if !ins.Valid() { // thinkInsert
				ins = qt
			}
			cat := s.cats.vals[cats[j]]
			flags := trace.RequestFlags(flagv[j])
			if cat&trace.CatFlush != 0 && bytes[j] == 0 {
				// An empty PREFLUSH never reaches the scheduler: the flush
				// machinery's own flushes, and a blkdev_issue_flush (its
				// request ends in the flush state machine, RQ_BFQQ unset).
				if flags&trace.FlagNoQueue != 0 {
					p.writeBack = true
				}
				continue
			}
			if !isSync(cat) || flags&trace.FlagMergedAway != 0 || !ins.Valid() {
				continue
			}
			pid := uint32(pids[j])
			k := lastK
			if k < 0 || pid != lastPID {
				var ok bool
				k, ok = qIndex[pid]
				if !ok {
					k = int32(len(p.queues))
					qIndex[pid] = k
					p.queues = append(p.queues, pid)
					counts = append(counts, 0)
					counts3 = append(counts3, 0, 0, 0)
					p.firstQ = append(p.firstQ, ins)
				}
				lastPID, lastK = pid, k
			}
			rq[i] = k
			counts[k]++
			counts3[3*k]++
			p.inserts++
			if !qt.Valid() {
				qt = ins
			}
			p.firstQ[k] = min(p.firstQ[k], qt)
			tlo, thi = min(tlo, ins), max(thi, ins)
			if t := trace.Time(issue[j]); t.Valid() {
				counts[k]++
				counts3[3*k+1]++
				tlo, thi = min(tlo, t), max(thi, t)
			}
			if t := trace.Time(complete[j]); t.Valid() {
				counts[k]++
				counts3[3*k+2]++
				tlo, thi = min(tlo, t), max(thi, t)
			}
		}
	}
	nq := len(p.queues)
	p.off = make([]int, nq+1)
	for k, c := range counts {
		p.off[k+1] = p.off[k] + c
	}
	if nq == 0 {
		return
	}
	// 2. Lay every queue's events out in one array: packed as
	//    ((t-tlo)<<2 | kind) << idxBits | request when that fits in 64
	//    bits, else as request<<2 | kind. Packed, each queue's events are
	//    three runs, its insertions, issues and completions, each in request
	//    order (so nearly in time order already); unpacked, in request order.
	p.idxBits = uint(bits.Len(uint(nr - 1)))
	p.tlo = tlo
	p.packed = bits.Len64(uint64(thi-tlo))+2+int(p.idxBits) <= packBits
	p.ev = make([]uint64, p.off[nq])
	if !p.packed {
		fill := slices.Clone(p.off[:nq])
		for i := range nr {
			k := rq[i]
			if k < 0 {
				continue
			}
			put := func(kind uint64) { p.ev[fill[k]] = uint64(i)<<2 | kind; fill[k]++ }
			put(ttInsert)
			if s.reqIssue(i).Valid() {
				put(ttIssue)
			}
			if s.reqComplete(i).Valid() {
				put(s.completeKind(i))
			}
		}
		for k := range nq {
			slices.SortStableFunc(p.ev[p.off[k]:p.off[k+1]], func(a, b uint64) int {
				ta, tb := p.evTime(s, a), p.evTime(s, b)
				if c := cmp.Compare(ta, tb); c != 0 {
					return c
				}
				if c := cmp.Compare(a&3, b&3); c != 0 {
					return c
				}
				return cmp.Compare(a>>2, b>>2)
			})
		}
		return
	}
	// run[3*k+r] is where queue k's next event of run r goes: once every
	// event is in place, where the run ends.
	run := make([]int, 3*nq)
	for k := range nq {
		run[3*k] = p.off[k]
		run[3*k+1] = run[3*k] + counts3[3*k]
		run[3*k+2] = run[3*k+1] + counts3[3*k+1]
	}
	start := slices.Clone(run)
	put := func(slot int, t trace.Time, kind uint64, i int) {
		p.ev[run[slot]] = (uint64(t-tlo)<<2|kind)<<p.idxBits | uint64(i)
		run[slot]++
	}
	for from := 0; from < nr; from += chunk {
		queue, insert, issue, complete := t.queue.Values(from, qb[:]), t.insert.Values(from, ib[:]), t.issue.Values(from, db[:]), t.complete.Values(from, cb[:])
		for j, k := range rq[from : from+len(queue)] {
			if k < 0 {
				continue
			}
			i := from + j
			ins := trace.Time(insert[j])
			if !ins.Valid() { // thinkInsert
				ins = trace.Time(queue[j])
			}
			put(3*int(k), ins, ttInsert, i)
			iss := trace.Time(issue[j])
			if iss.Valid() {
				put(3*int(k)+1, iss, ttIssue, i)
			}
			if t := trace.Time(complete[j]); t.Valid() {
				put(3*int(k)+2, t, completeKind(ins, iss, t), i)
			}
		}
	}
	// 3. Sort each queue's events by (time, kind, request): the values are
	//    unique and order so. Each run is sorted, then the three merged.
	maxN := 0
	for k := range nq {
		maxN = max(maxN, p.off[k+1]-p.off[k])
	}
	buf := scratch
	if len(buf) < maxN {
		buf = make([]uint64, maxN)
	}
	for k := range nq {
		for r := range 3 {
			radixU64(p.ev[start[3*k+r]:run[3*k+r]], 0, buf)
		}
		merge3(p.ev[p.off[k]:p.off[k+1]], run[3*k]-p.off[k], run[3*k+1]-p.off[k], buf)
	}
}

// maxMergedRuns bounds the processes whose issue-ordered runs issueOrder
// merges (more, and it sorts all the keys at once).
const maxMergedRuns = 64

// mergeRuns sorts a, made of the ascending runs a[runs[k]:runs[k+1]]
// (runs ascending from 0 to len(a)), by merging neighbouring runs pairwise
// until one is left, with buf (at least len(a) long) as scratch.
func mergeRuns(a []uint64, runs []int, buf []uint64) {
	src, dst := a, buf[:len(a)]
	for len(runs) > 2 {
		next := make([]int, 0, len(runs)/2+2)
		for k := 0; k+1 < len(runs); k += 2 {
			lo := runs[k]
			if k+2 < len(runs) {
				mid, hi := runs[k+1], runs[k+2]
				merge2(dst[lo:hi], src[lo:mid], src[mid:hi])
			} else {
				copy(dst[lo:], src[lo:runs[k+1]])
			}
			next = append(next, lo)
		}
		runs = append(next, len(a))
		src, dst = dst, src
	}
	if len(a) > 0 && &src[0] != &a[0] {
		copy(a, src)
	}
}

// merge2 merges the ascending x and y into out (len(x)+len(y) long).
func merge2(out, x, y []uint64) {
	i, j, k := 0, 0, 0
	for i < len(x) && j < len(y) {
		if x[i] <= y[j] {
			out[k] = x[i]
			i++
		} else {
			out[k] = y[j]
			j++
		}
		k++
	}
	k += copy(out[k:], x[i:])
	copy(out[k:], y[j:])
}

// merge3 merges a's three sorted runs a[:i], a[i:j] and a[j:] in place,
// with buf (at least len(a) long) as scratch.
func merge3(a []uint64, i, j int, buf []uint64) {
	x, y, z := a[:i], a[i:j], a[j:]
	out := buf[:0]
	for len(x) > 0 && len(y) > 0 && len(z) > 0 {
		switch {
		case x[0] <= y[0] && x[0] <= z[0]:
			out, x = append(out, x[0]), x[1:]
		case y[0] <= z[0]:
			out, y = append(out, y[0]), y[1:]
		default:
			out, z = append(out, z[0]), z[1:]
		}
	}
	// Two runs left (at most).
	if len(x) == 0 {
		x, y = y, z
	} else if len(y) == 0 {
		y = z
	}
	n := len(out)
	out = out[:n+len(x)+len(y)]
	merge2(out[n:], x, y)
	copy(a, out)
}

// event decodes a think-time event of p.ev: its time, kind and request.
func (p *sidePrep) event(s *Side, e uint64) (t trace.Time, kind uint64, req int) {
	if p.packed {
		k := e >> p.idxBits
		return p.tlo + trace.Time(k>>2), k & 3, int(e & (1<<p.idxBits - 1))
	}
	return p.evTime(s, e), e & 3, int(e >> 2)
}

// evTime returns the time of an unpacked event.
func (p *sidePrep) evTime(s *Side, e uint64) trace.Time {
	i := int(e >> 2)
	switch e & 3 {
	case ttInsert:
		return s.thinkInsert(i)
	case ttIssue:
		return s.reqIssue(i)
	}
	return s.reqComplete(i)
}

// prepLogged collects the think-time classes the side's scheduler logged.
func (p *sidePrep) prepLogged(s *Side) {
	idx := map[queueID]int{}
	for i := range s.Messages.Len() {
		m := s.Messages.At(i)
		if m.Msg.PID <= 0 {
			continue
		}
		v, ok := loggedShort(m.Msg.Body)
		if !ok {
			continue
		}
		q := queueID{uint32(m.Msg.PID), m.Msg.Sync}
		k, ok := idx[q]
		if !ok {
			k = len(p.logged)
			idx[q] = k
			p.logged = append(p.logged, queueLogged{q: q})
		}
		p.logged[k].pts = append(p.logged[k].pts, LoggedPoint{Time: m.Time, Short: v})
	}
	slices.SortFunc(p.logged, func(a, b queueLogged) int { return a.q.less(b.q) })
}

package diff

import (
	"math"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// Figures accumulated as the bios arrive.
//
// A Side measures, for each bio as the Rebuilder hands it over (addBio),
// what the bandwidth and process comparisons need of it that does not
// depend on the other side: per cgroup and per process the bytes moved,
// the active span and the busy set (window.go's step 1, with the default
// bridge), and per cgroup and for the whole side the bytes completed in
// each window of the default width. That costs a few words per cgroup,
// process, window and busy interval, and Compare then reads no bio table
// for them (busySets' sort of every bio was the diff's largest scratch).
//
// What needs the whole table stays on it: the contention window is known
// only once both sides are complete (the compared keys take both sides'
// bytes), so the figures inside it (MiB/s, shares, IOPS, the Q2C
// percentiles) are measured over the bios afterwards; so are the matching
// by (PID, Index), the dispatch order and tau, think time and latency.
//
// The accumulators give exactly what the table would (integer sums,
// minima and maxima, and busy sets merged as window.go merges them); they
// are not used, and the table is read instead, when Compare is asked for
// another window width or bridge, when the span needs wider windows than
// MaxWindows of the default width, or when the Side dropped duplicate
// bios.
type streamFigures struct {
	off bool // a completion beyond MaxWindows windows: not kept

	width int64 // window width and bridge, ns (Options' default Window)

	cgroups map[uint64]*streamKey
	pids    map[uint32]*streamPID
	total   []uint64 // bytes completed per window, all cgroups

	// The cgroup and process looked up last (bios come from a few of
	// each in turn): lastCg is valid when lastC is not nil, lastPID when
	// lastP is not.
	lastCg  uint64
	lastC   *streamKey
	lastPID uint32
	lastP   *streamPID
}

// streamKey is one cgroup's or process's accumulation on one side.
type streamKey struct {
	bytes       uint64
	first, last int64    // the cgroup's active span: least Q, greatest C (ns)
	win         []uint64 // bytes completed per window (cgroups only)
	busy        []interval
}

// streamPID is a process's accumulation: compareProcesses' span starts at
// the C of the process's first bio in the table's order (least Index)
// unless a Q is earlier, and its cgroup is that bio's.
type streamPID struct {
	streamKey
	minIndex  uint32
	firstDone int64
	minQ      int64
	cgroup    uint64
	seen      bool
}

// defaultWindow is Options' default Window, ns.
var defaultWindow = int64(Options{}.withDefaults().Window)

// add accumulates one bio.
func (f *streamFigures) add(b *trace.Bio) {
	if f.off {
		return
	}
	if f.cgroups == nil {
		f.width = defaultWindow
		f.cgroups = map[uint64]*streamKey{}
		f.pids = map[uint32]*streamPID{}
	}
	q, d := b.Queue, b.Done
	busy := d.Valid() && q.Valid() && d >= q
	if !d.Valid() || d < 0 {
		if busy { // a negative completion time, still a busy interval
			f.key(b.Cgroup).addBusy(int64(q), int64(d), f.width)
			f.pid(b.PID).addBusy(int64(q), int64(d), f.width)
		}
		return
	}
	w := int64(d) / f.width
	if w >= MaxWindows {
		*f = streamFigures{off: true}
		return
	}
	bytes := uint64(b.Bytes)
	c := f.key(b.Cgroup)
	if q.Valid() {
		c.first = min(c.first, int64(q))
	}
	c.last = max(c.last, int64(d))
	c.bytes += bytes
	c.win = addAt(c.win, int(w), bytes)
	f.total = addAt(f.total, int(w), bytes)

	p := f.pid(b.PID)
	if !p.seen || b.Index < p.minIndex {
		p.seen, p.minIndex, p.firstDone, p.cgroup = true, b.Index, int64(d), b.Cgroup
	}
	if q.Valid() {
		p.minQ = min(p.minQ, int64(q))
	}
	p.last = max(p.last, int64(d))
	p.bytes += bytes
	if busy {
		c.addBusy(int64(q), int64(d), f.width)
		p.addBusy(int64(q), int64(d), f.width)
	}
}

func (f *streamFigures) key(cg uint64) *streamKey {
	if f.lastC != nil && f.lastCg == cg {
		return f.lastC
	}
	c := f.cgroups[cg]
	if c == nil {
		c = &streamKey{first: math.MaxInt64, last: math.MinInt64}
		f.cgroups[cg] = c
	}
	f.lastCg, f.lastC = cg, c
	return c
}

func (f *streamFigures) pid(pid uint32) *streamPID {
	if f.lastP != nil && f.lastPID == pid {
		return f.lastP
	}
	p := f.pids[pid]
	if p == nil {
		p = &streamPID{streamKey: streamKey{last: math.MinInt64}, minQ: math.MaxInt64}
		f.pids[pid] = p
	}
	f.lastPID, f.lastP = pid, p
	return p
}

// addAt adds v to s[i], growing s with zeros as needed.
func addAt(s []uint64, i int, v uint64) []uint64 {
	if i >= len(s) {
		s = slices.Grow(s, i+1-len(s))[:i+1]
	}
	s[i] += v
	return s
}

// addBusy merges the busy interval [q, d] into k's busy set, kept as the
// components of the union of the closed intervals [q, d+bridge] (sorted,
// disjoint, not touching): the sets busySets builds by sorting, whatever
// the order the bios come in.
func (k *streamKey) addBusy(q, d, bridge int64) {
	from, to := q, d+bridge
	ivs := k.busy
	n := len(ivs)
	if n == 0 || ivs[n-1].to < from { // in order: the usual case
		k.busy = append(ivs, interval{from, to})
		return
	}
	if last := &ivs[n-1]; last.from <= from {
		// Within reach of the last component only (the earlier ones end
		// before it starts, so before from): the search below would find
		// it alone and widen it.
		last.to = max(last.to, to)
		return
	}
	// The first component reaching from, and those up to to.
	i, _ := slices.BinarySearchFunc(ivs, from, func(v interval, t int64) int {
		if v.to < t {
			return -1
		}
		return 1
	})
	j := i
	for j < n && ivs[j].from <= to {
		from, to = min(from, ivs[j].from), max(to, ivs[j].to)
		j++
	}
	k.busy = slices.Replace(ivs, i, j, interval{from, to})
}

// busySets returns the busy sets of the cgroups (pids false) or the
// processes as busySets does with the given bridge, or false when they
// were not accumulated with it.
func (f *streamFigures) busySets(pids bool, bridge int64) (map[uint64][]interval, bool) {
	if f.off || f.width != bridge {
		return nil, false
	}
	out := map[uint64][]interval{}
	put := func(id uint64, k *streamKey) {
		if len(k.busy) == 0 {
			return
		}
		ivs := make([]interval, len(k.busy))
		for i, v := range k.busy {
			ivs[i] = interval{v.from, v.to - bridge}
		}
		out[id] = ivs
	}
	if pids {
		for pid, p := range f.pids {
			put(uint64(pid), &p.streamKey)
		}
	} else {
		for cg, c := range f.cgroups {
			put(cg, c)
		}
	}
	return out, true
}

// bytesBy returns the bytes completed (at or after time 0) per cgroup or
// process, as bytesBy does.
func (f *streamFigures) bytesBy(pids bool) (map[uint64]uint64, bool) {
	if f.off {
		return nil, false
	}
	out := map[uint64]uint64{}
	if pids {
		for pid, p := range f.pids {
			if p.seen {
				out[uint64(pid)] = p.bytes
			}
		}
	} else {
		for cg, c := range f.cgroups {
			if c.last != math.MinInt64 {
				out[cg] = c.bytes
			}
		}
	}
	return out, true
}

// usable reports whether the accumulation holds for windows of width win
// (ns): it was kept, and at that width.
func (f *streamFigures) usable(win int64) bool { return !f.off && f.width == win }

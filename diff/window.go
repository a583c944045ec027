package diff

import (
	"cmp"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// The contention window.
//
// A closed-loop replay moves the captured bytes of every cgroup and process;
// a scheduler that favours one finishes it early, and the rest then has the
// device to itself. Figures over each cgroup's whole active span mix the
// contended part with the uncontended tail and say little about what the
// scheduler did while the cgroups competed. So the headline figures are
// measured over each side's contention window:
//
//  1. A key (a cgroup, or a process) is busy from the Q of each of its bios
//     to that bio's C. Its busy intervals are merged, bridging gaps shorter
//     than the bridge (Options.Window, 100 ms by default: think time between
//     a completion and the next submission is not idleness).
//  2. The compared keys are chosen on the real side and must have completed
//     bytes on both: for cgroups, those given a weight (Options.Weights)
//     when any is, else every cgroup that moved at least 5 % of the real
//     bytes; for processes, every process that moved at least 5 % of them.
//  3. The window is the intersection of the compared keys' busy sets: the
//     time in which every one of them had I/O queued or in flight. It may be
//     a union of several intervals; its length is their sum.
//  4. A bio counts toward the window when its C falls inside it (ends
//     included): MiB/s = its bytes / the window's length, IOPS = completed
//     bios / the window's length, share = a key's bytes / the bytes of every
//     bio completing in the window (all keys, compared or not), latency =
//     the bios' Q2C (bio queued to its request's completion).
//
// With one compared key the window is its busy set. When a side's window is
// empty or too short to measure a rate over (shorter than both the bridge
// and a tenth of the side's active span: the keys hardly overlapped, or
// none qualified), that side's window is its whole active span, first Q to
// last C over every bio, and Bandwidth.WindowFallback says so.

// interval is [From, To] in ns.
type interval struct{ from, to int64 }

// minComparedFraction is the share of the real bytes a cgroup or process must
// have moved to be a compared key (when no weights name the cgroups).
const minComparedFraction = 0.05

// busySets returns each key's merged busy intervals on a side (by pid
// when pids, else by cgroup: bioKey), from the figures accumulated as the
// bios arrived when they hold for bridge.
func busySets(s *Side, pids bool, bridge int64) map[uint64][]interval {
	if m, ok := s.stream.busySets(pids, bridge); ok {
		return m
	}
	type qb struct {
		k     uint64
		q, d  int64
		index int
	}
	busy := func(i int) (q, d trace.Time, ok bool) {
		q, d = s.bioQueue(i), s.bioDone(i)
		return q, d, d.Valid() && q.Valid() && d >= q
	}
	n := 0
	for i := range s.NumBios() {
		if _, _, ok := busy(i); ok {
			n++
		}
	}
	all := make([]qb, 0, n) // sized once: this is the diff's largest scratch
	for i := range s.NumBios() {
		if q, d, ok := busy(i); ok {
			all = append(all, qb{s.bioKey(i, pids), int64(q), int64(d), i})
		}
	}
	slices.SortFunc(all, func(a, b qb) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		if c := cmp.Compare(a.q, b.q); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	out := map[uint64][]interval{}
	for i := 0; i < len(all); {
		k := all[i].k
		var ivs []interval
		cur := interval{all[i].q, all[i].d}
		for i++; i < len(all) && all[i].k == k; i++ {
			if all[i].q <= cur.to+bridge {
				cur.to = max(cur.to, all[i].d)
				continue
			}
			ivs = append(ivs, cur)
			cur = interval{all[i].q, all[i].d}
		}
		out[k] = append(ivs, cur)
	}
	return out
}

// intersect returns the intersection of two sorted, disjoint interval lists.
func intersect(a, b []interval) []interval {
	var out []interval
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].from, b[j].from), min(a[i].to, b[j].to)
		if lo < hi {
			out = append(out, interval{lo, hi})
		}
		if a[i].to < b[j].to {
			i++
		} else {
			j++
		}
	}
	return out
}

func length(ivs []interval) int64 {
	var n int64
	for _, v := range ivs {
		n += v.to - v.from
	}
	return n
}

// find returns the index of the interval of ivs (sorted, disjoint) that
// holds t (ends included), and whether there is one.
func find(ivs []interval, t int64) (int, bool) {
	i, _ := slices.BinarySearchFunc(ivs, t, func(v interval, t int64) int {
		if v.to < t {
			return -1
		}
		if v.from > t {
			return 1
		}
		return 0
	})
	return i, i < len(ivs) && ivs[i].from <= t && t <= ivs[i].to
}

// windowOf intersects the busy sets of keys.
func windowOf(busy map[uint64][]interval, keys []uint64) []interval {
	if len(keys) == 0 {
		return nil
	}
	w := busy[keys[0]]
	for _, k := range keys[1:] {
		w = intersect(w, busy[k])
	}
	return w
}

// keyFigures are one key's figures over a set of time on one side.
type keyFigures struct {
	bytes uint64
	bios  int
	lat   []float64 // Q2C, s
}

// WindowFigures are a cgroup's, a process's or the whole device's figures
// over one side's contention window.
type WindowFigures struct {
	MiBps float64 `json:"mib_per_s"`
	IOPS  float64 `json:"iops"`
	Share float64 `json:"share"`       // of the bytes completed in the window, 0..1
	P50   float64 `json:"p50_seconds"` // Q2C of the bios completed in the window
	P99   float64 `json:"p99_seconds"`
	Bios  int     `json:"bios"`
}

// sideWindow is a side's contention window and the figures over it.
type sideWindow struct {
	ivs   []interval
	ns    int64
	keys  map[uint64]*keyFigures // by cgroup or pid
	total keyFigures
}

// measure accumulates the bios completing in ivs by key: by pid when pids,
// else by cgroup (bioKey).
func measure(s *Side, ivs []interval, pids bool) *sideWindow {
	w := &sideWindow{ivs: ivs, ns: length(ivs), keys: map[uint64]*keyFigures{}}
	if w.ns <= 0 {
		return w
	}
	t := &s.bios
	keyCol := &t.cgroup
	if pids {
		keyCol = &t.pid
	}
	// The key and the interval met last: bios come from a few keys in
	// turn, and each key's in time order, mostly.
	var lastK uint64
	var last *keyFigures
	hit := interval{1, 0} // empty
	var db, qb [chunk]int64
	var bb, kb [chunk]uint64
	for from := 0; from < t.n; from += chunk {
		dones, queues, bytesv, keys := t.done.Values(from, db[:]), t.queue.Values(from, qb[:]), t.bytes.Values(from, bb[:]), keyCol.Values(from, kb[:])
		for j := range dones {
			done := trace.Time(dones[j])
			if !done.Valid() {
				continue
			}
			if d := int64(done); d < hit.from || d > hit.to {
				h, ok := find(ivs, d)
				if !ok {
					continue
				}
				hit = ivs[h]
			}
			k := keys[j]
			if !pids {
				k = s.cgroups.vals[k]
			}
			if last == nil || k != lastK {
				last = w.keys[k]
				if last == nil {
					last = &keyFigures{}
					w.keys[k] = last
				}
				lastK = k
			}
			f := last
			bytes := bytesv[j]
			f.bytes += bytes
			f.bios++
			w.total.bytes += bytes
			w.total.bios++
			if q := trace.Time(queues[j]); q.Valid() && done >= q {
				l := float64(done-q) / 1e9
				f.lat = append(f.lat, l)
			}
		}
	}
	// The total's latencies are every key's (quantiles2 is of the values,
	// in any order): one slice of their length, not grown beside them.
	n := 0
	for _, f := range w.keys {
		n += len(f.lat)
	}
	w.total.lat = make([]float64, 0, n)
	for _, f := range w.keys {
		w.total.lat = append(w.total.lat, f.lat...)
	}
	return w
}

// figures returns the figures of f over w.
func (w *sideWindow) figures(f *keyFigures) WindowFigures {
	if f == nil || w.ns <= 0 {
		return WindowFigures{}
	}
	sec := float64(w.ns) / 1e9
	out := WindowFigures{MiBps: float64(f.bytes) / mib / sec, IOPS: float64(f.bios) / sec, Bios: f.bios}
	if w.total.bytes > 0 {
		out.Share = float64(f.bytes) / float64(w.total.bytes)
	}
	if len(f.lat) > 0 {
		out.P50, out.P99 = quantiles2(f.lat, 0.5, 0.99)
	}
	return out
}

// comparedKeys picks the compared keys from the bytes each side moved per
// key: keys with bytes on both sides, and either named in want (when any
// named key has bytes) or with at least minComparedFraction of the real
// total.
func comparedKeys(realBytes, predBytes map[uint64]uint64, want map[uint64]int) []uint64 {
	var tot uint64
	for _, b := range realBytes {
		tot += b
	}
	var named, big []uint64
	for k, b := range realBytes {
		if b == 0 || predBytes[k] == 0 {
			continue
		}
		if _, ok := want[k]; ok {
			named = append(named, k)
		}
		if float64(b) >= minComparedFraction*float64(tot) {
			big = append(big, k)
		}
	}
	out := big
	if len(named) > 0 {
		out = named
	}
	slices.Sort(out)
	return out
}

func bytesBy(s *Side, pids bool) map[uint64]uint64 {
	if m, ok := s.stream.bytesBy(pids); ok {
		return m
	}
	m := map[uint64]uint64{}
	for i := range s.NumBios() {
		if d := s.bioDone(i); d.Valid() && d >= 0 {
			m[s.bioKey(i, pids)] += uint64(s.bioBytes(i))
		}
	}
	return m
}

// bioKey returns the key bio i is measured by: its PID when pids, else
// its cgroup.
func (s *Side) bioKey(i int, pids bool) uint64 {
	if pids {
		return uint64(s.bioPID(i))
	}
	return s.bioCgroup(i)
}

// contention is both sides' contention windows for one kind of key.
type contention struct {
	keys       []uint64 // compared keys
	real, pred *sideWindow
	fallback   bool // a side's window is its whole active span
}

// contentionOf returns both sides' contention windows by pid when pids,
// else by cgroup.
func contentionOf(real, pred *Side, pids bool, want map[uint64]int, bridge int64) contention {
	keys := comparedKeys(bytesBy(real, pids), bytesBy(pred, pids), want)
	c := contention{keys: keys}
	win := func(s *Side) []interval {
		w := windowOf(busySets(s, pids, bridge), keys)
		p := s.prepared()
		if p.first == trace.NoTime || p.last <= p.first {
			return w
		}
		span := int64(p.last - p.first)
		if n := length(w); n > 0 && n >= min(bridge, span/10) {
			return w
		}
		c.fallback = true
		return []interval{{int64(p.first), int64(p.last)}}
	}
	c.real = measure(real, win(real), pids)
	c.pred = measure(pred, win(pred), pids)
	return c
}

// seconds returns a window's length in seconds.
func (w *sideWindow) seconds() float64 { return float64(w.ns) / 1e9 }

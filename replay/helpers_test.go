package replay_test

import (
	"testing"

	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"sort"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/mqdeadline"
	"github.com/tracesched/tracesched/scheduler/none"
	"github.com/tracesched/tracesched/trace"
)

func newNone(h replay.Host) (replay.Scheduler, error) { return none.New(h, replay.Options{}) }
func newMQDL(h replay.Host) (replay.Scheduler, error) {
	return mqdeadline.New(h, replay.Options{})
}

// fixedDevice serves every request in lat, any number at once.
type fixedDevice struct{ lat trace.Time }

func (d *fixedDevice) Issue(now trace.Time, rq *replay.Request) trace.Time { return now + d.lat }
func (d *fixedDevice) Done(now trace.Time, rq *replay.Request)             {}

// serialDevice serves one request at a time, each in lat.
type serialDevice struct {
	lat  trace.Time
	busy trace.Time
}

func (d *serialDevice) Issue(now trace.Time, rq *replay.Request) trace.Time {
	start := max(now, d.busy)
	d.busy = start + d.lat
	return d.busy
}
func (d *serialDevice) Done(now trace.Time, rq *replay.Request) {}

// captureDevice replays the capture's own D2C of each request's first bio
// (fallback for bios whose request the capture never completed), and
// records the predicted issue time of every bio with its captured one.
type captureDevice struct {
	fallback trace.Time
	pairs    []issuePair
}

type issuePair struct {
	pid        uint32
	index      uint32
	real, pred trace.Time
	realDone   trace.Time
}

func (d *captureDevice) Issue(now trace.Time, rq *replay.Request) trace.Time {
	recs := rq.Records()
	lat := d.fallback
	if r := recs[0]; r.Issue.Valid() && r.Done.Valid() && r.Done >= r.Issue {
		lat = r.Done - r.Issue
	}
	for _, r := range recs {
		d.pairs = append(d.pairs, issuePair{r.PID, r.Index, r.Issue, now, r.Done})
	}
	return now + lat
}
func (d *captureDevice) Done(now trace.Time, rq *replay.Request) {}

// tauOfPairs returns Kendall's tau-b of captured vs predicted issue times
// over the bios both issued.
func tauOfPairs(ps []issuePair) float64 {
	var x, y []float64
	for _, p := range ps {
		if p.real.Valid() {
			x = append(x, float64(p.real))
			y = append(y, float64(p.pred))
		}
	}
	return kendallTau(x, y)
}

// kendallTau computes Kendall's tau-b in O(n log n) (Knight's algorithm:
// sort by (x, y), count ties, then count discordant pairs as the
// inversions of y by merge sort).
func kendallTau(x, y []float64) float64 {
	n := len(x)
	if n < 2 {
		return math.NaN()
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if x[i] != x[j] {
			return x[i] < x[j]
		}
		return y[i] < y[j]
	})
	n0 := float64(n) * float64(n-1) / 2
	var n1, n3 float64
	for i := 0; i < n; {
		j := i
		for j < n && x[idx[j]] == x[idx[i]] {
			j++
		}
		t := float64(j - i)
		n1 += t * (t - 1) / 2
		for k := i; k < j; {
			l := k
			for l < j && y[idx[l]] == y[idx[k]] {
				l++
			}
			u := float64(l - k)
			n3 += u * (u - 1) / 2
			k = l
		}
		i = j
	}
	ys := make([]float64, n)
	for i, k := range idx {
		ys[i] = y[k]
	}
	buf := make([]float64, n)
	swaps := float64(mergeCount(ys, buf))
	var n2 float64
	for i := 0; i < n; {
		j := i
		for j < n && ys[j] == ys[i] {
			j++
		}
		t := float64(j - i)
		n2 += t * (t - 1) / 2
		i = j
	}
	den := math.Sqrt((n0 - n1) * (n0 - n2))
	if den == 0 {
		return math.NaN()
	}
	return (n0 - n1 - n2 + n3 - 2*swaps) / den
}

// mergeCount sorts a and returns its number of strict inversions.
func mergeCount(a, buf []float64) int64 {
	n := len(a)
	if n < 2 {
		return 0
	}
	m := n / 2
	c := mergeCount(a[:m], buf[:m]) + mergeCount(a[m:], buf[m:])
	i, j, k := 0, m, 0
	for i < m && j < n {
		if a[j] < a[i] {
			buf[k] = a[j]
			c += int64(m - i)
			j++
		} else {
			buf[k] = a[i]
			i++
		}
		k++
	}
	k += copy(buf[k:], a[i:m])
	copy(buf[k:], a[j:n])
	copy(a, buf[:n])
	return c
}

// eventHasher hashes every field of the events it is given.
type eventHasher struct {
	h hash.Hash
	n int
}

func newEventHasher() *eventHasher { return &eventHasher{h: sha256.New()} }

func (eh *eventHasher) add(e *trace.Event) error {
	var b [8 * 12]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(e.Time))
	binary.LittleEndian.PutUint64(b[8:], uint64(e.Seq))
	binary.LittleEndian.PutUint64(b[16:], uint64(e.Dev))
	binary.LittleEndian.PutUint64(b[24:], uint64(e.Action))
	binary.LittleEndian.PutUint64(b[32:], uint64(e.Cat))
	binary.LittleEndian.PutUint64(b[40:], e.Sector)
	binary.LittleEndian.PutUint64(b[48:], uint64(e.Bytes))
	binary.LittleEndian.PutUint64(b[56:], uint64(e.PID))
	binary.LittleEndian.PutUint64(b[64:], e.Cgroup)
	binary.LittleEndian.PutUint64(b[72:], e.Depth)
	binary.LittleEndian.PutUint64(b[80:], uint64(e.CPU))
	eh.h.Write(b[:])
	eh.h.Write([]byte(e.Comm + "\x00" + e.Text + "\x00"))
	eh.n++
	return nil
}

func (eh *eventHasher) sum() [32]byte {
	var s [32]byte
	copy(s[:], eh.h.Sum(nil))
	return s
}

// psyncRecords builds a qd1 synchronous reader: each bio queued think
// after the previous completion, served in lat.
func psyncRecords(pid uint32, n int, lat, think trace.Time, start trace.Time) []replay.Record {
	recs := make([]replay.Record, n)
	t := start
	for i := range recs {
		recs[i] = replay.Record{PID: pid, Comm: "psync", Sector: uint64(i) * 1000 * 8, Bytes: 4096,
			Cat: trace.CatRead | trace.CatSync, Queue: t, Issue: t, Done: t + lat}
		t += lat + think
	}
	return recs
}

// qdRecords builds a reader keeping depth bios in flight on a device of
// latency lat: a bio is queued think after each completion.
func qdRecords(pid uint32, n, depth int, lat, think trace.Time, sector uint64, write bool) []replay.Record {
	cat := trace.CatRead | trace.CatSync
	if write {
		cat = trace.CatWrite | trace.CatSync
	}
	recs := make([]replay.Record, 0, n)
	var inflight timeHeap // completions of the bios in flight
	t := trace.Time(0)
	for i := 0; i < n; i++ {
		if i >= depth {
			t = max(t, inflight.pop()+think)
		} else {
			t += 1000
		}
		d := t + lat + trace.Time((i*7919)%5)*1000
		recs = append(recs, replay.Record{PID: pid, Comm: "qd", Sector: sector + uint64((i*104729)%100000)*8,
			Bytes: 4096, Cat: cat, Queue: t, Issue: t, Done: d})
		inflight.push(d)
	}
	return recs
}

// timeHeap is a min-heap of times.
type timeHeap []trace.Time

func (h *timeHeap) push(t trace.Time) {
	*h = append(*h, t)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *timeHeap) pop() trace.Time {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if l+1 < n && s[l+1] < s[l] {
			m = l + 1
		}
		if s[i] <= s[m] {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// collected is the workload a Collector builds from evs, in order.
func collected(t *testing.T, evs []trace.Event) *replay.Workload {
	t.Helper()
	c := replay.NewCollector()
	for i := range evs {
		c.Add(&evs[i])
	}
	w, err := c.Workload()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

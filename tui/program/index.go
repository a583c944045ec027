package program

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// SideIndex lists one side's dispatches (issued requests) by issue time,
// so that a view finds the dispatches of a time window by binary search
// instead of scanning the trace. Entry i is the request Side.RequestAt(Order[i]),
// issued at Issue[i], in queue lane QueueLane[i] and cgroup lane
// CgroupLane[i] (indexes into Index.QueueLanes and Index.CgroupLanes).
type SideIndex struct {
	Side       *diff.Side
	Order      []int32
	Issue      []trace.Time
	QueueLane  []int32
	CgroupLane []int32
}

// Lower returns the first entry issued at or after t (len when none).
func (s *SideIndex) Lower(t trace.Time) int {
	i, _ := slices.BinarySearch(s.Issue, t)
	return i
}

// MessageLower returns the first of the side's messages at or after t.
func (s *SideIndex) MessageLower(t trace.Time) int {
	return s.Side.Messages.Search(t)
}

// Lane is a row of the timeline: a scheduler queue or a cgroup.
type Lane struct {
	Name string
	Key  int64 // QueueKey for queue lanes, the cgroup id for cgroup lanes
}

// Index holds everything the views precompute over the Result once, at
// startup: O(n log n) in the trace size, so that no key press costs time
// proportional to it.
type Index struct {
	Real, Pred  SideIndex
	QueueLanes  []Lane
	CgroupLanes []Lane
	// Start and End bound both sides' dispatches (0, 0 when none).
	Start, End trace.Time
	// QueueMessages[side][QueueKey] lists the indexes of the messages that
	// name that queue, in time order (side 0 real, 1 predicted).
	QueueMessages [2]map[int64][]int32
	cgNames       map[uint64]string
}

// QueueKey identifies a (process, direction) queue: pid<<1 | sync. A
// shared (merged) BFQ queue has pid -1.
func QueueKey(pid int64, sync bool) int64 {
	k := pid << 1
	if sync {
		k |= 1
	}
	return k
}

// QueueName prints a queue key as the diff package names queues: "4012S".
func QueueName(k int64) string {
	pid := k >> 1
	c := "A"
	if k&1 != 0 {
		c = "S"
	}
	if pid < 0 {
		return "SHARED-" + c
	}
	return strconv.FormatInt(pid, 10) + c
}

// IsSync reports whether a request of these categories goes to a sync
// queue, as the kernel's op_is_sync (and the diff package) decide.
func IsSync(c trace.Category) bool {
	return !c.IsWrite() || c&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
}

// NewIndex builds the index of a Result. Either side may be nil.
func NewIndex(res *diff.Result) *Index {
	ix := &Index{cgNames: map[uint64]string{}}
	for _, c := range res.Cgroups {
		if c.Path != "" {
			ix.cgNames[c.ID] = c.Path
		}
	}
	for _, s := range []*diff.Side{res.RealSide, res.PredSide} {
		if s == nil {
			continue
		}
		for id, p := range s.Meta.Cgroups {
			if _, ok := ix.cgNames[id]; !ok && p != "" {
				ix.cgNames[id] = p
			}
		}
	}
	qLanes := map[int64]int32{}
	cLanes := map[uint64]int32{}
	first := true
	for side, s := range []*diff.Side{res.RealSide, res.PredSide} {
		si := &ix.Real
		if side == 1 {
			si = &ix.Pred
		}
		ix.QueueMessages[side] = map[int64][]int32{}
		if s == nil {
			si.Side = &diff.Side{}
			continue
		}
		si.Side = s
		ix.buildSide(si, qLanes, cLanes)
		if n := len(si.Issue); n > 0 {
			if first {
				ix.Start, ix.End = si.Issue[0], si.Issue[n-1]
				first = false
			}
			ix.Start = min(ix.Start, si.Issue[0])
			ix.End = max(ix.End, si.Issue[n-1])
		}
		for i := range s.Messages.Len() {
			m := s.Messages.At(i).Msg
			if m.PID == 0 {
				continue
			}
			k := QueueKey(int64(m.PID), m.Sync)
			ix.QueueMessages[side][k] = append(ix.QueueMessages[side][k], int32(i))
		}
	}
	ix.QueueLanes = make([]Lane, len(qLanes))
	for k, i := range qLanes {
		ix.QueueLanes[i] = Lane{Name: QueueName(k), Key: k}
	}
	ix.CgroupLanes = make([]Lane, len(cLanes))
	for id, i := range cLanes {
		ix.CgroupLanes[i] = Lane{Name: ix.CgroupName(id), Key: int64(id)}
	}
	return ix
}

func (ix *Index) buildSide(si *SideIndex, qLanes map[int64]int32, cLanes map[uint64]int32) {
	type ent struct {
		t trace.Time
		i int32
	}
	reqs := si.Side.RequestSlice()
	es := make([]ent, 0, len(reqs))
	for i := range reqs {
		if reqs[i].Issue.Valid() {
			es = append(es, ent{reqs[i].Issue, int32(i)})
		}
	}
	slices.SortFunc(es, func(a, b ent) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	n := len(es)
	si.Order = make([]int32, n)
	si.Issue = make([]trace.Time, n)
	si.QueueLane = make([]int32, n)
	si.CgroupLane = make([]int32, n)
	lastQ, lastQL := int64(-1<<62), int32(0)
	lastC, lastCL := ^uint64(0), int32(0)
	for k, e := range es {
		r := &reqs[e.i]
		si.Order[k], si.Issue[k] = e.i, e.t
		q := QueueKey(int64(r.PID), IsSync(r.Cat))
		if q != lastQ {
			l, ok := qLanes[q]
			if !ok {
				l = int32(len(qLanes))
				qLanes[q] = l
			}
			lastQ, lastQL = q, l
		}
		si.QueueLane[k] = lastQL
		if r.Cgroup != lastC {
			l, ok := cLanes[r.Cgroup]
			if !ok {
				l = int32(len(cLanes))
				cLanes[r.Cgroup] = l
			}
			lastC, lastCL = r.Cgroup, l
		}
		si.CgroupLane[k] = lastCL
	}
}

// CgroupName names a cgroup by its path when known, else "cg <id>".
func (ix *Index) CgroupName(id uint64) string {
	if p, ok := ix.cgNames[id]; ok {
		return p
	}
	if id == 0 {
		return "(none)"
	}
	return "cg " + strconv.FormatUint(id, 10)
}

// Side returns the real (0) or predicted (1) side's index.
func (ix *Index) Side(side int) *SideIndex {
	if side == 0 {
		return &ix.Real
	}
	return &ix.Pred
}

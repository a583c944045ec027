package replay

import (
	"container/heap"
	"sort"

	"github.com/tracesched/tracesched/trace"
)

// Exclusive flush sections (step 7 of the closed-loop rule on Workload).
//
// PostgreSQL's backends write and flush the WAL under one lock
// (WALWriteLock, XLogWrite then issue_xlog_fsync): a backend's WAL write
// (a REQ_SYNC write) and the fdatasync that follows (an empty PREFLUSH,
// blkdev_issue_flush, RWBS FWS) never overlap another backend's. In
// fs-bfq-pgbench 2 of 2,166 such sections overlap another process's
// (fs-mqdl-pgbench 7 of 2,903); replayed without the lock, each backend
// went on its own think time and 870 of them overlapped, the flush
// machinery shared the flushes that came together (blk_kick_flush: one
// flush in flight, the pending ones share the next), and the replay
// issued 96 flush requests fewer than the capture's 2,166.
//
// A section of process p runs from the Q of a synchronous data write
// (REQ_SYNC, not a flush) of p outside a section to the completion of p's
// next empty PREFLUSH bio. Processes with at least lockMinSections
// sections whose sections overlap another process's for at most
// 1/lockMaxOverlap of them are taken to share a lock: in the replay (closed
// loop) a section's first bio does not arrive while another member holds
// the lock (its section opened and not yet closed), and arrives no earlier
// than the lock's release plus the process's hand-off delay (the shortest
// time from another member's release to its own section's first Q in the
// capture: its wake-up). The sections that overlapped in the capture are
// not replayed as locked. One lock per workload; workloads built from
// records (NewWorkloadFromRecords) infer none.
//
// Limits: a lock is seen only through the flushes it guards; a process
// that took the lock and found its WAL already flushed (group commit)
// issues nothing and is not seen waiting. Independent fsync writers whose
// sections overlap by chance (more than 1 % of them) get no lock.
const (
	lockMinSections = 20
	lockMaxOverlap  = 100
)

// lockMark is what step 7 says of one bio.
type lockMark struct {
	open, close bool       // first bio of a section; the empty PREFLUSH that ends it
	wake        trace.Time // open: the process's hand-off delay
	// waited (open): another member released the lock after the
	// process's own latest completion, and the bio came gap after that
	// release, within half the time since that completion (as step 6):
	// the process was waiting for the lock, its think time since its
	// completion is mostly that wait, and it arrives gap after the
	// release.
	waited bool
	gap    trace.Time
}

// sectionEnd reports whether a bio of cat and bytes is an empty PREFLUSH
// write, which ends its process's section.
func sectionEnd(cat trace.Category, bytes uint32) bool {
	return cat.IsWrite() && cat&trace.CatFlush != 0 && bytes == 0
}

// lockPossible reports whether a workload whose processes have flushes
// empty PREFLUSH writes (sectionEnd) each can have a lock: two of them
// with lockMinSections or more.
func lockPossible(flushes map[uint32]int) bool {
	candidates := 0
	for _, c := range flushes {
		if c >= lockMinSections {
			candidates++
		}
	}
	return candidates >= 2
}

// inferLock finds the exclusive sections of the records (in Queue order)
// and returns the marks of their bios, nil when no lock is inferred. done
// gives a record's completion for its process; sectionEnds counts each
// process's empty PREFLUSH writes among the records (sectionEnd).
func inferLock(n int, at func(i int) storedRecord, done func(sr *storedRecord) trace.Time, sectionEnds map[uint32]int) map[bioKey]lockMark {
	// A section ends with its process's zero-byte flush: without two
	// processes with lockMinSections of them there is no lock, and no
	// pass over every completion (a raw-device capture has none).
	if !lockPossible(sectionEnds) {
		return nil
	}
	type section struct {
		pid         uint32
		open, close bioKey
		from, to    trace.Time
		overlap     bool
	}
	var secs []section
	type openSec struct {
		key  bioKey
		from trace.Time
	}
	opened := map[uint32]openSec{}
	count := map[uint32]int{}
	// Each opener's own latest completion before its Q.
	pending := map[uint32]*timeHeap{}
	latest := map[uint32]trace.Time{}
	ownC := map[bioKey]trace.Time{}
	for i := range n {
		sr := at(i)
		cat := sr.cat
		h := pending[sr.pid]
		if h == nil {
			h = &timeHeap{}
			pending[sr.pid] = h
		}
		for h.Len() > 0 && (*h)[0] <= sr.queue {
			if t := heap.Pop(h).(trace.Time); t > latest[sr.pid] {
				latest[sr.pid] = t
			}
		}
		if d := done(&sr); d.Valid() {
			heap.Push(h, d)
		}
		switch {
		case sectionEnd(cat, sr.bytes):
			o, ok := opened[sr.pid]
			if !ok {
				continue
			}
			delete(opened, sr.pid)
			if d := done(&sr); d.Valid() && d >= o.from {
				secs = append(secs, section{pid: sr.pid, open: o.key, close: bioKey{sr.pid, sr.index}, from: o.from, to: d})
				count[sr.pid]++
			}
		case cat.IsWrite() && cat&trace.CatSync != 0 && cat&trace.CatFlush == 0 && sr.bytes > 0:
			if _, ok := opened[sr.pid]; !ok {
				k := bioKey{sr.pid, sr.index}
				opened[sr.pid] = openSec{k, sr.queue}
				if c, ok := latest[sr.pid]; ok {
					ownC[k] = c
				}
			}
		}
	}
	members := 0
	for _, c := range count {
		if c >= lockMinSections {
			members++
		}
	}
	if members < 2 {
		return nil
	}
	kept := secs[:0]
	for _, s := range secs {
		if count[s.pid] >= lockMinSections {
			kept = append(kept, s)
		}
	}
	secs = kept
	sort.SliceStable(secs, func(i, j int) bool { return secs[i].from < secs[j].from })
	// Overlaps: sections of other processes open at the same time.
	overlaps := 0
	var active []int
	for i := range secs {
		s := &secs[i]
		live := active[:0]
		for _, j := range active {
			if secs[j].to > s.from {
				live = append(live, j)
			}
		}
		active = live
		for _, j := range active {
			if secs[j].pid != s.pid {
				if !secs[j].overlap {
					secs[j].overlap = true
					overlaps++
				}
				if !s.overlap {
					s.overlap = true
					overlaps++
				}
			}
		}
		active = append(active, i)
	}
	if overlaps*lockMaxOverlap > len(secs) {
		return nil
	}
	// Hand-off delays: from the latest release by another member to a
	// section's first Q, the shortest per process.
	wake := map[uint32]trace.Time{}
	waited := map[bioKey]trace.Time{}
	var lastTo trace.Time
	var lastPID uint32
	have := false
	for i := range secs {
		s := &secs[i]
		if have && lastPID != s.pid && lastTo <= s.from {
			if w, ok := wake[s.pid]; !ok || s.from-lastTo < w {
				wake[s.pid] = s.from - lastTo
			}
			// As step 6: released by the lock when the bio came within
			// half the time since its own latest completion after the
			// release.
			if c, ok := ownC[s.open]; !ok || (c < lastTo && 2*(s.from-lastTo) <= s.from-c) {
				waited[s.open] = s.from - lastTo
			}
		}
		if !have || s.to > lastTo {
			lastTo, lastPID, have = s.to, s.pid, true
		}
	}
	marks := map[bioKey]lockMark{}
	for _, s := range secs {
		if s.overlap {
			continue
		}
		g, w := waited[s.open]
		marks[s.open] = lockMark{open: true, wake: wake[s.pid], waited: w, gap: g}
		m := marks[s.close]
		m.close = true
		marks[s.close] = m
	}
	return marks
}

// timeHeap is a min-heap of times (container/heap).
type timeHeap []trace.Time

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(trace.Time)) }
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

package diff

import (
	"cmp"
	"iter"
	"strconv"
	"strings"
	"sync"

	"github.com/tracesched/tracesched/trace"
)

// Message is one scheduler debug line of a Side (an ActionMessage event).
type Message struct {
	Time   trace.Time    // ns since the capture's origin
	Cgroup uint64        // cgroup id the record carries, 0 when none
	Text   string        // the message as recorded
	Msg    trace.Message // Text parsed: scheduler, queue, body
}

// Side is what one trace contributes to a diff: its bios, its requests and
// its scheduler messages. Build it with Load, or NewSide, Add for each event
// and Finish; or, for synthetic data, with FromData.
//
// The bios and requests are kept compactly, column by column (see
// store.go), and read with NumBios, BioAt, NumRequests and RequestAt, or
// in one pass with Requests.
// After Finish, bios are in (PID, Index) order, requests in ID order, and
// Messages by Time (stable, so same-time messages keep their trace order).
// A Side is read-only once finished; Compare does not modify it.
type Side struct {
	Meta     trace.Meta
	Messages MessageLog

	// Duplicates counts bios dropped because their (PID, Index) was already
	// taken (a broken stream; zero for the Rebuilder's output).
	Duplicates int
	// Stats are the Rebuilder's counters (zero for FromData).
	Stats trace.RebuildStats

	rb *trace.Rebuilder // while loading

	stream streamFigures // figures accumulated as the bios arrive (stream.go)

	bios    bioTable
	reqs    reqTable
	cats    intern[trace.Category]
	comms   intern[string]
	cgroups intern[uint64]

	sparseIDs bool // request IDs are not 1..NumRequests: Request searches
	finished  bool

	prepOnce sync.Once
	prep     *sidePrep // see prepared

	order reqReorder // while loading: the requests held back (reorder.go)

	// insertTies: the messages logged at the instant of insertions that
	// came before them in the trace, by message index (ties.go); tie
	// follows the latest instant's insertions while loading.
	insertTies []insertTie
	tie        tieState
}

// FromData builds a finished Side from already rebuilt data: the bios and
// requests are copied into the Side's tables, and the messages of msgs
// into its log (sorted by time).
func FromData(meta trace.Meta, bios []trace.Bio, reqs []trace.Request, msgs []Message) *Side {
	s := &Side{Meta: meta, Messages: MessageLogOf(msgs)}
	for i := range bios {
		s.addBio(&bios[i])
	}
	for i := range reqs {
		s.addRequest(&reqs[i])
	}
	s.finish()
	return s
}

func bioKeyCmp(a, b *trace.Bio) int {
	if c := cmp.Compare(a.PID, b.PID); c != 0 {
		return c
	}
	return cmp.Compare(a.Index, b.Index)
}

// finish sorts the data and builds the request index.
// MessageSeq yields the side's scheduler messages with their times, in
// Messages order (by time once finished).
func (s *Side) MessageSeq() iter.Seq2[trace.Time, trace.Message] {
	return func(yield func(trace.Time, trace.Message) bool) {
		for _, m := range s.Messages.All() {
			if !yield(m.Time, m.Msg) {
				return
			}
		}
	}
}

func (s *Side) finish() {
	if s.finished {
		return
	}
	s.finished = true
	s.sortTables()
	if s.Duplicates > 0 { // the accumulation counted the dropped bios
		s.stream = streamFigures{off: true}
	}
	s.sortMessages()
	s.tie = tieState{}
	s.sparseIDs = false
	var buf [chunk]uint64
	for from := 0; from < s.reqs.n && !s.sparseIDs; from += chunk {
		for _, d := range s.reqs.id.Values(from, buf[:]) { // ID less the position
			if d != 1 {
				s.sparseIDs = true
				break
			}
		}
	}
}

// Request returns the index of the request with the given ID, or -1.
func (s *Side) Request(id uint64) int {
	if id == 0 {
		return -1
	}
	n := s.reqs.n
	if !s.sparseIDs {
		if id <= uint64(n) {
			return int(id - 1)
		}
		return -1
	}
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.reqID(m) < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < n && s.reqID(lo) == id {
		return lo
	}
	return -1
}

// Bio returns the index of the bio (pid, index), or -1.
func (s *Side) Bio(pid, index uint32) int {
	k := uint64(pid)<<32 | uint64(index)
	n := s.bios.n
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(s.bioPID(m))<<32|uint64(s.bioIndex(m)) < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < n && s.bioPID(lo) == pid && s.bioIndex(lo) == index {
		return lo
	}
	return -1
}

// span returns the first queue time and the last completion time over the
// side's bios (NoTime, NoTime when none completed).
func (s *Side) span() (first, last trace.Time) {
	first, last = trace.NoTime, trace.NoTime
	var qb, db [chunk]int64
	for from := 0; from < s.bios.n; from += chunk {
		qs, ds := s.bios.queue.Values(from, qb[:]), s.bios.done.Values(from, db[:])
		for j := range qs {
			if q := trace.Time(qs[j]); q.Valid() && (first == trace.NoTime || q < first) {
				first = q
			}
			if d := trace.Time(ds[j]); d.Valid() && (last == trace.NoTime || d > last) {
				last = d
			}
		}
	}
	return first, last
}

// Seconds returns the side's active span in seconds: from its first queued
// bio to its last completion (0 when nothing completed).
func (s *Side) Seconds() float64 {
	return spanSeconds(s.span())
}

func spanSeconds(first, last trace.Time) float64 {
	if first == trace.NoTime || last == trace.NoTime || last <= first {
		return 0
	}
	return float64(last-first) / 1e9
}

// queueID names a scheduler queue for think-time purposes: a process and the
// direction of its I/O (sync or async).
type queueID struct {
	PID  uint32
	Sync bool
}

func (q queueID) String() string {
	c := "A"
	if q.Sync {
		c = "S"
	}
	return strconv.FormatUint(uint64(q.PID), 10) + c
}

func (q queueID) less(o queueID) int {
	if c := cmp.Compare(q.PID, o.PID); c != 0 {
		return c
	}
	if q.Sync == o.Sync {
		return 0
	}
	if !q.Sync {
		return -1
	}
	return 1
}

// isSync reports whether an operation goes to a sync queue, as the kernel's
// op_is_sync does: reads, and writes with REQ_SYNC (or FUA/flush).
func isSync(c trace.Category) bool {
	return !c.IsWrite() || c&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
}

// cgroupPath returns the path the sides' metadata give for id, or "".
func cgroupPath(id uint64, sides ...*Side) string {
	for _, s := range sides {
		if p, ok := s.Meta.Cgroups[id]; ok && p != "" {
			return p
		}
	}
	return ""
}

// schedulerName returns the scheduler a side names in its metadata or
// messages.
func (s *Side) schedulerName() string {
	for _, k := range []string{"scheduler", "sched"} {
		if v := strings.TrimSpace(s.Meta.Extra[k]); v != "" {
			return v
		}
	}
	for _, m := range s.Messages.All() {
		if m.Msg.Sched != "" {
			return m.Msg.Sched
		}
	}
	return ""
}

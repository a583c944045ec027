// Package mqdeadline models Linux 6.x block/mq-deadline.c with one priority
// level (every request best-effort, as in captures without ioprio):
//
//   - per direction, a sector-sorted list (the kernel's rb tree) and a FIFO
//     ordered by arrival, each request expiring read_expire or write_expire
//     after insertion, counted in jiffies (HZ, default 250);
//   - dispatch in batches of up to fifo_batch requests in one direction,
//     continuing in sector order from the start of the last request
//     dispatched in that direction (latest_pos; no wrap-around);
//   - a new batch prefers reads, but writes go first once reads have been
//     preferred over waiting writes writes_starved times;
//   - a new batch starts from the FIFO head when that request has expired or
//     nothing lies beyond latest_pos, else from the sorted successor;
//   - front merges found by exact start sector when front_merges is 1.
//
// Not modelled: priority levels and their aging (prio_aging_expire is
// accepted and kept), async_depth (the tag limit of async requests; the
// engine has one request pool), zoned-device write locking. At-head
// insertion (a flush's data phase) goes to dd->dispatch, served first.
package mqdeadline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

const (
	dirRead  = 0
	dirWrite = 1
)

// Tunables are mq-deadline's sysfs attributes under queue/iosched/. Times
// are in jiffies inside the model and in milliseconds in sysfs.
type Tunables struct {
	ReadExpireMs      int // read_expire: 500
	WriteExpireMs     int // write_expire: 5000
	WritesStarved     int // writes_starved: 2
	FrontMerges       int // front_merges: 1
	FifoBatch         int // fifo_batch: 16
	AsyncDepth        int // async_depth: nr_requests (accepted, not modelled)
	PrioAgingExpireMs int // prio_aging_expire: 10000 (accepted, not modelled)
}

// Defaults returns the kernel's defaults for a queue of nrRequests.
func Defaults(nrRequests int) Tunables {
	return Tunables{ReadExpireMs: 500, WriteExpireMs: 5000, WritesStarved: 2, FrontMerges: 1,
		FifoBatch: 16, AsyncDepth: nrRequests, PrioAgingExpireMs: 10000}
}

var attrs = []string{"async_depth", "fifo_batch", "front_merges", "prio_aging_expire", "read_expire", "write_expire", "writes_starved"}

func (t *Tunables) set(name, value string) error {
	v, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("mq-deadline: %s=%q: not an integer", name, value)
	}
	clamp := func(lo, hi int) int { return min(max(v, lo), hi) }
	switch name {
	case "read_expire":
		t.ReadExpireMs = clamp(0, 1<<31-1)
	case "write_expire":
		t.WriteExpireMs = clamp(0, 1<<31-1)
	case "writes_starved":
		t.WritesStarved = v
	case "front_merges":
		t.FrontMerges = clamp(0, 1)
	case "fifo_batch":
		t.FifoBatch = clamp(0, 1<<31-1)
	case "async_depth":
		t.AsyncDepth = clamp(1, 1<<31-1)
	case "prio_aging_expire":
		t.PrioAgingExpireMs = clamp(0, 1<<31-1)
	default:
		return fmt.Errorf("mq-deadline: unknown attribute %q (valid: %s)", name, strings.Join(attrs, ", "))
	}
	return nil
}

// ddRq is the model's state of a request (rq->elv.priv and its list links).
type ddRq struct {
	rq         *replay.Request
	dir        int
	fifoTime   int64  // jiffies at which it expires
	key        uint64 // sector it is sorted by
	seq        uint64 // insertion order, ties in the sort list
	prev, next *ddRq  // FIFO links
}

// fifo is an intrusive doubly linked list of requests in expiry order.
type fifo struct{ head, tail *ddRq }

func (l *fifo) empty() bool { return l.head == nil }

func (l *fifo) pushBack(d *ddRq) {
	d.prev, d.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = d
	} else {
		l.head = d
	}
	l.tail = d
}

func (l *fifo) remove(d *ddRq) {
	if d.prev != nil {
		d.prev.next = d.next
	} else {
		l.head = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		l.tail = d.prev
	}
	d.prev, d.next = nil, nil
}

// insertAfter puts d right after at (list_move(&d, &at)).
func (l *fifo) insertAfter(d, at *ddRq) {
	d.prev, d.next = at, at.next
	if at.next != nil {
		at.next.prev = d
	} else {
		l.tail = d
	}
	at.next = d
}

// Scheduler is the mq-deadline model.
type Scheduler struct {
	h  replay.Host
	t  Tunables
	hz int64

	expire    [2]int64 // fifo_expire in jiffies
	sort      [2][]*ddRq
	fifo      [2]fifo
	latestPos [2]uint64
	lastDir   int
	batching  int
	starved   int
	seq       uint64
	queued    int
	free      []*ddRq
	dispatch  []*replay.Request // dd->dispatch: requests inserted at the head
}

// New returns the mq-deadline model with the kernel's defaults, changed by
// o.Set (read_expire, write_expire and prio_aging_expire in ms, as sysfs).
// o.HZ sets the tick (default 250).
func New(h replay.Host, o replay.Options) (*Scheduler, error) {
	s := &Scheduler{h: h, t: Defaults(h.Queue().NrRequests), hz: int64(o.HZ)}
	if s.hz <= 0 {
		s.hz = 250
	}
	names := make([]string, 0, len(o.Set))
	for k := range o.Set {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := s.t.set(replay.AttrName(k), o.Set[k]); err != nil {
			return nil, err
		}
	}
	s.expire[dirRead] = s.msecsToJiffies(s.t.ReadExpireMs)
	s.expire[dirWrite] = s.msecsToJiffies(s.t.WriteExpireMs)
	return s, nil
}

// Tunables returns the model's settings.
func (s *Scheduler) Tunables() Tunables { return s.t }

// msecsToJiffies rounds up, as the kernel's msecs_to_jiffies does.
func (s *Scheduler) msecsToJiffies(ms int) int64 { return (int64(ms)*s.hz + 999) / 1000 }

// jiffies returns the tick count at now (ns).
func (s *Scheduler) jiffies(now trace.Time) int64 {
	if now < 0 {
		return 0
	}
	return int64(now) * s.hz / 1e9
}

// Name returns "mq-deadline".
func (s *Scheduler) Name() string { return "mq-deadline" }

func dirOf(rq *replay.Request) int {
	if rq.IsWrite() {
		return dirWrite
	}
	return dirRead
}

func (s *Scheduler) state(rq *replay.Request) *ddRq {
	d, _ := rq.Sched.(*ddRq)
	return d
}

// AllowMerge allows every merge the engine found (mq-deadline has no
// allow_merge hook).
func (s *Scheduler) AllowMerge(rq *replay.Request, bio *replay.Bio) bool { return true }

// RequestMerge returns the request of bio's direction that starts where bio
// ends, when front_merges is on (dd_request_merge).
func (s *Scheduler) RequestMerge(now trace.Time, bio *replay.Bio) *replay.Request {
	if s.t.FrontMerges == 0 {
		return nil
	}
	dir := dirRead
	if bio.Cat.IsWrite() {
		dir = dirWrite
	}
	l := s.sort[dir]
	end := bio.End()
	i := sort.Search(len(l), func(i int) bool { return l[i].key >= end })
	if i < len(l) && l[i].key == end {
		return l[i].rq
	}
	return nil
}

// sortIndex returns d's index in its sort list, or -1.
func (s *Scheduler) sortIndex(d *ddRq) int {
	l := s.sort[d.dir]
	i := sort.Search(len(l), func(i int) bool {
		return l[i].key > d.key || (l[i].key == d.key && l[i].seq >= d.seq)
	})
	for ; i < len(l); i++ {
		if l[i] == d {
			return i
		}
	}
	return -1
}

// LatterRequest is elv_rb_latter_request on rq's direction's sort tree.
func (s *Scheduler) LatterRequest(rq *replay.Request) *replay.Request {
	d := s.state(rq)
	if d == nil {
		return nil
	}
	if i := s.sortIndex(d); i >= 0 && i+1 < len(s.sort[d.dir]) {
		return s.sort[d.dir][i+1].rq
	}
	return nil
}

// FormerRequest is elv_rb_former_request on rq's direction's sort tree.
func (s *Scheduler) FormerRequest(rq *replay.Request) *replay.Request {
	d := s.state(rq)
	if d == nil {
		return nil
	}
	if i := s.sortIndex(d); i > 0 {
		return s.sort[d.dir][i-1].rq
	}
	return nil
}

// RequestMerged repositions rq in its sort list after a front merge.
func (s *Scheduler) RequestMerged(now trace.Time, rq *replay.Request, how replay.Merge) {
	if how != replay.FrontMerge {
		return
	}
	d := s.state(rq)
	s.sortDel(d)
	d.key = rq.Sector
	s.sortAdd(d)
}

// RequestsMerged gives rq next's expiry and FIFO place when next expires
// first, then forgets next (dd_merged_requests).
func (s *Scheduler) RequestsMerged(now trace.Time, rq, next *replay.Request) {
	d, n := s.state(rq), s.state(next)
	if n.fifoTime < d.fifoTime {
		l := &s.fifo[d.dir]
		l.remove(d)
		l.insertAfter(d, n)
		d.fifoTime = n.fifoTime
	}
	s.remove(n)
	// rq may have grown at its front only through a bio merge, which the
	// engine reports; keep its sort key current anyway.
	if d.key != rq.Sector {
		s.sortDel(d)
		d.key = rq.Sector
		s.sortAdd(d)
	}
}

// Insert adds rq to its direction's sort list and FIFO (dd_insert_request).
func (s *Scheduler) Insert(now trace.Time, rq *replay.Request) {
	var d *ddRq
	if n := len(s.free); n > 0 {
		d = s.free[n-1]
		s.free = s.free[:n-1]
		*d = ddRq{}
	} else {
		d = &ddRq{}
	}
	s.seq++
	d.rq, d.dir, d.key, d.seq = rq, dirOf(rq), rq.Sector, s.seq
	d.fifoTime = s.jiffies(now) + s.expire[d.dir]
	rq.Sched = d
	s.sortAdd(d)
	s.fifo[d.dir].pushBack(d)
	s.queued++
}

// InsertAtHead puts rq on dd->dispatch (dd_insert_request with
// BLK_MQ_INSERT_AT_HEAD: a flush sequence's data phase), dispatched before
// anything in the FIFOs.
func (s *Scheduler) InsertAtHead(now trace.Time, rq *replay.Request) {
	s.dispatch = append([]*replay.Request{rq}, s.dispatch...)
}

// HasWork reports whether dd->dispatch or a FIFO is non-empty (dd_has_work).
func (s *Scheduler) HasWork(now trace.Time) bool { return s.queued > 0 || len(s.dispatch) > 0 }

// nextRequest returns the first request of dir at or after latest_pos[dir]
// in sector order (deadline_next_request, deadline_from_pos).
func (s *Scheduler) nextRequest(dir int) *ddRq {
	l := s.sort[dir]
	pos := s.latestPos[dir]
	i := sort.Search(len(l), func(i int) bool { return l[i].key >= pos })
	if i < len(l) {
		return l[i]
	}
	return nil
}

// checkFifo reports whether the head of dir's FIFO has expired.
func (s *Scheduler) checkFifo(now trace.Time, dir int) bool {
	d := s.fifo[dir].head
	return d != nil && s.jiffies(now) >= d.fifoTime
}

// Dispatch picks the next request (__dd_dispatch_request): the head of
// dd->dispatch first, which sets latest_pos like any other (the done:
// label), then the batch.
func (s *Scheduler) Dispatch(now trace.Time) *replay.Request {
	if len(s.dispatch) > 0 {
		rq := s.dispatch[0]
		s.dispatch = s.dispatch[1:]
		s.latestPos[dirOf(rq)] = rq.Sector
		return rq
	}
	var d *ddRq
	dir := dirRead
	if d = s.nextRequest(s.lastDir); d != nil && s.batching < s.t.FifoBatch {
		// still entitled to batch
	} else {
		d = nil
		switch {
		case !s.fifo[dirRead].empty():
			if !s.fifo[dirWrite].empty() && s.starvedInc() {
				s.starved = 0
				dir = dirWrite
			} else {
				dir = dirRead
			}
		case !s.fifo[dirWrite].empty():
			s.starved = 0
			dir = dirWrite
		default:
			return nil
		}
		next := s.nextRequest(dir)
		if s.checkFifo(now, dir) || next == nil {
			d = s.fifo[dir].head
		} else {
			d = next
		}
		if d == nil {
			return nil
		}
		s.lastDir = dir
		s.batching = 0
	}
	s.batching++
	// The start of the request, as __dd_dispatch_request and
	// dd_start_request keep it (latest_pos[data_dir] = blk_rq_pos(rq)):
	// a request at the same sector is next, not skipped.
	s.latestPos[d.dir] = d.rq.Sector
	rq := d.rq
	s.remove(d)
	return rq
}

// starvedInc is "dd->starved++ >= dd->writes_starved".
func (s *Scheduler) starvedInc() bool {
	old := s.starved
	s.starved++
	return old >= s.t.WritesStarved
}

// Completed does nothing (dd_finish_request only matters for zoned devices).
func (s *Scheduler) Completed(now trace.Time, rq *replay.Request) {}

// Timer does nothing: mq-deadline arms no timers.
func (s *Scheduler) Timer(now trace.Time, id int) {}

func (s *Scheduler) remove(d *ddRq) {
	s.fifo[d.dir].remove(d)
	s.sortDel(d)
	s.queued--
	d.rq.Sched = nil
	d.rq = nil
	s.free = append(s.free, d)
}

func (s *Scheduler) sortAdd(d *ddRq) {
	l := s.sort[d.dir]
	i := sort.Search(len(l), func(i int) bool {
		return l[i].key > d.key || (l[i].key == d.key && l[i].seq > d.seq)
	})
	l = append(l, nil)
	copy(l[i+1:], l[i:])
	l[i] = d
	s.sort[d.dir] = l
}

func (s *Scheduler) sortDel(d *ddRq) {
	l := s.sort[d.dir]
	i := sort.Search(len(l), func(i int) bool {
		return l[i].key > d.key || (l[i].key == d.key && l[i].seq >= d.seq)
	})
	for ; i < len(l); i++ {
		if l[i] == d {
			copy(l[i:], l[i+1:])
			l[len(l)-1] = nil
			s.sort[d.dir] = l[:len(l)-1]
			return
		}
	}
	panic("internal error: mq-deadline request missing from its sort list")
}

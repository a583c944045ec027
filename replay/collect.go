package replay

import (
	"errors"
	"io"
	"math"
	"sort"

	"github.com/tracesched/tracesched/internal/column"
	"github.com/tracesched/tracesched/trace"
)

// Collector builds a Workload from one pass over a capture's events, for
// callers that read the capture once for several purposes (the diff's real
// side, the calibration and the workload): feed it every event with Add, in
// the order a trace.EventReader returns them, then call Workload.
//
// With one Rebuilder it keeps per-device counters and the bios of every
// device (in Q order, with the plug state of their process, each released
// once the Rebuilder has finished it, so with its issue and completion
// times), compactly, until Workload picks the device replayed. A Workload
// it returns streams its bios from memory. NewWorkload is a Collector fed
// a whole capture.
type Collector struct {
	rb   *trace.Rebuilder
	devs map[trace.Dev]*collectDev
	// devList: the devs in the order first seen; last: the one dev
	// returned last (most events are on one device).
	devList []*collectDev
	last    *collectDev
	// procs: each process's Q count, name and bios waiting for the
	// Rebuilder (collectProc), with a cache direct-mapped by pid.
	procs     map[uint32]*collectProc
	procCache [collectPIDCache]*collectProc
	names     nameTable
	qSlab     []collectQ // the rest of newQ's block
	closed    bool
	// finished: the Rebuilder finished a bio since the FIFOs were last
	// released (only then can a head be released).
	finished bool
}

// collectDev is one device's scan counters and its bios.
type collectDev struct {
	dev      trace.Dev
	issues   int
	inflight int
	depth    int
	// The asynchronous writes on the device (wbt.go): in flight now, the
	// first one's D, and the most at once within wbtWindow of it.
	asyncInflight int
	asyncFirst    trace.Time
	asyncWarm     int
	asyncPeak     int // the most at once over the capture
	maxSect       uint32
	bios          int
	stats         *statsBuilder
	fifo          []*collectQ // Q events not yet released, in capture order
	head          int
	// pids: each process's state on the device (collectPID), with a
	// cache direct-mapped by pid.
	pids     map[uint32]*collectPID
	pidCache [collectPIDCache]*collectPID
	recs     recordStore // released bios
	// The flush machinery (flush.go), as the capture shows it: bios with PREFLUSH or
	// FUA, flush requests issued (D of zero bytes with F), requests issued
	// with FUA.
	flushQ, flushD, fuaD int
	// Bios waiting for the zero-byte C of their restored request
	// (flushFinal), in Q order. With a write-back cache such a bio
	// completes for its process at that C, after the post-flush, not at
	// its data phase's C. Whether the device has a write-back cache and
	// FUA is known only at the end of the pass, so both possible lists are
	// kept: waitF, the PREFLUSH bios (a device with FUA), and waitFF, those
	// and the FUA bios (a device without); Workload picks the one the
	// capture calls for.
	waitF, waitFF []*collectQ
	// tailed: the processes whose tail is set (collectPID.tail), in no
	// particular order (dropTail only removes).
	tailed []*collectPID
	// gaps: the back-to-back Q-to-Q gaps of its processes
	// (Workload.SubmitGap).
	gaps gapHist
	// cgaps: the back-to-back C-to-C gaps of its CPUs
	// (Workload.CompleteGap); cpuLast: each CPU's latest Q or C on the
	// device, by CPU (CPUs from maxGapCPU on are not counted).
	cgaps   gapMean
	cpuLast []cpuEvent
	// lastC, lastCCPU: the time and CPU of its latest C (NoTime: none),
	// the completing CPU of the bios that C finishes (Record.DoneCPU).
	lastC    trace.Time
	lastCCPU uint32
}

// collectPIDCache is the size of the Collector's caches of processes
// (Collector.procCache, collectDev.pidCache): events alternate between a
// few processes.
const collectPIDCache = 16

// collectPID is a process's state on one device.
type collectPID struct {
	pid   uint32
	bios  int       // bios the Rebuilder finished (Workload.perPID)
	lastQ *collectQ // its latest Q
	plug  bool      // its plug is open
	// unplugged: the bio after whose G the process unplugged (U), until
	// its next Q or P: a P right after is blk_add_rq_to_plug's flush.
	unplugged *collectQ
	// tail: the process's newest request while it may still take bios at
	// its plug (the segment rule on Workload), nil when unknown; spare, a
	// tail no longer followed, reused for the next.
	tail, spare *segTail
	tailed      bool // in collectDev.tailed
	// attempted: the process's newest request that left its plug (I or
	// D) while its latest bio, queued at its end, had tried to merge with
	// it and not yet got its request (dropTail); never a spare.
	attempted *segTail
	// doneAt: the latest completion of its bios the Rebuilder finished,
	// when hasDone (Workload.SubmitGap).
	doneAt  trace.Time
	hasDone bool
}

// collectProc is what the Collector keeps of a process over every
// device.
type collectProc struct {
	pid  uint32
	next uint32 // Q events seen: the index of its next bio
	comm string // its latest name, "" while unknown
	// pend[head:] holds its Q events the Rebuilder has not finished (nor
	// released), by bio index from base: pend[head+i] is bio base+i, nil
	// once taken; base+len(pend)-head == next while it is not empty. The
	// taken Qs before head are compacted away (collectCompact), so that
	// the array is reused rather than grown again as the window slides.
	base uint32
	head int
	pend []*collectQ
}

// collectCompact is how many taken entries a FIFO of the Collector
// (collectProc.pend, collectDev.fifo) lets pile up at its front before
// it moves the rest down, once they are at least half of it.
const collectCompact = 1024

// get returns the pending Q of bio index, nil when none.
func (p *collectProc) get(index uint32) *collectQ {
	if i := index - p.base; index >= p.base && int(i) < len(p.pend)-p.head {
		return p.pend[p.head+int(i)]
	}
	return nil
}

// push adds the Q of the process's next bio, index.
func (p *collectProc) push(index uint32, q *collectQ) {
	if p.head == len(p.pend) {
		p.base, p.head, p.pend = index, 0, p.pend[:0]
	}
	p.pend = append(p.pend, q)
}

// take removes the pending Q of bio index.
func (p *collectProc) take(index uint32) {
	i := index - p.base
	if index < p.base || int(i) >= len(p.pend)-p.head {
		return
	}
	p.pend[p.head+int(i)] = nil
	k := p.head
	for k < len(p.pend) && p.pend[k] == nil {
		k++
	}
	p.base += uint32(k - p.head)
	p.head = k
	switch {
	case k == len(p.pend):
		p.pend, p.head = p.pend[:0], 0
	case k >= collectCompact && 2*k >= len(p.pend):
		n := copy(p.pend, p.pend[k:])
		clear(p.pend[n:])
		p.pend, p.head = p.pend[:n], 0
	}
}

// segTail is a process's newest request in the capture, from its G until
// it is inserted (I) or issued (D): the request blk_attempt_plug_merge
// tries first.
type segTail struct {
	start, end uint64 // sectors
	cat        trace.Category
	cgroup     uint64
	bios       []*collectQ
}

// collectQ is a Q event waiting for the Rebuilder to finish its bio.
type collectQ struct {
	rec     storedRecord
	dev     trace.Dev
	done    bool
	plugged bool
	plugEnd bool
	// inF, inFF: still waiting in collectDev.waitF, waitFF.
	inF, inFF bool
	split     bool // an X followed its Q: it was split at max_sectors
	held      bool // in a tail of collectPID.attempted: not released yet
	// flushBefore: a UT came between its Q and its G (Record.flushBefore)
	flushBefore bool
}

// NewCollector returns an empty Collector with its own Rebuilder.
func NewCollector() *Collector {
	c := NewSharedCollector()
	c.rb = trace.NewRebuilder(nil, c.OnBio)
	return c
}

// NewSharedCollector returns an empty Collector that shares a Rebuilder
// the caller feeds: for each event, call Before, then the Rebuilder's Add
// (which must hand every bio it finishes to OnBio), then After; at the end
// of the capture, close the Rebuilder before calling Workload. Add must not
// be used.
func NewSharedCollector() *Collector {
	return &Collector{devs: map[trace.Dev]*collectDev{}, procs: map[uint32]*collectProc{}}
}

// proc returns the state of process pid, creating it on first use.
func (c *Collector) proc(pid uint32) *collectProc {
	pc := &c.procCache[pid%collectPIDCache]
	if p := *pc; p != nil && p.pid == pid {
		return p
	}
	p := c.procs[pid]
	if p == nil {
		p = &collectProc{pid: pid}
		c.procs[pid] = p
	}
	*pc = p
	return p
}

// queuedAny reports whether any process queued a bio (a Q event).
func (c *Collector) queuedAny() bool {
	for _, p := range c.procs {
		if p.next > 0 {
			return true
		}
	}
	return false
}

// comm returns the latest name of process pid, "" when unknown.
func (c *Collector) comm(pid uint32) string {
	if p := c.procCache[pid%collectPIDCache]; p != nil && p.pid == pid {
		return p.comm
	}
	if p := c.procs[pid]; p != nil {
		return p.comm
	}
	return ""
}

// pid returns the state of process pid on the device, creating it on
// first use.
func (s *collectDev) pid(pid uint32) *collectPID {
	pc := &s.pidCache[pid%collectPIDCache]
	if p := *pc; p != nil && p.pid == pid {
		return p
	}
	p := s.pids[pid]
	if p == nil {
		p = &collectPID{pid: pid}
		s.pids[pid] = p
	}
	*pc = p
	return p
}

func (c *Collector) dev(d trace.Dev) *collectDev {
	if c.last != nil && c.last.dev == d {
		return c.last
	}
	s := c.devs[d]
	if s == nil {
		s = &collectDev{dev: d, stats: newStatsBuilder(), pids: map[uint32]*collectPID{}, asyncFirst: trace.NoTime, lastC: trace.NoTime}
		c.devs[d] = s
		c.devList = append(c.devList, s)
	}
	c.last = s
	return s
}

// OnBio takes a bio the Rebuilder finished.
func (c *Collector) OnBio(b *trace.Bio) {
	s := c.dev(b.Dev)
	s.bios++
	sp := s.pid(b.PID)
	sp.bios++
	if b.Done.Valid() && b.Done > sp.doneAt {
		sp.doneAt, sp.hasDone = b.Done, true
	}
	p := c.proc(b.PID)
	s.stats.addBio(b.PID, p.comm, b.Cgroup, b.Bytes, b.Queue, b.Done)
	q := p.get(b.Index)
	if q == nil || q.dev != b.Dev {
		return
	}
	p.take(b.Index)
	q.rec.issue, q.rec.done = b.Issue, b.Done
	q.rec.doneCPU = q.rec.cpu
	if b.Done.Valid() && s.lastC.Valid() && b.Done == s.lastC {
		q.rec.doneCPU = s.lastCCPU
	}
	q.rec.cgroup = b.Cgroup
	q.done = true
	c.finished = true
}

// Add feeds the next event. Panics after Workload or on a shared
// Collector.
func (c *Collector) Add(e *trace.Event) {
	if c.rb == nil {
		panic("replay: Collector.Add on a shared Collector")
	}
	c.Before(e)
	c.rb.Add(e)
	c.After()
}

// Before takes the next event, before the Rebuilder does. Panics after
// Workload.
func (c *Collector) Before(e *trace.Event) {
	if c.closed {
		panic("replay: Collector event after Workload")
	}
	switch e.Action {
	case trace.ActionProcess:
		if e.Text != "" {
			c.proc(e.PID).comm = e.Text
		}
	case trace.ActionQueue:
		p := c.proc(e.PID)
		idx := p.next
		p.next++
		if e.Comm != "" {
			p.comm = e.Comm
		}
		s := c.dev(e.Dev)
		sp := s.pid(e.PID)
		s.gapSample(e, sp)
		s.cpuSample(e)
		q := c.newQ()
		q.dev, q.rec = e.Dev, storedRecord{pid: e.PID, index: idx, cgroup: e.Cgroup, cpu: e.CPU,
			comm: c.names.id(p.comm), sector: e.Sector, bytes: e.Bytes, cat: e.Cat.OpFlags(),
			queue: e.Time, issue: trace.NoTime, done: trace.NoTime,
			got: trace.NoTime, doneF: trace.NoTime, doneFF: trace.NoTime,
			segs: uint16(min(minSegments(e.Bytes), math.MaxUint16))}
		q.plugged = sp.plug
		if e.Cat&(trace.CatFlush|trace.CatFUA) != 0 {
			s.flushQ++
		}
		if q.rec.cat&trace.CatFlush != 0 {
			q.inF = true
			s.waitF = append(s.waitF, q)
		}
		if q.rec.cat&(trace.CatFlush|trace.CatFUA) != 0 {
			q.inFF = true
			s.waitFF = append(s.waitFF, q)
		}
		s.fifo = append(s.fifo, q)
		p.push(idx, q)
		sp.lastQ = q
		sp.unplugged = nil
		s.dropAttempted(sp)
	case trace.ActionGetRQ, trace.ActionBackMerge, trace.ActionFrontMerge:
		// The end of the bio's submission (it slept for a request before G).
		s := c.dev(e.Dev)
		sp := s.pid(e.PID)
		q := sp.lastQ
		bio := q != nil && !q.rec.got.Valid() && q.rec.sector == e.Sector
		if bio {
			q.rec.got = e.Time
		}
		if e.Action == trace.ActionGetRQ && q != nil && q.split && e.Sector >= q.rec.sector && e.Sector < q.rec.sector+uint64(q.rec.bytes>>9) {
			q.rec.parts++ // a part of the split bio got its request
		}
		s.segments(e, sp, q, bio)
	case trace.ActionSplit:
		s := c.dev(e.Dev)
		if q := s.pid(e.PID).lastQ; q != nil && !q.rec.got.Valid() {
			q.split = true
		}
	case trace.ActionInsert:
		c.dev(e.Dev).dropTail(e.Sector)
	case trace.ActionPlug:
		s := c.dev(e.Dev)
		sp := s.pid(e.PID)
		sp.plug = true
		// P follows the G of the plug's first request.
		q := sp.lastQ
		if u := sp.unplugged; u != nil && u == q {
			// G, U, P with no Q between: blk_add_rq_to_plug flushed a
			// full plug (BLK_MAX_REQUEST_COUNT requests, or the last one
			// of BLK_PLUG_FLUSH_SIZE bytes or more) before the bio's new
			// request started this one; the engine applies that rule
			// itself, so the bio does not end its plug.
			q.plugEnd = false
		}
		sp.unplugged = nil
		if q != nil && !q.plugEnd {
			q.plugged = true
		}
	case trace.ActionUnplugIO, trace.ActionUnplugTimer:
		// The unplug leaves the process's newest request followed: the
		// unplug that blk_add_rq_to_plug makes comes after its G, and
		// the request leaves the plug with its I (or D).
		sp := c.dev(e.Dev).pid(e.PID)
		sp.unplugged = nil
		if sp.plug {
			sp.plug = false
			q := sp.lastQ
			if q != nil && e.Action == trace.ActionUnplugTimer && !q.rec.got.Valid() {
				// A UT between the bio's Q and its G or merge: it slept
				// in blk_mq_get_new_requests for a request or a tag,
				// after blk_mq_attempt_bio_merge had failed, and the
				// sleep flushed the plug (sched_submit_work ->
				// blk_flush_plug). The plug stays installed: the bio's
				// new request goes to it (the P after its G), so the
				// bio does not end its plug. The flush came before the
				// bio's request: the engine flushes the plug there too
				// (Record.flushBefore), whether or not the replay's queue
				// makes the bio sleep.
				q.flushBefore = true
				break
			}
			if q != nil && q.plugged {
				if !q.plugEnd && e.Action == trace.ActionUnplugIO && q.rec.got.Valid() {
					sp.unplugged = q
				}
				q.plugEnd = true
			}
		}
	case trace.ActionIssue:
		s := c.dev(e.Dev)
		s.dropTail(e.Sector)
		s.issues++
		s.inflight++
		s.depth = max(s.depth, s.inflight)
		s.maxSect = max(s.maxSect, uint32(e.Bytes>>9))
		if e.Bytes == 0 && e.Cat&trace.CatFlush != 0 {
			s.flushD++
		}
		if e.Cat&trace.CatFUA != 0 {
			s.fuaD++
		}
		if wbtAsync(e.Cat, e.Bytes) {
			if s.asyncInflight++; !s.asyncFirst.Valid() {
				s.asyncFirst = e.Time
			}
			if e.Time < s.asyncFirst+wbtWindow {
				s.asyncWarm = max(s.asyncWarm, s.asyncInflight)
			}
			s.asyncPeak = max(s.asyncPeak, s.asyncInflight)
		}
	case trace.ActionComplete:
		s := c.dev(e.Dev)
		s.cpuSample(e)
		s.lastC, s.lastCCPU = e.Time, e.CPU
		if s.inflight > 0 {
			s.inflight--
		}
		if wbtAsync(e.Cat, e.Bytes) && s.asyncInflight > 0 {
			s.asyncInflight--
		}
		if e.Bytes == 0 && e.Cat&trace.CatFlush == 0 {
			c.flushFinal(s, e)
		}
	}
}

// collectQBlock is how many collectQs newQ allocates at once.
const collectQBlock = 256

// newQ returns a zero collectQ. They are allocated collectQBlock at a
// time (a collectQ holds no pointers, so a block is one allocation the
// garbage collector does not scan): the Qs are released in about the
// order they were queued, so a block is freed soon after its last Q is.
// They are not recycled: a released Q may still be a process's lastQ.
func (c *Collector) newQ() *collectQ {
	if len(c.qSlab) == 0 {
		c.qSlab = make([]collectQ, collectQBlock)
	}
	q := &c.qSlab[0]
	c.qSlab = c.qSlab[1:]
	return q
}

// segments follows the process's newest request (collectPID.tail)
// through a G, M or F event e of process e.PID, whose state is sp; bio
// says e is of q, the process's latest bio. A bio that gets a request of its own (G) though
// it starts where that request ends, may merge with it (same operation
// and cgroup, neither a flush nor FUA, not split) and would keep it
// within max_sectors was refused for segments (ll_new_hw_segment): the
// request's bios then have at least MaxSegments+1 segments with it, and
// their Segments grow to that (the segment rule on Workload).
func (s *collectDev) segments(e *trace.Event, sp *collectPID, q *collectQ, bio bool) {
	t := sp.tail
	if a := sp.attempted; a != nil {
		s.dropAttempted(sp)
		if t == nil && bio && e.Action == trace.ActionGetRQ {
			t = a
		}
	}
	switch {
	case e.Action == trace.ActionGetRQ && bio:
		if t != nil && t.end == q.rec.sector && !q.split && mergeable(t.cat, q.rec.cat) && t.cgroup == q.rec.cgroup &&
			t.end-t.start+uint64(q.rec.bytes>>9) <= uint64(max(s.maxSect, defaultMaxSectors)) {
			growSegments(t.bios, defaultMaxSegments+1-int(q.rec.segs))
		}
		n := t
		if n == nil {
			n, sp.spare = sp.spare, nil
		}
		if n == nil {
			n = &segTail{}
		}
		clear(n.bios)
		*n = segTail{start: q.rec.sector, end: q.rec.sector + uint64(q.rec.bytes>>9),
			cat: q.rec.cat, cgroup: q.rec.cgroup, bios: append(n.bios[:0], q)}
		s.setTail(sp, n)
	case t == nil:
	case e.Action == trace.ActionBackMerge && bio && t.end == q.rec.sector:
		t.end += uint64(q.rec.bytes >> 9)
		t.bios = append(t.bios, q)
	case e.Action == trace.ActionFrontMerge && bio && q.rec.sector+uint64(q.rec.bytes>>9) == t.start:
		t.start = q.rec.sector
		t.bios = append(t.bios, q)
	case e.Action == trace.ActionGetRQ:
		sp.tail, sp.spare = nil, t // a split's later part: a request not followed
	}
}

// setTail makes t the tail of sp.
func (s *collectDev) setTail(sp *collectPID, t *segTail) {
	sp.tail = t
	if !sp.tailed {
		sp.tailed = true
		s.tailed = append(s.tailed, sp)
	}
}

// dropTail stops following the request starting at sector (its I or D,
// which the dispatching task may log, not its process), and forgets the
// processes no longer followed.
func (s *collectDev) dropTail(sector uint64) {
	k := 0
	for _, sp := range s.tailed {
		if t := sp.tail; t != nil && t.start == sector {
			sp.tail = nil
			if q := sp.lastQ; q != nil && !q.rec.got.Valid() && t.end == q.rec.sector {
				// The process's latest bio, queued where the request ends,
				// has neither its G nor a merge yet: it tried the plug
				// before the request left it (blk_mq_submit_bio calls
				// blk_mq_attempt_bio_merge before blk_mq_get_new_requests,
				// whose sleep for a tag flushed the plug), so its G still
				// tells whether that merge was refused.
				// Its bios are held in the FIFO until then (they may
				// complete while the process sleeps for its tag, and the
				// segment rule may still raise their Segments). The tail
				// is not a spare while it is attempted.
				sp.attempted = t
				for _, b := range t.bios {
					b.held = true
				}
			} else {
				sp.spare = t
			}
		}
		if sp.tail == nil {
			sp.tailed = false
			continue
		}
		s.tailed[k] = sp
		k++
	}
	clear(s.tailed[k:])
	s.tailed = s.tailed[:k]
}

// dropAttempted forgets sp's attempted tail and lets its bios go.
func (s *collectDev) dropAttempted(sp *collectPID) {
	a := sp.attempted
	if a == nil {
		return
	}
	sp.attempted = nil
	for _, b := range a.bios {
		b.held = false
	}
}

// mergeable reports whether bios of categories a and b may share a
// request (blk_rq_merge_ok): the same operation, neither a flush nor FUA.
func mergeable(a, b trace.Category) bool {
	const dir = trace.CatWrite | trace.CatDiscard
	const nomerge = trace.CatFlush | trace.CatFUA
	return a&dir == b&dir && a&nomerge == 0 && b&nomerge == 0 && a&trace.CatDiscard == 0
}

// growSegments raises the Segments of bios (one request's) to a sum of
// at least want: the missing segments are shared out in proportion to
// what each bio may still have (one segment per page of 4 KiB, at most),
// largest remainders first, earlier bios first on ties. When the pages
// do not allow want, every bio gets one segment per page.
func growSegments(bios []*collectQ, want int) {
	have, room := 0, 0
	for _, q := range bios {
		have += int(q.rec.segs)
		room += max(0, pages(q.rec.bytes)-int(q.rec.segs))
	}
	need := want - have
	if need <= 0 || room == 0 {
		return
	}
	if need >= room {
		for _, q := range bios {
			q.rec.segs = uint16(min(max(int(q.rec.segs), pages(q.rec.bytes)), math.MaxUint16))
		}
		return
	}
	type share struct {
		i    int
		frac int // remainder of need*room_i/room, in units of 1/room
	}
	shares := make([]share, 0, len(bios))
	given := 0
	for i, q := range bios {
		r := max(0, pages(q.rec.bytes)-int(q.rec.segs))
		add := need * r / room
		q.rec.segs += uint16(add)
		given += add
		if r > add {
			shares = append(shares, share{i, need * r % room})
		}
	}
	sort.SliceStable(shares, func(a, b int) bool { return shares[a].frac > shares[b].frac })
	for _, sh := range shares[:min(need-given, len(shares))] {
		bios[sh.i].rec.segs++
	}
}

// pages returns the 4 KiB pages a bio of bytes spans at least (its most
// physical segments: one per page).
func pages(bytes uint32) int { return max(1, int((uint64(bytes)+4095)/4096)) }

// flushFinal takes the zero-byte C of a flush sequence's restored request
// (blk_flush_complete_seq, REQ_FSEQ_DONE: its flags lost PREFLUSH, so no
// F) as the completion of the oldest bio waiting at its sector, in each
// list.
func (c *Collector) flushFinal(s *collectDev, e *trace.Event) {
	take := func(list []*collectQ, set func(q *collectQ)) []*collectQ {
		for i, q := range list {
			if q.rec.sector == e.Sector {
				set(q)
				c.finished = true
				return append(list[:i], list[i+1:]...)
			}
		}
		return list
	}
	s.waitF = take(s.waitF, func(q *collectQ) { q.rec.doneF, q.inF = e.Time, false })
	s.waitFF = take(s.waitFF, func(q *collectQ) { q.rec.doneFF, q.inFF = e.Time, false })
}

// After releases what the Rebuilder finished with the event just taken.
func (c *Collector) After() {
	if c.finished {
		c.finished = false
		for _, s := range c.devList {
			c.release(s, false)
		}
	}
}

// release moves the finished bios at the head of s's FIFO (every bio, at
// the end of the capture) to its store, as the streamed replay hands them
// over: the process name is the latest known when the bio is released.
func (c *Collector) release(s *collectDev, eof bool) {
	for s.head < len(s.fifo) {
		q := s.fifo[s.head]
		if !(q.done && !q.inF && !q.inFF && !q.held) && !eof {
			return
		}
		s.fifo[s.head] = nil
		s.head++
		if s.head >= collectCompact && s.head*2 >= len(s.fifo) {
			n := copy(s.fifo, s.fifo[s.head:])
			clear(s.fifo[n:])
			s.fifo, s.head = s.fifo[:n], 0
		}
		p := c.proc(q.rec.pid)
		if p.get(q.rec.index) == q {
			p.take(q.rec.index)
		}
		// q leaves the Collector here: its record is completed in place
		// and stored (a copy would be read and written twice over).
		r := &q.rec
		if q.plugged {
			r.flags |= recPlugged
		}
		if q.plugEnd {
			r.flags |= recPlugEnd
		}
		if q.flushBefore {
			r.flags |= recFlushBefore
		}
		if c.names.name(r.comm) == "" {
			r.comm = c.names.id(p.comm)
		}
		s.recs.add(r)
	}
	if s.head == len(s.fifo) && s.head > 0 {
		clear(s.fifo)
		s.fifo, s.head = s.fifo[:0], 0
	}
}

// Workload closes the Rebuilder (a shared one must be closed already) and
// returns the workload of the device with the most D events (the bottom
// of a remapped stack). The Collector takes no more events afterwards.
func (c *Collector) Workload() (*Workload, error) {
	if !c.closed {
		c.closed = true
		if c.rb != nil {
			c.rb.Close()
		}
		for _, s := range c.devs {
			c.release(s, true)
		}
	}
	keys := make([]trace.Dev, 0, len(c.devs))
	for d := range c.devs {
		keys = append(keys, d)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var best trace.Dev
	found := false
	for _, d := range keys {
		if !found || c.devs[d].issues > c.devs[best].issues {
			best, found = d, true
		}
	}
	if !found || c.devs[best].bios == 0 {
		if !c.queuedAny() {
			// blktrace's action mask (-a) left the Q events out, or the
			// file holds only issues or completions.
			return nil, errors.New("capture has no bios to replay: it has no Q (queue) events, which a replay starts from (recorded with an action mask, blktrace -a, that left them out?); stats and calibrate read it")
		}
		return nil, errors.New("capture has no bios to replay")
	}
	s := c.devs[best]
	s.recs.seal()
	perPID := make(map[uint32]int, len(s.pids))
	for pid, p := range s.pids {
		if p.bios > 0 {
			perPID[pid] = p.bios
		}
	}
	depth := s.depth
	if s.inflight > 0 {
		// Issues the capture never completed: at its end, or lost (a
		// per-CPU file missing, events dropped), which would leave the
		// count above in flight for good.
		if s.recs.lostCompletions() {
			depth = s.recs.completedDepth()
		}
	}
	w := &Workload{Dev: best, Depth: depth, MaxSectors: max(s.maxSect, defaultMaxSectors), Bios: s.bios, perPID: perPID,
		SubmitGap: s.gaps.median(), SubmitGaps: s.gaps.n, CompleteGap: s.cgaps.mean(), CompleteGaps: s.cgaps.n, WBTWarm: s.asyncWarm, WBTPeak: s.asyncPeak}
	switch {
	case s.flushD > 0:
		w.WriteCache = WriteBack
	case s.flushQ > 0:
		w.WriteCache = WriteThrough
	}
	w.FUA = s.fuaD > 0
	s.stats.finish(w)
	for i := range w.Processes {
		if w.Processes[i].Comm == "" {
			w.Processes[i].Comm = c.comm(w.Processes[i].PID)
		}
	}
	recs, names := &s.recs, &c.names
	wb, fua := w.WriteCache == WriteBack, w.FUA
	lock := inferLock(recs.n, recs.at, func(sr *storedRecord) trace.Time { return recordDone(sr, wb, fua) }, recs.sectionEnds)
	w.stallsFn = func() stallSet {
		return inferStalls(recs.n, func(i int) stallInput {
			sr := recs.at(i)
			return stallInput{pid: sr.pid, index: sr.index, queue: sr.queue, done: recordDone(&sr, wb, fua), async: asyncWrite(sr.cat)}
		})
	}
	w.open = func() (recordSource, error) {
		return &storeSource{recs: recs, names: names, inf: newInferrer(), wb: wb, fua: fua, lock: lock}, nil
	}
	// The other devices' bios are not replayed.
	for d, o := range c.devs {
		if d != best {
			o.recs = recordStore{}
		}
	}
	return w, nil
}

// lostCompletions reports whether a stored bio was issued and never
// completed although it had been on the device longer than any bio that
// did complete took (the largest D to C among them) by the time of the
// capture's last completion: its completion is missing from the capture
// (a per-CPU file or events lost), where a bio still in flight when the
// capture stopped had not been on the device that long.
func (s *recordStore) lostCompletions() bool {
	var issue, done [256]int64
	last, longest, oldestOpen := trace.NoTime, trace.Time(0), trace.Time(math.MaxInt64)
	for i := 0; i < s.n; {
		is, ds := s.issue.Values(i, issue[:]), s.done.Values(i, done[:])
		for j, d := range ds {
			switch iv, dv := trace.Time(is[j]), trace.Time(d); {
			case iv.Valid() && dv.Valid():
				last, longest = max(last, dv), max(longest, dv-iv)
			case iv.Valid():
				oldestOpen = min(oldestOpen, iv)
			}
		}
		i += len(ds)
	}
	return last.Valid() && last-oldestOpen > longest
}

// completedDepth returns the most requests on the device at once counting
// the stored bios the capture completed, once per request: the depth
// NewWorkloadFromRecords measures.
func (s *recordStore) completedDepth() int {
	var issue, done [256]int64
	var spans []ioSpan
	for i := 0; i < s.n; {
		is, ds := s.issue.Values(i, issue[:]), s.done.Values(i, done[:])
		for j, d := range ds {
			if iv, dv := trace.Time(is[j]), trace.Time(d); iv.Valid() && dv.Valid() {
				spans = append(spans, ioSpan{iv, dv})
			}
		}
		i += len(ds)
	}
	return maxInFlight(spans)
}

// storedRecord is a Record as the Collector keeps it: no pointers, the
// process name as an index into a table.
type storedRecord struct {
	sector uint64
	cgroup uint64
	queue  trace.Time
	issue  trace.Time
	done   trace.Time
	got    trace.Time // end of its submission (the got inferrer.infer takes)
	// doneF, doneFF: the zero-byte C that ends its flush sequence, as
	// matched in collectDev.waitF and waitFF.
	doneF, doneFF trace.Time
	pid           uint32
	cpu           uint32 // CPU its Q was recorded on (Record.CPU)
	doneCPU       uint32 // CPU its C was recorded on (Record.DoneCPU)
	index         uint32
	bytes         uint32
	comm          uint32
	cat           trace.Category
	flags         uint8
	segs          uint16 // Record.Segments
	parts         uint16 // a split bio: its parts that got a request (G) in the capture
}

const (
	recPlugged = 1 << iota
	recPlugEnd
	recFlushBefore
)

// recordStore holds records column by column (internal/column: a few
// bytes per field, since the records come in queue order), so that it
// grows without copying and holds no pointers for the collector to scan.
type recordStore struct {
	sector, cgroup, pid, cpu, doneCPU, index, bytes, comm, cat, flags, segs, parts column.Uints
	queue, issue, done, got, doneF, doneFF                                         column.Times
	n                                                                              int
	// sectionEnds: each process's empty PREFLUSH writes among the
	// records (sectionEnd; lockPossible), counted as they are added.
	sectionEnds map[uint32]int
}

func (s *recordStore) add(r *storedRecord) {
	s.sector.Append(r.sector)
	s.cgroup.Append(r.cgroup)
	s.pid.Append(uint64(r.pid))
	s.cpu.Append(uint64(r.cpu))
	s.doneCPU.Append(uint64(r.doneCPU))
	s.index.Append(uint64(r.index))
	s.bytes.Append(uint64(r.bytes))
	s.comm.Append(uint64(r.comm))
	s.cat.Append(uint64(r.cat))
	s.flags.Append(uint64(r.flags))
	s.segs.Append(uint64(r.segs))
	s.parts.Append(uint64(r.parts))
	s.queue.Append(int64(r.queue))
	s.issue.Append(int64(r.issue))
	s.done.Append(int64(r.done))
	s.got.Append(int64(r.got))
	s.doneF.Append(int64(r.doneF))
	s.doneFF.Append(int64(r.doneFF))
	s.n++
	if sectionEnd(r.cat, r.bytes) {
		if s.sectionEnds == nil {
			s.sectionEnds = map[uint32]int{}
		}
		s.sectionEnds[r.pid]++
	}
}

// seal codes the records not yet coded: call it once every record is in.
func (s *recordStore) seal() {
	for _, c := range []*column.Uints{&s.sector, &s.cgroup, &s.pid, &s.cpu, &s.doneCPU, &s.index, &s.bytes, &s.comm, &s.cat, &s.flags, &s.segs, &s.parts} {
		c.Seal()
	}
	for _, c := range []*column.Times{&s.queue, &s.issue, &s.done, &s.got, &s.doneF, &s.doneFF} {
		c.Seal()
	}
}

// bytesHeld returns the memory the store holds, in bytes.
func (s *recordStore) bytesHeld() int {
	n := 0
	for _, c := range []*column.Uints{&s.sector, &s.cgroup, &s.pid, &s.cpu, &s.doneCPU, &s.index, &s.bytes, &s.comm, &s.cat, &s.flags, &s.segs, &s.parts} {
		n += c.Bytes()
	}
	for _, c := range []*column.Times{&s.queue, &s.issue, &s.done, &s.got, &s.doneF, &s.doneFF} {
		n += c.Bytes()
	}
	return n
}

func (s *recordStore) at(i int) storedRecord {
	return storedRecord{
		sector: s.sector.At(i), cgroup: s.cgroup.At(i), pid: uint32(s.pid.At(i)), cpu: uint32(s.cpu.At(i)), doneCPU: uint32(s.doneCPU.At(i)), index: uint32(s.index.At(i)),
		bytes: uint32(s.bytes.At(i)), comm: uint32(s.comm.At(i)), cat: trace.Category(s.cat.At(i)), flags: uint8(s.flags.At(i)), segs: uint16(s.segs.At(i)),
		parts: uint16(s.parts.At(i)),
		queue: trace.Time(s.queue.At(i)), issue: trace.Time(s.issue.At(i)), done: trace.Time(s.done.At(i)),
		got: trace.Time(s.got.At(i)), doneF: trace.Time(s.doneF.At(i)), doneFF: trace.Time(s.doneFF.At(i)),
	}
}

// nameTable interns process names: id 0 is "".
type nameTable struct {
	ids   map[string]uint32
	names []string
	last  uint32 // the id returned last, when not 0
}

func (t *nameTable) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if t.last != 0 && t.names[t.last] == s {
		return t.last
	}
	if id, ok := t.ids[s]; ok {
		t.last = id
		return id
	}
	if t.ids == nil {
		t.ids = map[string]uint32{}
		t.names = []string{""}
	}
	id := uint32(len(t.names))
	t.ids[s] = id
	t.names = append(t.names, s)
	t.last = id
	return id
}

func (t *nameTable) name(id uint32) string {
	if id == 0 {
		return ""
	}
	return t.names[id]
}

// storeSource streams a Collector's records; each run gets fresh Records
// (the engine keeps its state in them), allocated in blocks.
type storeSource struct {
	recs  *recordStore
	names *nameTable
	i     int
	block []Record
	// got: the captured got of each record of block (Record has no field
	// for it: only the inferrer reads it, as next hands the record out).
	got    []trace.Time
	gotBuf [storeBlock]trace.Time // got's array
	inf    *inferrer
	// wb, fua: the device's write-back cache and FUA (Workload.WriteCache,
	// Workload.FUA), which decide which bios complete at their flush
	// sequence's end (collectDev.waitF).
	wb, fua bool
	lock    map[bioKey]lockMark // step 7 (inferLock); nil: no lock
}

// recordDone is a stored record's completion for its process: with a
// write-back cache, a flush's (and without FUA a FUA write's) is the end
// of its flush sequence (collectDev.waitF, waitFF).
func recordDone(sr *storedRecord, wb, fua bool) trace.Time {
	if wb {
		switch {
		case fua && sr.cat&trace.CatFlush != 0:
			return sr.doneF
		case !fua && sr.cat&(trace.CatFlush|trace.CatFUA) != 0:
			return sr.doneFF
		}
	}
	return sr.done
}

func (s *storeSource) next() (*Record, error) {
	if s.i >= s.recs.n {
		return nil, io.EOF
	}
	if len(s.block) == 0 {
		s.fill()
	}
	i, t := s.i, s.recs
	s.i++
	r, got := &s.block[0], s.got[0]
	s.block, s.got = s.block[1:], s.got[1:]
	if !r.Done.Valid() {
		if n := t.parts.At(i); n != 0 {
			r.extOf().partsSeen = int(n)
		}
	}
	if s.wb {
		switch {
		case s.fua && r.Cat&trace.CatFlush != 0:
			r.Done = trace.Time(t.doneF.At(i))
		case !s.fua && r.Cat&(trace.CatFlush|trace.CatFUA) != 0:
			r.Done = trace.Time(t.doneFF.At(i))
		}
	}
	if m, ok := s.lock[bioKey{r.PID, r.Index}]; ok {
		r.lockOpen, r.lockClose, r.lockWaited = m.open, m.close, m.waited
		if m.wake != 0 || m.gap != 0 {
			x := r.extOf()
			x.lockWake, x.lockGap = m.wake, m.gap
		}
	}
	s.inf.infer(r, got)
	return r, nil
}

// storeBlock is the number of records storeSource.fill makes at a time.
const storeBlock = 1024

// fill makes the next block of records (up to storeBlock), fresh from
// make (each used once), from the store's columns a column at a time
// (column.Uints.Values: one tight loop a block instead of an At a
// field); next completes each record as it hands it out.
func (s *storeSource) fill() {
	t := s.recs
	n := min(storeBlock, t.n-s.i)
	s.block = make([]Record, n)
	s.got = s.gotBuf[:n]
	b := s.block
	var u [storeBlock]uint64
	var v [storeBlock]int64
	uints := func(c *column.Uints, set func(r *Record, x uint64)) {
		for j, x := range c.Values(s.i, u[:n]) {
			set(&b[j], x)
		}
	}
	times := func(c *column.Times, set func(r *Record, x trace.Time)) {
		for j, x := range c.Values(s.i, v[:n]) {
			set(&b[j], trace.Time(x))
		}
	}
	uints(&t.pid, func(r *Record, x uint64) { r.PID = uint32(x) })
	uints(&t.cpu, func(r *Record, x uint64) { r.CPU = uint32(x) })
	uints(&t.doneCPU, func(r *Record, x uint64) { r.DoneCPU = uint32(x) })
	uints(&t.index, func(r *Record, x uint64) { r.Index = uint32(x) })
	uints(&t.cgroup, func(r *Record, x uint64) { r.Cgroup = x })
	uints(&t.comm, func(r *Record, x uint64) { r.Comm = s.names.name(uint32(x)) })
	uints(&t.sector, func(r *Record, x uint64) { r.Sector = x })
	uints(&t.bytes, func(r *Record, x uint64) { r.Bytes = uint32(x) })
	uints(&t.cat, func(r *Record, x uint64) { r.Cat = trace.Category(x) })
	uints(&t.flags, func(r *Record, x uint64) {
		f := uint8(x)
		r.Plugged, r.PlugEnd, r.flushBefore = f&recPlugged != 0, f&recPlugEnd != 0, f&recFlushBefore != 0
	})
	uints(&t.segs, func(r *Record, x uint64) { r.Segments = uint16(x) })
	times(&t.queue, func(r *Record, x trace.Time) { r.Queue = x })
	times(&t.issue, func(r *Record, x trace.Time) { r.Issue = x })
	times(&t.done, func(r *Record, x trace.Time) { r.Done = x })
	for j, x := range t.got.Values(s.i, v[:n]) {
		s.got[j] = trace.Time(x)
	}
}

func (s *storeSource) close() {}

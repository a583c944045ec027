package trace

import (
	"slices"
	"time"
)

// Rebuilder reconstructs block-layer requests from a stream of events, the
// way btt does but without btt's shortcuts (see the package notes below),
// and hands each request and each bio to its callbacks as soon as it is
// finished, so that memory stays bounded by the I/O in flight.
//
// Matching rules (tracesched's, compared with btt's in Summary's docs):
//
//   - A bio is one Q event. It joins a request through G (which starts the
//     request), or through a bio-level M (back merge: the bio starts where
//     a queued request ends) or F (front merge: the bio ends where a queued
//     request starts). I, D, R and C then act on the request.
//   - An X (split) cuts a queued bio in two fragments; each fragment joins
//     its own request. The bio is finished when all its fragments are, and
//     Request.Bios counts fragments (a split bio counts once in each of the
//     requests that served its parts).
//   - An M carrying the FS or PC category is block_rq_merge: a queued
//     request absorbed by the queued request that ends where it starts. The
//     absorbed request is emitted at once with FlagMergedAway; its bios move
//     to the absorbing request.
//   - D issues the oldest queued request that starts at the D's sector on
//     that device; the D of an empty flush (a zero-byte FLUSH, the
//     kernel's flush_rq) issues every empty preflush queued there, which
//     blk_kick_flush serves with that one flush. C completes the oldest issued request that starts at the
//     C's sector (else the oldest issued one covering it); a C for fewer
//     bytes than remain completes part of the request, advancing its start
//     (FlagPartial), and a C for more bytes goes on to the next request. A
//     request is never matched to a later request at the same sector: queued
//     and issued requests live in separate indexes, and a Q at a sector
//     whose previous request is still in flight starts a new request.
//   - R moves an issued request back to the queued state (Requeues counts
//     it); the next D at its sector re-issues it, and Request.Issue and
//     Request.Insert keep the last D and I.
//   - A (bio remap) links layers: the bio queued on FromDev at FromSector is
//     remapped away, and the next Q at the A's device and sector is a new bio
//     of the lower layer whose request records the origin of the whole chain
//     (Request.FromDev, FromSector; FlagRemapped). Chains of A events with no
//     Q between (a trace of the disk only, as in centos7-dm-remap) are
//     followed too. Each layer is accounted on its own device: a remapped-
//     away bio that its own device later completes (bio-based dm or md, C
//     without D) becomes a request of that device with Queue and Complete
//     only; one that its device never completes (a partition) is emitted
//     rbRemapGrace after its lower bio finished, served by the lower request.
//   - D or C with no request to match (I/O in flight when the capture
//     started, such as keks-discard's D/C-only trace) make a request flagged
//     FlagNoQueue, as do G or I without a queued bio. Requests the kernel
//     makes itself (a flush's zero-byte preflush, passthrough requests) have
//     no bio either and are flagged FlagNoQueue too; RebuildStats counts
//     them apart (Flushes, Passthrough).
//   - Requests still open at Close are emitted with FlagIncomplete, and so
//     are issued requests that exceed RebuildMaxInFlight or
//     RebuildInFlightTimeout on the way (RebuildStats.Abandoned).
//   - Bios that never join a request (their G was dropped, or they merged
//     into a request the capture never showed) are emitted with Request 0
//     after rbStaleAfter of trace time, or at Close.
//
// Bio indices (Bio.Index, Request.FirstBio) count a process's Q events in
// stream order from 0, on every device: a bio remapped from dm-0 to sda has
// one index on each layer.
//
// Memory: the Rebuilder keeps the requests and bios in flight and a little
// bookkeeping (per-process counters and names, whose number is bounded by
// the processes seen, not by the events); everything else is released once
// emitted. Emitted requests, and emitted bios nothing refers to any more,
// are recycled for later ones, and the per-device sector indexes reuse
// their lists, so that the steady state allocates almost nothing.
//
// A Rebuilder is not safe for concurrent use. The *Request and *Bio passed
// to the callbacks are valid only during the call (their memory is reused
// for later requests and bios); copy them to keep them.
type Rebuilder struct {
	onRequest func(*Request)
	onBio     func(*Bio)

	now    Time
	lastID uint64
	open   int // requests created and not yet emitted

	// The indexes of each device (see rbDev), with a one-entry cache: most
	// captures have one device.
	devs    map[Dev]*rbDev
	lastDev Dev
	last    *rbDev

	fragQ  rbQueue[*rbFrag]  // eviction queue of fragments waiting for a request
	remapQ rbQueue[*rbRemap] // eviction queue of remap links waiting for their Q

	// Per-process bookkeeping (next bio index, name), with a cache
	// direct-mapped by pid: events alternate between a few processes.
	procs     map[uint32]*rbProc
	procCache [rbProcCache]*rbProc

	freeReqs []*rbReq // emitted requests, recycled by newReq
	bioSlab  []rbBio  // bios allocated in blocks (see newBio)
	freeBios []*rbBio // emitted bios nothing refers to, recycled by newBio

	stats RebuildStats
}

// RebuildStats counts what a Rebuilder saw and made.
type RebuildStats struct {
	Events   uint64 // I/O events added (notify records are not counted)
	Requests uint64 // requests emitted, merged-away ones included
	Bios     uint64 // bios emitted

	NoQueue     uint64 // requests flagged FlagNoQueue (in flight at start, flushes, passthrough)
	UnmatchedD  uint64 // D with no queued request: issued before the capture started
	UnmatchedC  uint64 // C with no issued request nor queued bio: in flight at start
	Flushes     uint64 // zero-byte flush requests the kernel made itself (FlagNoQueue)
	Passthrough uint64 // passthrough (PC) requests with no bio (FlagNoQueue)
	Incomplete  uint64 // requests emitted with FlagIncomplete: open at Close, or abandoned
	// Abandoned counts the issued requests closed as never completed before
	// Close: beyond RebuildMaxInFlight on their device, or issued more than
	// RebuildInFlightTimeout before the latest event (included in Incomplete).
	Abandoned uint64

	Requeues      uint64 // R events matched to an issued request
	Remaps        uint64 // A events
	Splits        uint64 // X events that split a queued bio
	BackMerges    uint64 // bio back merges (M)
	FrontMerges   uint64 // bio front merges (F)
	RequestMerges uint64 // request-level merges (M with FS/PC): requests merged away
	Partial       uint64 // C events that completed only part of a request
	BioCompletes  uint64 // requests made of a bio completed on a bio-based device (C without D)

	OrphanBios      uint64 // bios emitted with no request (Request 0)
	UnmatchedMerges uint64 // M/F with no queued request to merge into
	UnmatchedOther  uint64 // R, X, request-level M with nothing to act on
	CompleteOverrun uint64 // C events covering more sectors than the requests they matched

	MaxOpen uint64 // most requests open at once
}

const (
	// rbStaleAfter is how long (trace time) a bio may wait for a request
	// before it is emitted as an orphan.
	rbStaleAfter = Time(10 * time.Second)
	// rbRemapGrace is how long a remapped-away bio waits, after its lower bio
	// finished, for a completion on its own device.
	rbRemapGrace = Time(1 * time.Second)
	// rbRemapTTL is how long an A waits for the Q (or A) it announces.
	rbRemapTTL = Time(1 * time.Second)
)

// Bounds on the requests a Rebuilder keeps issued and waiting for their C
// (a capture whose completions were lost: a missing per-CPU file, a
// `blktrace -a issue` capture). A request past either is closed as never
// completed: emitted with FlagIncomplete and counted in
// RebuildStats.Abandoned. A C that comes for it later is then unmatched
// (UnmatchedC).
const (
	// RebuildMaxInFlight bounds the issued requests of one device: the
	// blk-mq tag space of a device is at most 10240 per hardware queue
	// (BLK_MQ_MAX_DEPTH); 65536 leaves room for several hardware queues.
	RebuildMaxInFlight = 1 << 16
	// RebuildInFlightTimeout bounds how long a request may stay issued:
	// twice the block layer's default request timeout (30 s), after which
	// the kernel has timed the request out (blk_mq_rq_timed_out).
	RebuildInFlightTimeout = Time(60 * time.Second)
)

type rbKey struct {
	dev Dev
	sec uint64
}

// rbDev holds one device's indexes. Each maps a sector to the entries at
// it, oldest first.
type rbDev struct {
	pending  rbIndex[*rbFrag] // fragments waiting for a request, by start
	remapped rbIndex[*rbFrag] // fragments remapped to a lower device, by start
	qStart   rbIndex[*rbReq]  // queued requests by start
	qEnd     rbIndex[*rbReq]  // queued requests by end
	issued   rbIndex[*rbReq]  // issued requests by current start
	remaps   rbIndex[*rbRemap]
	inflight rbInflight // issued requests, in issue order
}

// rbProcCache is the size of Rebuilder.procCache.
const rbProcCache = 16

// rbProc is what the Rebuilder keeps of a process.
type rbProc struct {
	pid  uint32
	next uint32 // index of its next bio
	comm string // its name, "" while unknown
}

const (
	rbPending  uint8 = iota // waiting for a request
	rbInReq                 // part of a request
	rbRemapped              // remapped to a lower device
	rbDone                  // emitted
)

// rbFrag is a bio or one part of a split bio.
type rbFrag struct {
	bio        *rbBio
	start, end uint64 // sectors
	req        *rbReq
	merge      MergeKind
	state      uint8
	split      bool
	deadline   Time // eviction time while pending or remapped; NoTime: none yet

	// For remapped fragments: the lower request that served the lower bio.
	childReq             uint64
	childIssue, childEnd Time
}

type rbBio struct {
	Bio
	first rbFrag // the bio's first (or only) fragment
	open  int    // fragments not yet finished; 0 once emitted
	// refs counts the references that outlive the bio's emission: entries
	// of its fragments in fragQ, remap links whose parent is one of its
	// fragments, and lower bios whose parent is. An emitted bio with no
	// reference left is recycled (see unref).
	refs       int32
	incomplete bool
	remapped   bool
	fromDev    Dev
	fromSector uint64
	parent     *rbFrag // upper-layer fragment this bio was remapped from
	comm       string
}

type rbReq struct {
	Request
	start, end uint64 // current range in sectors
	frags      []*rbFrag
	issued     bool
	needInsert bool
	ifPos      int // position in its device's inflight list while issued; -1: none
}

type rbRemap struct {
	key        rbKey
	t          Time
	fromDev    Dev
	fromSector uint64
	parent     *rbFrag
	used       bool
}

// NewRebuilder returns a Rebuilder that calls onRequest for each request once
// it is finished (completed, merged away, or at Close), and onBio for each
// bio once its request is known to be finished. Either may be nil.
func NewRebuilder(onRequest func(*Request), onBio func(*Bio)) *Rebuilder {
	return &Rebuilder{
		onRequest: onRequest,
		onBio:     onBio,
		devs:      make(map[Dev]*rbDev),
		procs:     make(map[uint32]*rbProc),
	}
}

// dev returns the indexes of device d, creating them on first use.
func (b *Rebuilder) dev(d Dev) *rbDev {
	if b.last != nil && b.lastDev == d {
		return b.last
	}
	x := b.devs[d]
	if x == nil {
		x = &rbDev{}
		b.devs[d] = x
	}
	b.lastDev, b.last = d, x
	return x
}

// proc returns the bookkeeping of process pid, creating it on first use.
func (b *Rebuilder) proc(pid uint32) *rbProc {
	c := &b.procCache[pid%rbProcCache]
	if p := *c; p != nil && p.pid == pid {
		return p
	}
	p := b.procs[pid]
	if p == nil {
		p = &rbProc{pid: pid}
		b.procs[pid] = p
	}
	*c = p
	return p
}

// comm returns the name of process pid, "" when unknown.
func (b *Rebuilder) comm(pid uint32) string {
	if p := b.procCache[pid%rbProcCache]; p != nil && p.pid == pid {
		return p.comm
	}
	if p := b.procs[pid]; p != nil {
		return p.comm
	}
	return ""
}

// Stats returns the counters so far.
func (b *Rebuilder) Stats() RebuildStats { return b.stats }

// Add feeds the next event. Events must come in the order a reader returns
// them (nondecreasing Time). Notify records only teach process names.
func (b *Rebuilder) Add(e *Event) {
	if e.Action.IsNotify() {
		if e.Action == ActionProcess && e.Text != "" {
			b.proc(e.PID).comm = e.Text
		}
		return
	}
	if e.Comm != "" {
		if p := b.proc(e.PID); p.comm != e.Comm {
			p.comm = e.Comm
		}
	}
	b.stats.Events++
	if e.Time > b.now {
		b.now = e.Time
	}
	b.expire()
	b.timeOut(b.dev(e.Dev))
	switch e.Action {
	case ActionQueue:
		b.queue(e)
	case ActionGetRQ:
		b.get(e)
	case ActionBackMerge:
		if e.Cat&(CatFS|CatPC) != 0 {
			b.requestMerge(e)
		} else {
			b.bioMerge(e, MergeBack)
		}
	case ActionFrontMerge:
		b.bioMerge(e, MergeFront)
	case ActionInsert:
		b.insert(e)
	case ActionIssue:
		b.issue(e)
	case ActionComplete:
		b.complete(e)
	case ActionRequeue:
		b.requeue(e)
	case ActionSplit:
		b.split(e)
	case ActionRemap:
		b.remap(e)
	}
}

// Close ends the stream: it emits every request still open with
// FlagIncomplete (in creation order), then every bio still waiting for a
// request (in queue order). The Rebuilder is empty afterwards.
func (b *Rebuilder) Close() {
	// 1. Open requests, queued or issued, by ID.
	var open []*rbReq
	for _, d := range b.devs {
		add := func(l []*rbReq) { open = append(open, l...) }
		d.qStart.all(add)
		d.issued.all(add)
	}
	slices.SortFunc(open, func(x, y *rbReq) int { return rbCmpU64(x.ID, y.ID) })
	for _, r := range open {
		r.Flags |= FlagIncomplete
		b.stats.Incomplete++
		b.unindex(r)
		b.finishReq(r)
	}
	// 2. Bios still waiting for a request, and remapped-away bios.
	var frags []*rbFrag
	for _, d := range b.devs {
		add := func(l []*rbFrag) { frags = append(frags, l...) }
		d.pending.all(add)
		d.remapped.all(add)
	}
	slices.SortFunc(frags, func(x, y *rbFrag) int {
		if c := rbCmpI64(int64(x.bio.Queue), int64(y.bio.Queue)); c != 0 {
			return c
		}
		if c := rbCmpU64(uint64(x.bio.PID), uint64(y.bio.PID)); c != 0 {
			return c
		}
		if c := rbCmpU64(uint64(x.bio.Index), uint64(y.bio.Index)); c != 0 {
			return c
		}
		return rbCmpU64(x.start, y.start)
	})
	for _, f := range frags {
		if f.state == rbPending || f.state == rbRemapped {
			b.finishFrag(f, nil)
		}
	}
	for _, d := range b.devs {
		d.pending.reset()
		d.remapped.reset()
		d.remaps.reset()
	}
	b.fragQ = rbQueue[*rbFrag]{}
	b.remapQ = rbQueue[*rbRemap]{}
}

// expire evicts fragments that waited too long for a request and remap
// links whose Q never came.
func (b *Rebuilder) expire() {
	for {
		f, ok := b.fragQ.peek()
		if !ok {
			break
		}
		if f.state != rbPending && f.state != rbRemapped {
			b.fragQ.pop()
			b.unref(f.bio)
			continue
		}
		if f.deadline == NoTime {
			// A remapped fragment whose lower bio is in flight: it is queued
			// again when that bio finishes.
			b.fragQ.pop()
			b.unref(f.bio) // not emitted: not recycled
			continue
		}
		if f.deadline > b.now {
			break
		}
		b.fragQ.pop()
		b.unref(f.bio) // not emitted: not recycled
		if d := b.dev(f.bio.Dev); f.state == rbPending {
			d.pending.drop(f.start, f)
		} else {
			d.remapped.drop(f.start, f)
		}
		b.finishFrag(f, nil)
	}
	for {
		m, ok := b.remapQ.peek()
		if !ok || (!m.used && m.t+rbRemapTTL > b.now) {
			break
		}
		b.remapQ.pop()
		if m.used {
			if m.parent != nil {
				b.unref(m.parent.bio)
			}
			continue
		}
		m.used = true
		b.dev(m.key.dev).remaps.drop(m.key.sec, m)
		if p := m.parent; p != nil {
			if p.state == rbRemapped && p.deadline == NoTime {
				p.deadline = b.now + rbRemapGrace
				b.pushFrag(p)
			}
			b.unref(p.bio)
		}
	}
}

func (b *Rebuilder) queue(e *Event) {
	p := b.proc(e.PID)
	idx := p.next
	p.next++
	// newBio's bio is zeroed: set the fields one by one (a composite
	// literal would be built aside and copied with write barriers).
	bio := b.newBio()
	bio.Bio = Bio{
		PID: e.PID, Index: idx, Dev: e.Dev, Sector: e.Sector, Bytes: e.Bytes,
		Cat: e.Cat.OpFlags(), Cgroup: e.Cgroup, Queue: e.Time, Issue: NoTime, Done: NoTime,
	}
	bio.open = 1
	bio.comm = p.comm
	d := b.dev(e.Dev)
	if m := d.remaps.popNewest(e.Sector); m != nil {
		m.used = true
		bio.remapped, bio.fromDev, bio.fromSector, bio.parent = true, m.fromDev, m.fromSector, m.parent
		if bio.parent != nil {
			bio.parent.bio.refs++
		}
	}
	f := &bio.first
	f.bio, f.start, f.end, f.state, f.deadline = bio, e.Sector, e.End(), rbPending, e.Time+rbStaleAfter
	d.pending.push(e.Sector, f)
	b.pushFrag(f)
}

// pushFrag queues f for eviction; the entry holds a reference to its bio.
func (b *Rebuilder) pushFrag(f *rbFrag) {
	f.bio.refs++
	b.fragQ.push(f)
}

// unref drops a reference to bio, recycling it when it was the last one
// and the bio is emitted.
func (b *Rebuilder) unref(bio *rbBio) {
	bio.refs--
	b.maybeFree(bio)
}

// maybeFree recycles an emitted bio nothing refers to any more.
func (b *Rebuilder) maybeFree(bio *rbBio) {
	if bio.open != 0 || bio.refs != 0 {
		return
	}
	*bio = rbBio{}
	if len(b.freeBios) < rbMaxFree {
		b.freeBios = append(b.freeBios, bio)
	}
}

// newBio returns a zeroed bio. Bios are allocated rbBioBlock at a time:
// they die in about the order they were queued (a bio lives at least until
// its first fragment leaves the FIFO eviction queue), so a block is freed
// soon after its last bio is.
func (b *Rebuilder) newBio() *rbBio {
	if n := len(b.freeBios); n > 0 {
		bio := b.freeBios[n-1]
		b.freeBios[n-1] = nil
		b.freeBios = b.freeBios[:n-1]
		return bio
	}
	if len(b.bioSlab) == 0 {
		b.bioSlab = make([]rbBio, rbBioBlock)
	}
	bio := &b.bioSlab[0]
	b.bioSlab = b.bioSlab[1:]
	return bio
}

// takePending removes and returns the newest fragment waiting at (dev, sec).
func (b *Rebuilder) takePending(dev Dev, sec uint64) *rbFrag {
	return b.dev(dev).pending.popNewest(sec)
}

// newReq makes a request from event e and, when known, its first fragment.
func (b *Rebuilder) newReq(e *Event, f *rbFrag) *rbReq {
	b.lastID++
	var r *rbReq
	if n := len(b.freeReqs); n > 0 {
		r = b.freeReqs[n-1]
		b.freeReqs[n-1] = nil
		b.freeReqs = b.freeReqs[:n-1]
	} else {
		r = new(rbReq)
	}
	// Cleared in place and set field by field: a literal would be built
	// aside and copied in with write barriers.
	frags := r.frags[:0]
	*r = rbReq{}
	r.ID, r.Dev, r.Sector, r.Bytes, r.Cat = b.lastID, e.Dev, e.Sector, e.Bytes, e.Cat.OpFlags()
	r.Queue, r.Get, r.Insert, r.Issue, r.Complete = NoTime, NoTime, NoTime, NoTime, NoTime
	r.start, r.end, r.needInsert, r.frags, r.ifPos = e.Sector, e.End(), true, frags, -1
	if f != nil {
		bio := f.bio
		r.Queue, r.PID, r.Comm, r.Cgroup, r.FirstBio = bio.Queue, bio.PID, bio.comm, bio.Cgroup, bio.Index
		if bio.Cat != 0 {
			r.Cat = bio.Cat
		}
		if bio.remapped {
			r.Flags |= FlagRemapped
			r.FromDev, r.FromSector = bio.fromDev, bio.fromSector
		}
		if f.split {
			r.Flags |= FlagSplit
		}
		b.attach(f, r, MergeNone)
	} else {
		r.Flags |= FlagNoQueue
		b.stats.NoQueue++
	}
	b.open++
	if uint64(b.open) > b.stats.MaxOpen {
		b.stats.MaxOpen = uint64(b.open)
	}
	return r
}

func (b *Rebuilder) attach(f *rbFrag, r *rbReq, kind MergeKind) {
	f.req, f.state, f.merge = r, rbInReq, kind
	r.frags = append(r.frags, f)
	r.Bios++
}

// index puts a queued request in the queued indexes.
func (b *Rebuilder) index(r *rbReq) {
	d := b.dev(r.Dev)
	d.qStart.push(r.start, r)
	d.qEnd.push(r.end, r)
}

// unindex removes a request from whichever indexes hold it.
func (b *Rebuilder) unindex(r *rbReq) {
	d := b.dev(r.Dev)
	if r.issued {
		d.issued.drop(r.start, r)
		d.inflight.remove(r)
		return
	}
	d.qStart.drop(r.start, r)
	d.qEnd.drop(r.end, r)
}

// setRange moves a queued request to a new [start, end) range.
func (b *Rebuilder) setRange(r *rbReq, start, end uint64) {
	if start == r.start && end == r.end {
		return
	}
	b.unindex(r)
	r.start, r.end = start, end
	r.Sector, r.Bytes = start, uint32((end-start)<<9)
	b.index(r)
}

func (b *Rebuilder) get(e *Event) {
	f := b.takePending(e.Dev, e.Sector)
	r := b.newReq(e, f)
	r.Get = e.Time
	if f == nil {
		r.PID, r.Comm, r.Cgroup = e.PID, b.comm(e.PID), e.Cgroup
	}
	b.index(r)
}

func (b *Rebuilder) bioMerge(e *Event, kind MergeKind) {
	f := b.takePending(e.Dev, e.Sector)
	var r *rbReq
	if d := b.dev(e.Dev); kind == MergeBack {
		r = rbNewest(d.qEnd.get(e.Sector))
	} else {
		r = rbNewest(d.qStart.get(e.End()))
	}
	if r == nil {
		b.stats.UnmatchedMerges++
		if f != nil {
			f.merge = kind
			b.finishFrag(f, nil)
		}
		return
	}
	if kind == MergeBack {
		b.stats.BackMerges++
		r.BackMerges++
		b.setRange(r, r.start, max(r.end, e.End()))
	} else {
		b.stats.FrontMerges++
		r.FrontMerges++
		b.setRange(r, min(r.start, e.Sector), r.end)
	}
	if f != nil {
		b.attach(f, r, kind)
	}
}

// requestMerge handles block_rq_merge: the queued request at e's range is
// absorbed by the queued request that ends where it starts.
func (b *Rebuilder) requestMerge(e *Event) {
	d := b.dev(e.Dev)
	var next *rbReq
	for _, r := range slices.Backward(d.qStart.get(e.Sector)) {
		if r.end == e.End() || next == nil {
			next = r
		}
		if r.end == e.End() {
			break
		}
	}
	if next == nil {
		b.stats.UnmatchedOther++
		return
	}
	var abs *rbReq
	for _, r := range slices.Backward(d.qEnd.get(next.start)) {
		if r != next {
			abs = r
			break
		}
	}
	b.unindex(next)
	b.stats.RequestMerges++
	next.Flags |= FlagMergedAway
	if abs != nil {
		b.setRange(abs, abs.start, max(abs.end, next.end))
		for _, f := range next.frags {
			f.req = abs
			abs.frags = append(abs.frags, f)
		}
		abs.Bios += uint32(len(next.frags))
		abs.BackMerges += next.BackMerges
		abs.FrontMerges += next.FrontMerges
		next.frags = nil
	}
	b.finishReq(next)
}

func (b *Rebuilder) insert(e *Event) {
	queued := b.dev(e.Dev).qStart.get(e.Sector)
	var r *rbReq
	for _, c := range slices.Backward(queued) {
		if c.needInsert {
			r = c
			break
		}
	}
	if r == nil {
		r = rbNewest(queued)
	}
	if r == nil {
		// No G seen: start the request from the waiting bio, if any.
		f := b.takePending(e.Dev, e.Sector)
		r = b.newReq(e, f)
		if f == nil {
			b.countKernelMade(e)
		}
		b.index(r)
	}
	r.Insert = e.Time
	r.needInsert = false
	if e.Bytes != 0 {
		b.setRange(r, e.Sector, e.End())
	}
}

// countKernelMade counts a request with no bio by its kind.
func (b *Rebuilder) countKernelMade(e *Event) {
	switch {
	case e.Cat&CatPC != 0:
		b.stats.Passthrough++
	case e.Bytes == 0 && e.Cat&CatFlush != 0:
		b.stats.Flushes++
	}
}

func (b *Rebuilder) issue(e *Event) {
	d := b.dev(e.Dev)
	r := rbOldest(d.qStart.get(e.Sector))
	if r != nil {
		b.unindex(r)
	} else {
		f := b.takePending(e.Dev, e.Sector)
		r = b.newReq(e, f)
		if f == nil {
			if e.Cat&CatPC == 0 && !(e.Bytes == 0 && e.Cat&CatFlush != 0) {
				b.stats.UnmatchedD++
			}
			b.countKernelMade(e)
		}
	}
	b.markIssued(r, e)
	if e.Bytes == 0 && e.Cat&CatFlush != 0 && rbEmptyFlush(r) {
		// One flush serves every empty preflush pending when it is issued:
		// blk_kick_flush splices the whole pending list into the running
		// one behind a single flush_rq (block/blk-flush.c), whose D this
		// is, and blk_flush_complete_seq ends each of them when it
		// completes (C FN, then a zero-byte C per request). Issuing only
		// the oldest would leave the others queued for the next flush's
		// D, a lag that grows by one request with every shared flush.
		for {
			o := rbOldestEmptyFlush(d.qStart.get(e.Sector))
			if o == nil {
				break
			}
			b.unindex(o)
			b.markIssued(o, e)
		}
	}
	// Bounded resources: past RebuildMaxInFlight the oldest issued request
	// is closed as never completed.
	for d.inflight.live > RebuildMaxInFlight {
		b.abandon(d.inflight.oldest())
	}
}

// markIssued moves r, already out of the queued indexes, to the issued
// ones as issued by e.
func (b *Rebuilder) markIssued(r *rbReq, e *Event) {
	r.Issue = e.Time
	r.start, r.end = e.Sector, e.End()
	r.Sector, r.Bytes = e.Sector, e.Bytes
	r.issued = true
	d := b.dev(r.Dev)
	d.issued.push(r.start, r)
	d.inflight.push(r)
}

// rbEmptyFlush reports whether a queued request is an empty preflush (a
// zero-byte flush: fsync's, or a FLUSH the kernel made).
func rbEmptyFlush(r *rbReq) bool { return r.Cat&CatFlush != 0 && r.start == r.end }

// rbOldestEmptyFlush returns the oldest empty preflush of l, nil if none.
func rbOldestEmptyFlush(l []*rbReq) *rbReq {
	for _, r := range l {
		if rbEmptyFlush(r) {
			return r
		}
	}
	return nil
}

// abandon closes an issued request that will not complete (beyond
// RebuildMaxInFlight, or older than RebuildInFlightTimeout): it is emitted
// with FlagIncomplete and counted in Incomplete and Abandoned.
func (b *Rebuilder) abandon(r *rbReq) {
	r.Flags |= FlagIncomplete
	b.stats.Incomplete++
	b.stats.Abandoned++
	b.unindex(r)
	b.finishReq(r)
}

// timeOut abandons the requests of d issued more than
// RebuildInFlightTimeout before now.
func (b *Rebuilder) timeOut(d *rbDev) {
	for {
		r := d.inflight.oldest()
		if r == nil || r.Issue+RebuildInFlightTimeout >= b.now {
			return
		}
		b.abandon(r)
	}
}

// findIssued returns the oldest issued request on dev starting at sec, else
// the oldest covering sec (zero-byte requests only match exactly).
func (b *Rebuilder) findIssued(dev Dev, sec uint64, exact bool) *rbReq {
	d := b.dev(dev)
	if r := rbOldest(d.issued.get(sec)); r != nil || exact {
		return r
	}
	for _, r := range d.inflight.items[d.inflight.head:] {
		if r != nil && r.start <= sec && sec < r.end {
			return r
		}
	}
	return nil
}

func (b *Rebuilder) complete(e *Event) {
	// 1. Issued requests: walk the C's range, completing or advancing the
	//    oldest request at each sector.
	s, end := e.Sector, e.End()
	matched := false
	for {
		r := b.findIssued(e.Dev, s, e.Bytes == 0)
		if r == nil {
			break
		}
		matched = true
		r.Complete = e.Time
		if e.Error != 0 {
			r.Error = e.Error
		}
		stop := min(end, r.end)
		if e.Bytes == 0 || stop >= r.end {
			b.unindex(r)
			b.finishReq(r)
		} else {
			// Partial completion: the request now starts after what completed.
			// It keeps its place in the inflight list (issue order).
			b.stats.Partial++
			r.Flags |= FlagPartial
			d := b.dev(r.Dev)
			d.issued.drop(r.start, r)
			r.start = stop
			d.issued.push(r.start, r)
		}
		if e.Bytes == 0 || stop >= end {
			return
		}
		s = stop
	}
	if matched {
		b.stats.CompleteOverrun++
		return
	}
	// 2. Bio-based devices complete bios, not requests: a queued or
	//    remapped-away bio at this sector becomes a request of its own.
	d := b.dev(e.Dev)
	f := d.remapped.popOldest(e.Sector)
	if f == nil {
		f = d.pending.popOldest(e.Sector)
	}
	if f != nil {
		r := b.newReq(e, f)
		r.Sector, r.Bytes = f.start, uint32((f.end-f.start)<<9)
		r.Complete, r.Error = e.Time, e.Error
		b.stats.BioCompletes++
		b.finishReq(r)
		return
	}
	// 3. In flight when the capture started.
	r := b.newReq(e, nil)
	r.Complete, r.Error = e.Time, e.Error
	if e.Cat&CatPC == 0 && !(e.Bytes == 0 && e.Cat&CatFlush != 0) {
		b.stats.UnmatchedC++
	}
	b.countKernelMade(e)
	b.finishReq(r)
}

func (b *Rebuilder) requeue(e *Event) {
	r := b.findIssued(e.Dev, e.Sector, e.Bytes == 0)
	if r == nil {
		b.stats.UnmatchedOther++
		return
	}
	b.unindex(r)
	b.stats.Requeues++
	r.Requeues++
	r.issued = false
	r.needInsert = true
	r.start, r.end = e.Sector, max(e.End(), e.Sector)
	if e.Bytes != 0 {
		r.Sector, r.Bytes = e.Sector, e.Bytes
	}
	b.index(r)
}

func (b *Rebuilder) split(e *Event) {
	d := b.dev(e.Dev)
	f := rbNewest(d.pending.get(e.Sector))
	if f == nil || e.SplitSector <= f.start || e.SplitSector >= f.end {
		b.stats.UnmatchedOther++
		return
	}
	b.stats.Splits++
	second := &rbFrag{bio: f.bio, start: e.SplitSector, end: f.end, state: rbPending, split: true, deadline: e.Time + rbStaleAfter}
	f.end = e.SplitSector
	f.split = true
	f.bio.open++
	d.pending.push(e.SplitSector, second)
	b.pushFrag(second)
}

func (b *Rebuilder) remap(e *Event) {
	b.stats.Remaps++
	from := b.dev(e.FromDev)
	m := &rbRemap{key: rbKey{e.Dev, e.Sector}, t: e.Time, fromDev: e.FromDev, fromSector: e.FromSector}
	if prev := from.remaps.popNewest(e.FromSector); prev != nil {
		// 1. A chain of remaps with no Q between: carry the origin down.
		prev.used = true
		m.fromDev, m.fromSector, m.parent = prev.fromDev, prev.fromSector, prev.parent
		if m.parent != nil {
			m.parent.bio.refs++ // prev keeps its own until it leaves remapQ
		}
	} else if f := b.takePending(e.FromDev, e.FromSector); f != nil {
		// 2. A queued bio moves down a layer.
		f.state, f.deadline = rbRemapped, NoTime
		from.remapped.push(e.FromSector, f)
		m.parent = f
		f.bio.refs++
		if f.bio.remapped {
			m.fromDev, m.fromSector = f.bio.fromDev, f.bio.fromSector
		}
	}
	b.dev(e.Dev).remaps.push(e.Sector, m)
	b.remapQ.push(m)
}

// finishReq emits a finished request, then the bios it finished.
func (b *Rebuilder) finishReq(r *rbReq) {
	b.open--
	b.stats.Requests++
	if b.onRequest != nil {
		b.onRequest(&r.Request)
	}
	for _, f := range r.frags {
		b.finishFrag(f, r)
	}
	// Nothing refers to r any more (fragments keep a stale req pointer that
	// is never read once they are done): recycle it.
	clear(r.frags)
	if len(b.freeReqs) < rbMaxFree && cap(r.frags) <= rbMaxFreeCap {
		r.frags = r.frags[:0]
		b.freeReqs = append(b.freeReqs, r)
	}
}

// finishFrag marks a fragment finished (r nil: it never joined a request)
// and emits its bio when all its fragments are finished.
func (b *Rebuilder) finishFrag(f *rbFrag, r *rbReq) {
	if f.state == rbDone {
		return
	}
	f.state = rbDone
	bio := f.bio
	switch {
	case r != nil:
		if f == &bio.first {
			bio.Request, bio.Merge, bio.Issue = r.ID, f.merge, r.Issue
		}
		if r.Complete == NoTime {
			bio.incomplete = true
		} else if bio.Done == NoTime || r.Complete > bio.Done {
			bio.Done = r.Complete
		}
	case f.childReq != 0:
		if f == &bio.first {
			bio.Request, bio.Issue = f.childReq, f.childIssue
		}
		if f.childEnd == NoTime {
			bio.incomplete = true
		} else if bio.Done == NoTime || f.childEnd > bio.Done {
			bio.Done = f.childEnd
		}
	default:
		if f == &bio.first {
			bio.Merge = f.merge
		}
		bio.incomplete = true
	}
	bio.open--
	if bio.open > 0 {
		return
	}
	if bio.incomplete {
		bio.Done = NoTime
	}
	if bio.Request == 0 {
		b.stats.OrphanBios++
	}
	b.stats.Bios++
	if b.onBio != nil {
		b.onBio(&bio.Bio)
	}
	// The upper-layer bio this one was remapped from is served by this one's
	// request; it waits rbRemapGrace for a completion on its own device.
	if p := bio.parent; p != nil {
		if p.state == rbRemapped {
			p.childReq, p.childIssue, p.childEnd = bio.Request, bio.Issue, bio.Done
			p.deadline = b.now + rbRemapGrace
			b.pushFrag(p)
		}
		bio.parent = nil
		b.unref(p.bio)
	}
	b.maybeFree(bio)
}

const (
	rbBioBlock   = 32   // bios per allocation
	rbMaxFree    = 4096 // most recycled requests or index slots kept
	rbMaxFreeCap = 64   // largest list capacity kept with a recycled one
)

// rbIndex maps the sectors of one device to lists of entries, oldest
// first: an open-addressing hash table (linear probing, backward-shift
// deletion, at most half full) keyed by sector, cheaper than a Go map for
// the several lookups each event makes. A position holds its list itself
// (no slot to follow to it); a list's array is recycled, with its
// capacity, when the list empties: in the steady state indexing allocates
// nothing. The table grows with the entries in flight and never shrinks.
type rbIndex[T comparable] struct {
	ents []rbEnt[T] // empty items: a free position
	bits uint8      // len(ents) == 1<<bits
	n    int        // positions in use
	free [][]T      // emptied lists' arrays, of length 0
}

// rbEnt is one position of an rbIndex: the list at sector sec, never
// empty while the position is in use.
type rbEnt[T any] struct {
	sec   uint64
	items []T
}

// home returns the first position probed for sec (Fibonacci hashing: the
// top bits of the product mix sectors that differ in any bit).
func (x *rbIndex[T]) home(sec uint64) int {
	return int((sec * 0x9e3779b97f4a7c15) >> (64 - x.bits))
}

// find returns the position of sec, or -1.
func (x *rbIndex[T]) find(sec uint64) int {
	if x.n == 0 {
		return -1
	}
	mask := len(x.ents) - 1
	for i := x.home(sec); ; i = (i + 1) & mask {
		e := &x.ents[i]
		if len(e.items) == 0 {
			return -1
		}
		if e.sec == sec {
			return i
		}
	}
}

// insert adds the list items (not empty) at sec, which is absent.
func (x *rbIndex[T]) insert(sec uint64, items []T) {
	if 2*(x.n+1) > len(x.ents) {
		x.grow()
	}
	mask := len(x.ents) - 1
	i := x.home(sec)
	for len(x.ents[i].items) != 0 {
		i = (i + 1) & mask
	}
	x.ents[i] = rbEnt[T]{sec, items}
	x.n++
}

func (x *rbIndex[T]) grow() {
	old := x.ents
	if x.bits == 0 {
		x.bits = 6
	} else {
		x.bits++
	}
	x.ents = make([]rbEnt[T], 1<<x.bits)
	mask := len(x.ents) - 1
	for _, e := range old {
		if len(e.items) == 0 {
			continue
		}
		i := x.home(e.sec)
		for len(x.ents[i].items) != 0 {
			i = (i + 1) & mask
		}
		x.ents[i] = e
	}
}

// del empties position i, moving back the entries after it that probing
// would no longer reach.
func (x *rbIndex[T]) del(i int) {
	mask := len(x.ents) - 1
	for j := (i + 1) & mask; len(x.ents[j].items) != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole at i if i lies on its probe path:
		// no further from its home than j is.
		if (j-x.home(x.ents[j].sec))&mask >= (j-i)&mask {
			x.ents[i] = x.ents[j]
			i = j
		}
	}
	x.ents[i] = rbEnt[T]{}
	x.n--
}

// get returns the list at sec (nil when empty); it is valid until the
// index changes.
func (x *rbIndex[T]) get(sec uint64) []T {
	if i := x.find(sec); i >= 0 {
		return x.ents[i].items
	}
	return nil
}

// push appends v to the list at sec.
func (x *rbIndex[T]) push(sec uint64, v T) {
	if i := x.find(sec); i >= 0 {
		x.ents[i].items = append(x.ents[i].items, v)
		return
	}
	var items []T
	if n := len(x.free); n > 0 {
		items = x.free[n-1]
		x.free[n-1] = nil
		x.free = x.free[:n-1]
	}
	x.insert(sec, append(items, v))
}

// drop removes v from the list at sec.
func (x *rbIndex[T]) drop(sec uint64, v T) {
	p := x.find(sec)
	if p < 0 {
		return
	}
	i := slices.Index(x.ents[p].items, v)
	if i < 0 {
		return
	}
	x.remove(p, i)
}

// popNewest removes and returns the newest entry at sec (zero if none).
func (x *rbIndex[T]) popNewest(sec uint64) T {
	p := x.find(sec)
	if p < 0 {
		var zero T
		return zero
	}
	items := x.ents[p].items
	i := len(items) - 1
	v := items[i]
	x.remove(p, i)
	return v
}

// popOldest removes and returns the oldest entry at sec (zero if none).
func (x *rbIndex[T]) popOldest(sec uint64) T {
	p := x.find(sec)
	if p < 0 {
		var zero T
		return zero
	}
	v := x.ents[p].items[0]
	x.remove(p, 0)
	return v
}

// remove deletes item i of the list at position p, freeing the position
// (and recycling the list's array) when the list empties.
func (x *rbIndex[T]) remove(p, i int) {
	items := x.ents[p].items
	if len(items) > 1 {
		x.ents[p].items = slices.Delete(items, i, i+1)
		return
	}
	var zero T
	items[0] = zero
	x.del(p)
	if len(x.free) < rbMaxFree && cap(items) <= rbMaxFreeCap {
		x.free = append(x.free, items[:0])
	}
}

// all calls f with every list.
func (x *rbIndex[T]) all(f func([]T)) {
	for _, e := range x.ents {
		if len(e.items) != 0 {
			f(e.items)
		}
	}
}

// reset empties the index.
func (x *rbIndex[T]) reset() {
	clear(x.ents)
	x.n = 0
	x.free = nil
}

func rbNewest[T any](l []*T) *T {
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}

func rbOldest[T any](l []*T) *T {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

// rbInflight is a device's issued requests in issue order: a FIFO with
// removal anywhere in O(1) (the slot is cleared; cleared slots are
// compacted away once they outnumber the live ones), so that completions
// out of order, and Close over millions of requests never completed, cost
// linear time. items[head] is live unless the list is empty.
type rbInflight struct {
	items []*rbReq
	head  int
	live  int
}

func (q *rbInflight) push(r *rbReq) {
	r.ifPos = len(q.items)
	q.items = append(q.items, r)
	q.live++
}

// oldest returns the earliest issued request, nil when none.
func (q *rbInflight) oldest() *rbReq {
	if q.head < len(q.items) {
		return q.items[q.head]
	}
	return nil
}

// remove takes r out of the list (a no-op when it is not in it).
func (q *rbInflight) remove(r *rbReq) {
	if r.ifPos < 0 || r.ifPos >= len(q.items) || q.items[r.ifPos] != r {
		return
	}
	q.items[r.ifPos] = nil
	r.ifPos = -1
	q.live--
	for q.head < len(q.items) && q.items[q.head] == nil {
		q.head++
	}
	switch {
	case q.live == 0:
		clear(q.items)
		q.items, q.head = q.items[:0], 0
	case len(q.items)-q.live > q.live+1024:
		n := 0
		for _, x := range q.items[q.head:] {
			if x != nil {
				x.ifPos = n
				q.items[n] = x
				n++
			}
		}
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

// rbQueue is a FIFO that reuses its backing array.
type rbQueue[T any] struct {
	items []T
	head  int
}

func (q *rbQueue[T]) push(v T) { q.items = append(q.items, v) }

func (q *rbQueue[T]) peek() (T, bool) {
	if q.head >= len(q.items) {
		var zero T
		return zero, false
	}
	return q.items[q.head], true
}

func (q *rbQueue[T]) pop() {
	var zero T
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head >= 1024 && q.head*2 >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

func rbCmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func rbCmpI64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

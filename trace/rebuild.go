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
//     that device. C completes the oldest issued request that starts at the
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
//   - Requests still open at Close are emitted with FlagIncomplete.
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
// the processes seen, not by the events); everything else is freed once
// emitted.
//
// A Rebuilder is not safe for concurrent use. The *Request and *Bio passed
// to the callbacks are valid only during the call; copy them to keep them.
type Rebuilder struct {
	onRequest func(*Request)
	onBio     func(*Bio)

	now    Time
	lastID uint64
	open   int // requests created and not yet emitted

	pending  map[rbKey][]*rbFrag // fragments waiting for a request, by (dev, start)
	remapped map[rbKey][]*rbFrag // fragments remapped to a lower device, by (dev, start)
	qStart   map[rbKey][]*rbReq  // queued requests by (dev, start), oldest first
	qEnd     map[rbKey][]*rbReq  // queued requests by (dev, end), oldest first
	issued   map[rbKey][]*rbReq  // issued requests by (dev, current start), oldest first
	inflight map[Dev][]*rbReq    // issued requests per device, in issue order
	remaps   map[rbKey][]*rbRemap

	fragQ  rbQueue[*rbFrag]  // eviction queue of fragments waiting for a request
	remapQ rbQueue[*rbRemap] // eviction queue of remap links waiting for their Q

	nextIndex map[uint32]uint32 // next bio index by PID
	comm      map[uint32]string // process names by PID

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
	Incomplete  uint64 // requests still open at Close (FlagIncomplete)

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

type rbKey struct {
	dev Dev
	sec uint64
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
	first      *rbFrag
	open       int // fragments not yet finished
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
		pending:   make(map[rbKey][]*rbFrag),
		remapped:  make(map[rbKey][]*rbFrag),
		qStart:    make(map[rbKey][]*rbReq),
		qEnd:      make(map[rbKey][]*rbReq),
		issued:    make(map[rbKey][]*rbReq),
		inflight:  make(map[Dev][]*rbReq),
		remaps:    make(map[rbKey][]*rbRemap),
		nextIndex: make(map[uint32]uint32),
		comm:      make(map[uint32]string),
	}
}

// Stats returns the counters so far.
func (b *Rebuilder) Stats() RebuildStats { return b.stats }

// Add feeds the next event. Events must come in the order a reader returns
// them (nondecreasing Time). Notify records only teach process names.
func (b *Rebuilder) Add(e *Event) {
	if e.Action.IsNotify() {
		if e.Action == ActionProcess && e.Text != "" {
			b.comm[e.PID] = e.Text
		}
		return
	}
	if e.Comm != "" && b.comm[e.PID] != e.Comm {
		b.comm[e.PID] = e.Comm
	}
	b.stats.Events++
	if e.Time > b.now {
		b.now = e.Time
	}
	b.expire()
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
	for _, l := range b.qStart {
		open = append(open, l...)
	}
	for _, l := range b.issued {
		open = append(open, l...)
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
	for _, l := range b.pending {
		frags = append(frags, l...)
	}
	for _, l := range b.remapped {
		frags = append(frags, l...)
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
	clear(b.pending)
	clear(b.remapped)
	clear(b.remaps)
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
			continue
		}
		if f.deadline == NoTime {
			// A remapped fragment whose lower bio is in flight: it is queued
			// again when that bio finishes.
			b.fragQ.pop()
			continue
		}
		if f.deadline > b.now {
			break
		}
		b.fragQ.pop()
		if f.state == rbPending {
			rbDrop(b.pending, rbKey{f.bio.Dev, f.start}, f)
		} else {
			rbDrop(b.remapped, rbKey{f.bio.Dev, f.start}, f)
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
			continue
		}
		m.used = true
		rbDrop(b.remaps, m.key, m)
		if p := m.parent; p != nil && p.state == rbRemapped && p.deadline == NoTime {
			p.deadline = b.now + rbRemapGrace
			b.fragQ.push(p)
		}
	}
}

func (b *Rebuilder) queue(e *Event) {
	idx := b.nextIndex[e.PID]
	b.nextIndex[e.PID] = idx + 1
	bio := &rbBio{
		Bio: Bio{
			PID: e.PID, Index: idx, Dev: e.Dev, Sector: e.Sector, Bytes: e.Bytes,
			Cat: e.Cat.OpFlags(), Cgroup: e.Cgroup, Queue: e.Time, Issue: NoTime, Done: NoTime,
		},
		open: 1,
		comm: b.comm[e.PID],
	}
	key := rbKey{e.Dev, e.Sector}
	if m := rbNewest(b.remaps[key]); m != nil {
		m.used = true
		rbDrop(b.remaps, key, m)
		bio.remapped, bio.fromDev, bio.fromSector, bio.parent = true, m.fromDev, m.fromSector, m.parent
	}
	f := &rbFrag{bio: bio, start: e.Sector, end: e.End(), state: rbPending, deadline: e.Time + rbStaleAfter}
	bio.first = f
	rbPush(b.pending, key, f)
	b.fragQ.push(f)
}

// takePending removes and returns the newest fragment waiting at (dev, sec).
func (b *Rebuilder) takePending(dev Dev, sec uint64) *rbFrag {
	key := rbKey{dev, sec}
	f := rbNewest(b.pending[key])
	if f != nil {
		rbDrop(b.pending, key, f)
	}
	return f
}

// newReq makes a request from event e and, when known, its first fragment.
func (b *Rebuilder) newReq(e *Event, f *rbFrag) *rbReq {
	b.lastID++
	r := &rbReq{
		Request: Request{
			ID: b.lastID, Dev: e.Dev, Sector: e.Sector, Bytes: e.Bytes, Cat: e.Cat.OpFlags(),
			Queue: NoTime, Get: NoTime, Insert: NoTime, Issue: NoTime, Complete: NoTime,
		},
		start: e.Sector, end: e.End(), needInsert: true,
	}
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
	rbPush(b.qStart, rbKey{r.Dev, r.start}, r)
	rbPush(b.qEnd, rbKey{r.Dev, r.end}, r)
}

// unindex removes a request from whichever indexes hold it.
func (b *Rebuilder) unindex(r *rbReq) {
	if r.issued {
		rbDrop(b.issued, rbKey{r.Dev, r.start}, r)
		l := b.inflight[r.Dev]
		if i := slices.Index(l, r); i >= 0 {
			l = slices.Delete(l, i, i+1)
		}
		if len(l) == 0 {
			delete(b.inflight, r.Dev)
		} else {
			b.inflight[r.Dev] = l
		}
		return
	}
	rbDrop(b.qStart, rbKey{r.Dev, r.start}, r)
	rbDrop(b.qEnd, rbKey{r.Dev, r.end}, r)
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
		r.PID, r.Comm, r.Cgroup = e.PID, b.comm[e.PID], e.Cgroup
	}
	b.index(r)
}

func (b *Rebuilder) bioMerge(e *Event, kind MergeKind) {
	f := b.takePending(e.Dev, e.Sector)
	var r *rbReq
	if kind == MergeBack {
		r = rbNewest(b.qEnd[rbKey{e.Dev, e.Sector}])
	} else {
		r = rbNewest(b.qStart[rbKey{e.Dev, e.End()}])
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
	var next *rbReq
	for _, r := range slices.Backward(b.qStart[rbKey{e.Dev, e.Sector}]) {
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
	for _, r := range slices.Backward(b.qEnd[rbKey{e.Dev, next.start}]) {
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
	key := rbKey{e.Dev, e.Sector}
	var r *rbReq
	for _, c := range slices.Backward(b.qStart[key]) {
		if c.needInsert {
			r = c
			break
		}
	}
	if r == nil {
		r = rbNewest(b.qStart[key])
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
	r := rbOldest(b.qStart[rbKey{e.Dev, e.Sector}])
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
	r.Issue = e.Time
	r.start, r.end = e.Sector, e.End()
	r.Sector, r.Bytes = e.Sector, e.Bytes
	r.issued = true
	rbPush(b.issued, rbKey{r.Dev, r.start}, r)
	b.inflight[r.Dev] = append(b.inflight[r.Dev], r)
}

// findIssued returns the oldest issued request on dev starting at sec, else
// the oldest covering sec (zero-byte requests only match exactly).
func (b *Rebuilder) findIssued(dev Dev, sec uint64, exact bool) *rbReq {
	if r := rbOldest(b.issued[rbKey{dev, sec}]); r != nil || exact {
		return r
	}
	for _, r := range b.inflight[dev] {
		if r.start <= sec && sec < r.end {
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
			b.stats.Partial++
			r.Flags |= FlagPartial
			b.unindex(r)
			r.start = stop
			r.issued = true
			rbPush(b.issued, rbKey{r.Dev, r.start}, r)
			b.inflight[r.Dev] = rbInsertByID(b.inflight[r.Dev], r)
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
	key := rbKey{e.Dev, e.Sector}
	f := rbOldest(b.remapped[key])
	if f != nil {
		rbDrop(b.remapped, key, f)
	} else if f = rbOldest(b.pending[key]); f != nil {
		rbDrop(b.pending, key, f)
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
	key := rbKey{e.Dev, e.Sector}
	f := rbNewest(b.pending[key])
	if f == nil || e.SplitSector <= f.start || e.SplitSector >= f.end {
		b.stats.UnmatchedOther++
		return
	}
	b.stats.Splits++
	second := &rbFrag{bio: f.bio, start: e.SplitSector, end: f.end, state: rbPending, split: true, deadline: e.Time + rbStaleAfter}
	f.end = e.SplitSector
	f.split = true
	f.bio.open++
	rbPush(b.pending, rbKey{e.Dev, e.SplitSector}, second)
	b.fragQ.push(second)
}

func (b *Rebuilder) remap(e *Event) {
	b.stats.Remaps++
	from := rbKey{e.FromDev, e.FromSector}
	m := &rbRemap{key: rbKey{e.Dev, e.Sector}, t: e.Time, fromDev: e.FromDev, fromSector: e.FromSector}
	if prev := rbNewest(b.remaps[from]); prev != nil {
		// 1. A chain of remaps with no Q between: carry the origin down.
		prev.used = true
		rbDrop(b.remaps, from, prev)
		m.fromDev, m.fromSector, m.parent = prev.fromDev, prev.fromSector, prev.parent
	} else if f := b.takePending(e.FromDev, e.FromSector); f != nil {
		// 2. A queued bio moves down a layer.
		f.state, f.deadline = rbRemapped, NoTime
		rbPush(b.remapped, from, f)
		m.parent = f
		if f.bio.remapped {
			m.fromDev, m.fromSector = f.bio.fromDev, f.bio.fromSector
		}
	}
	rbPush(b.remaps, m.key, m)
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
	r.frags = nil
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
		if f == bio.first {
			bio.Request, bio.Merge, bio.Issue = r.ID, f.merge, r.Issue
		}
		if r.Complete == NoTime {
			bio.incomplete = true
		} else if bio.Done == NoTime || r.Complete > bio.Done {
			bio.Done = r.Complete
		}
	case f.childReq != 0:
		if f == bio.first {
			bio.Request, bio.Issue = f.childReq, f.childIssue
		}
		if f.childEnd == NoTime {
			bio.incomplete = true
		} else if bio.Done == NoTime || f.childEnd > bio.Done {
			bio.Done = f.childEnd
		}
	default:
		if f == bio.first {
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
	if p := bio.parent; p != nil && p.state == rbRemapped {
		p.childReq, p.childIssue, p.childEnd = bio.Request, bio.Issue, bio.Done
		p.deadline = b.now + rbRemapGrace
		b.fragQ.push(p)
	}
	bio.parent = nil
}

// rbPush appends v to the list at k.
func rbPush[T any](m map[rbKey][]T, k rbKey, v T) { m[k] = append(m[k], v) }

// rbDrop removes v from the list at k, deleting the key when it empties.
func rbDrop[T comparable](m map[rbKey][]T, k rbKey, v T) {
	l := m[k]
	i := slices.Index(l, v)
	if i < 0 {
		return
	}
	l = slices.Delete(l, i, i+1)
	if len(l) == 0 {
		delete(m, k)
	} else {
		m[k] = l
	}
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

// rbInsertByID re-inserts r into an in-flight list kept in issue order;
// partial completions keep their place (the list is short: the I/O in flight).
func rbInsertByID(l []*rbReq, r *rbReq) []*rbReq {
	i := 0
	for i < len(l) && l[i].Issue <= r.Issue {
		i++
	}
	return slices.Insert(l, i, r)
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

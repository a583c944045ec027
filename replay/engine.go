package replay

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Mode says how bios arrive in a replay.
type Mode uint8

const (
	// Closed: a process that waited for its own completions in the capture
	// waits for the predicted ones, with the think time it showed (the
	// closed-loop rule on Workload). The default.
	Closed Mode = iota
	// Open: every bio arrives at its captured time.
	Open
)

func (m Mode) String() string {
	if m == Open {
		return "open"
	}
	return "closed"
}

// ParseMode maps "closed" or "open" to a Mode.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "closed", "":
		return Closed, nil
	case "open":
		return Open, nil
	}
	return Closed, fmt.Errorf("unknown mode %q (valid: closed, open)", s)
}

// Config configures a replay.
type Config struct {
	// NewScheduler builds the scheduler model on the engine's Host.
	NewScheduler func(h Host) (Scheduler, error)
	// Device is the timing model.
	Device Device
	// Queue describes the request queue. Zero fields are derived from the
	// workload: Depth from the capture's most requests in flight,
	// MaxSectors from Workload.MaxSectors (else 2560), NrRequests 256 (128 for none,
	// the kernel's defaults: nr_requests = 2 * BLKDEV_DEFAULT_RQ with an
	// elevator, the tag set depth without).
	Queue Queue
	// Mode: Closed (default) or Open.
	Mode Mode
	// Work: WorkFixed (default) or WorkTimed (closed loop only).
	Work Work
	// Stalls: StallsKeep (default: every gap as recorded) or StallsDrop
	// (the host stalls of the stall rule on Workload replaced by their
	// processes' typical reaping delays; closed loop only).
	Stalls Stalls
	// Submit, when set, is the host model (host.go): the CPU time each
	// closed-loop bio's submission holds the CPU it was recorded on,
	// under the recording scheduler (taken out of the captured gaps) and
	// under the replayed one (held in the replay). nil: submissions take
	// no time and the captured gaps are replayed as they are.
	Submit *SubmitCost
}

// Result summarises a replay.
type Result struct {
	Scheduler     string
	Mode          Mode
	Queue         Queue // the queue modelled, derived fields filled in
	Requests      int   // requests issued and completed
	Bios          int   // bios replayed
	BackMerges    int   // bios merged at the back of a request (M)
	FrontMerges   int   // bios merged at the front of a request (F)
	RequestMerges int   // requests merged into other requests
	Sleeps        int   // bios that waited for a free request (NrRequests)
	WBTSleeps     int   // bios that waited for the writeback throttle (wbt.go)
	Flushes       int   // flush requests the flush machinery issued (REQ_OP_FLUSH)
	MaxInDriver   int   // most requests on the device at once
	MaxWaiting    int   // most requests allocated and not on the device (plugged or in the scheduler)
	Events        int   // events emitted
	Start, End    trace.Time
	Processes     []ProcessStats // predicted, by PID
	Cgroups       []CgroupStats  // predicted, by id
	// Releases are the cross-process releases the replay followed with
	// their captured delays (step 6 of the rule on Workload), the most
	// bios first; nil when there were none.
	Releases []Release
}

// Span returns the simulated time from the first arrival to the last completion.
func (r Result) Span() time.Duration {
	if !r.Start.Valid() || !r.End.Valid() {
		return 0
	}
	return r.End.Sub(r.Start)
}

// Run replays w through a scheduler and device as cfg says, handing every
// predicted event to out (nil: none are built) in nondecreasing Time. The
// event passed to out is reused: out must copy what it keeps. Two runs with
// equal inputs emit identical events.
func Run(w *Workload, cfg Config, out func(*trace.Event) error) (Result, error) {
	e, err := NewEngine(w, cfg, out)
	if err != nil {
		return Result{}, err
	}
	return e.Run()
}

// defaultMaxSectors is max_sectors_kb 1280 in sectors (BLK_DEF_MAX_SECTORS_CAP).
const defaultMaxSectors = 2560

// Engine is a next-event simulation of a request queue: processes submit
// bios, the engine plugs, merges and allocates requests, a Scheduler orders
// them and a Device serves them. Simulated time is int64 ns; one event
// queue orders everything, ties broken by insertion order. Engine is the
// Host its scheduler sees.
//
// Memory grows with the requests in flight, the processes, and the bios
// read ahead of their arrival (records are read from the workload in
// captured time order; a process whose next bio is needed earlier than its
// captured time pulls the stream forward, buffering other processes' bios
// in between).
type Engine struct {
	w       *Workload
	cfg     Config
	q       Queue
	sched   Scheduler
	exit    ProcessExiter
	nb      Neighbours // nil: neighbours from the engine's hash
	rqOK    RequestMergeAllower
	limiter DepthLimiter
	// cgMerge: merges ask blk_cgroup_mergeable (Linux 5.18+; see
	// CgroupMergeRule).
	cgMerge bool
	wbt     *wbt // writeback throttling (wbt.go), nil when off
	dev     Device
	out     func(*trace.Event) error
	elev    bool // the scheduler is an elevator (not none): I events, request merges

	now    trace.Time
	events eventQueue
	seq    uint64

	src        recordSource
	peek       *Record
	srcEOF     bool
	srcPending bool

	procs map[uint32]*proc
	// lastProc is procs[lastProc.pid], the process looked up last (nil:
	// none yet): an event's process is most often the previous one's.
	lastProc *proc
	ready    []*proc         // processes to release after a pull
	timed    map[uint32]bool // WorkTimed: the processes that cycle
	// cyc: records of later cycles that a bio of another process waits
	// on (a cross-process edge) before their own process made that
	// cycle (timed.go); linked: the processes whose cycled bios others
	// wait on.
	cyc    map[cycKey]*Record
	linked map[uint32]bool

	inDriver  int
	allocated int
	tags      *tagMap   // the scheduler tags (NrRequests bits), where tagLimit binds: tags.go
	allocD    int       // the shallow depth of the request getRequest allocates (tagLimit)
	sleepers  []*Record // bios waiting for a free request, FIFO
	sleepD    []int     // each sleeper's shallow depth, fixed when it went to sleep (blk_mq_get_tag retries with data->shallow_depth)
	sleepHead int
	byEnd     map[uint64]*Request // held requests by end sector (the elevator hash)
	// byStart: held requests by start sector, for latter without
	// Neighbours, its only reader; nil (not kept) with Neighbours.
	byStart map[uint64]*Request
	toHash  []*Request     // requests to enter in the hashes before the next lookup
	held    int            // requests the scheduler holds
	fq      flushQueue     // the flush machinery (flush.go)
	bypass  []*Request     // hctx->dispatch: flush requests, served first
	atHead  []*Request     // data phases inserted at head, for a scheduler without AtHeadInserter
	timers  map[int]uint64 // each pending timer's generation: the seq of its evTimer
	kicked  bool

	pool   []*Request
	nextID uint64
	ev     trace.Event
	bio    Bio // the bio handed to merge hooks, reused: hooks must not keep it
	limBio Bio // the bio handed to LimitDepth
	// waiters: processes whose head bio waits for a record's predicted
	// completion (a cross-process edge), by that record.
	waiters map[*Record][]*proc
	// The lock of exclusive flush sections (step 7, lock.go): its holder
	// (nil when free), when it was last released, and the processes
	// whose next bio waits for it.
	lockHolder  *proc
	lockFree    trace.Time
	lockWaiters []*proc
	woken       []*proc
	err         error
	// cpuFree: under Config.Submit, when each CPU's latest submission
	// ends (Record.CPU); absent: free. cpuWait: the bios waiting for
	// each CPU, in arrival order; an evCPU is pending for each CPU with
	// bios waiting.
	cpuFree map[uint32]trace.Time
	cpuWait map[uint32][]*Record

	res      Result
	stats    *statsBuilder
	releases releaseTally // the captured releases delivered (Result.Releases)
}

// proc is the engine's state of one process.
type proc struct {
	pid        uint32
	comm       string
	total      int      // bios of the process in the workload
	queue      recQueue // read from the workload, not yet arrived
	scheduled  bool     // its head has an arrival pending
	blocked    bool     // a bio of it sleeps for a request
	lastSubmit trace.Time
	lastCapQ   trace.Time // captured Queue of its latest arrived bio (Config.Submit)
	plug       []*Request // plug list
	splitRest  []*Record  // parts of a split bio still to submit, in order
	completed  int
	// doneAt holds the times of the process's predicted completions from
	// the doneBase-th on (counted from 1): what releases its next bios.
	doneAt   []trace.Time
	doneBase int64
	lastDone trace.Time // its latest predicted completion
	exited   bool
	lockWait bool          // in Engine.lockWaiters
	stats    *ProcessStats // predicted
	cg       *CgroupStats  // predicted stats of the cgroup of its last completed bio
	timed    *timedState   // WorkTimed and the process cycles (timedProcess); nil otherwise
}

// NewEngine prepares a replay of w; see Run.
func NewEngine(w *Workload, cfg Config, out func(*trace.Event) error) (*Engine, error) {
	if cfg.NewScheduler == nil {
		return nil, errors.New("replay: config has no scheduler")
	}
	if cfg.Device == nil {
		return nil, errors.New("replay: config has no device")
	}
	e := &Engine{
		w: w, cfg: cfg, q: cfg.Queue, dev: cfg.Device, out: out,
		now:      trace.NoTime,
		lockFree: trace.NoTime,
		procs:    map[uint32]*proc{},
		byEnd:    map[uint64]*Request{},
		timers:   map[int]uint64{},
		stats:    newStatsBuilder(),
	}
	if e.q.Depth <= 0 {
		e.q.Depth = w.Depth
		if e.q.Depth <= 0 {
			e.q.Depth = 1
		}
	}
	if e.q.WriteCache == WriteCacheAuto {
		e.q.WriteCache, e.q.FUA = w.WriteCache, w.FUA
		if e.q.WriteCache == WriteCacheAuto {
			e.q.WriteCache = WriteBack
		}
	}
	if e.q.MaxSectors == 0 {
		e.q.MaxSectors = w.MaxSectors
		if e.q.MaxSectors == 0 {
			e.q.MaxSectors = defaultMaxSectors
		}
	}
	if e.q.MaxSegments <= 0 {
		e.q.MaxSegments = defaultMaxSegments
	}
	s, err := cfg.NewScheduler(e)
	if err != nil {
		return nil, err
	}
	e.sched = s
	e.elev = s.Name() != "none"
	if e.q.NrRequests <= 0 {
		if e.elev {
			e.q.NrRequests = 256
		} else {
			e.q.NrRequests = 128
		}
	}
	if cfg.Work == WorkTimed && cfg.Mode == Closed {
		e.timed, e.linked = map[uint32]bool{}, map[uint32]bool{}
		for _, ps := range w.Processes {
			if timedProcess(w, ps) {
				e.timed[ps.PID] = true
			}
		}
	}
	e.exit, _ = s.(ProcessExiter)
	e.nb, _ = s.(Neighbours)
	if e.nb == nil {
		e.byStart = map[uint64]*Request{}
	}
	e.rqOK, _ = s.(RequestMergeAllower)
	e.limiter, _ = s.(DepthLimiter)
	e.cgMerge = true
	if r, ok := s.(CgroupMergeRule); ok {
		e.cgMerge = r.CgroupMergeable()
	}
	if e.limiter != nil {
		e.tags = newTagMap(e.q.NrRequests)
	}
	if e.wbt = newWBT(e.q, s); e.wbt != nil {
		e.wbt.warm(w.WBTWarm)
		e.wbt.peak(w.WBTPeak)
	}
	return e, nil
}

// Run runs the replay to its end.
func (e *Engine) Run() (Result, error) {
	src, err := e.w.openRun(e.cfg.Stalls)
	if err != nil {
		return Result{}, err
	}
	e.src = src
	defer src.close()
	if err := e.advance(); err != nil {
		return Result{}, err
	}
	if e.peek != nil {
		e.now = e.peek.Queue
		e.scheduleSource()
	}
	for e.err == nil {
		if len(e.events) == 0 {
			if e.lockHolder == nil && len(e.lockWaiters) == 0 {
				break
			}
			// Nothing left but processes waiting for a lock whose
			// holder will not release it (its section's end never
			// comes in this replay): free it rather than stall.
			e.releaseLock()
			woken := e.woken
			e.woken = nil
			for _, q := range woken {
				e.tryRelease(q)
			}
			if len(e.events) == 0 {
				break
			}
			continue
		}
		ev := e.events.pop()
		if ev.at < e.now {
			panic(fmt.Sprintf("internal error: event at %v before now %v", ev.at, e.now))
		}
		e.now = ev.at
		switch ev.kind {
		case evSource:
			e.srcPending = false
			e.deliverDue()
		case evArrive:
			e.arrive(ev.rec)
		case evCPU:
			e.cpuTurn(uint32(ev.arg))
		case evComplete:
			e.complete(ev.rq)
		case evTimer:
			id := int(ev.arg)
			if g, ok := e.timers[id]; ok && g == ev.seq {
				delete(e.timers, id)
				e.sched.Timer(e.now, id)
			}
		case evWBT:
			e.wbtTimer(ev.arg)
		}
		e.dispatch()
	}
	if e.err != nil {
		return e.res, e.err
	}
	if held := e.allocated; held > 0 {
		return e.res, fmt.Errorf("replay stalled at %v: %d requests never completed (%d in the driver)", e.now, held, e.inDriver)
	}
	e.res.Scheduler = e.sched.Name()
	e.res.Mode = e.cfg.Mode
	e.res.Queue = e.q
	e.res.Processes, e.res.Cgroups = e.stats.lists()
	e.res.Start, e.res.End = e.stats.start, e.stats.end
	e.res.Releases = e.releases.list()
	return e.res, nil
}

// --- workload stream ---

// advance reads the next record into peek.
func (e *Engine) advance() error {
	if e.srcEOF {
		e.peek = nil
		return nil
	}
	r, err := e.src.next()
	if err == io.EOF {
		e.srcEOF, e.peek = true, nil
		return nil
	}
	if err != nil {
		e.fail(fmt.Errorf("reading workload: %w", err))
		e.srcEOF, e.peek = true, nil
		return err
	}
	e.peek = r
	return nil
}

func (e *Engine) scheduleSource() {
	if e.peek == nil || e.srcPending {
		return
	}
	at := e.peek.Queue
	if at < e.now {
		at = e.now
	}
	e.srcPending = true
	e.push(simEvent{at: at, kind: evSource})
}

// deliver moves peek into its process's queue and reads the next record.
// It returns the process, which is released by the caller.
func (e *Engine) deliver() *proc {
	r := e.peek
	p := e.procOf(r.PID)
	if p == nil {
		p = &proc{pid: r.PID, comm: r.Comm, total: e.w.perPID[r.PID], lastSubmit: trace.NoTime, lastCapQ: trace.NoTime}
		if e.timed[r.PID] {
			p.timed = &timedState{}
		}
		e.procs[r.PID] = p
	}
	if p.comm == "" {
		p.comm = r.Comm
	}
	r.proc = p
	r.predQueue, r.predDone = trace.NoTime, trace.NoTime
	if e.cfg.Mode != Open {
		e.releases.add(r)
	}
	if p.timed != nil {
		p.timed.keep(r, e.timed, e.linked)
	}
	p.queue.push(r)
	e.advance()
	return p
}

// deliverDue delivers every record whose captured time has come.
func (e *Engine) deliverDue() {
	for e.peek != nil && e.peek.Queue <= e.now && e.err == nil {
		p := e.deliver()
		e.tryRelease(p)
	}
	e.scheduleSource()
}

// pull reads the workload ahead until p has a queued record or the
// workload has no more for it.
func (e *Engine) pull(p *proc) {
	for p.queue.len() == 0 && e.peek != nil && e.err == nil {
		q := e.deliver()
		if q != p && !q.scheduled && !q.blocked && q.queue.len() == 1 {
			e.ready = append(e.ready, q)
		}
	}
}

// --- processes ---

func (p *proc) head() *Record { return p.queue.front() }

func (p *proc) popHead() { p.queue.pop() }

// maxDepthGrowth bounds how far back a later bio's DepCount may reach
// behind an earlier one's (when the process's depth grows): completion
// times further back are forgotten, and a bio that would need one waits for
// nothing more.
const maxDepthGrowth = 4096

// tryRelease schedules the arrival of p's next bio when what released it
// in the capture has happened in the replay (steps 2-4 of the closed-loop
// rule on Workload).
func (e *Engine) tryRelease(p *proc) {
	if p.scheduled || p.blocked || len(p.splitRest) > 0 {
		return
	}
	r := p.head()
	if r == nil {
		e.pull(p)
		r = p.head()
		if len(e.ready) > 0 {
			ready := e.ready
			e.ready = nil
			for _, q := range ready {
				e.tryRelease(q)
			}
		}
		if r == nil && e.nextCycle(p) {
			r = p.head()
		}
		if r == nil {
			if len(p.plug) > 0 {
				e.flushPlug(p, true)
			}
			return
		}
	}
	var at trace.Time
	closed := true // at is a release time plus Think (steps 2-4)
	switch {
	case e.cfg.Mode == Open || r.Open || !p.lastSubmit.Valid():
		at = r.Queue
		closed = false
	default:
		// Steps 2-4 of the closed-loop rule: wait for the completions the
		// bio needs, then its think time or its gap.
		dep := trace.NoTime // when the DepCount-th completion came
		if r.DepCount > 0 {
			if int64(p.completed) < r.DepCount {
				// Waiting for a completion: the process sleeps, which flushes its plug.
				if len(p.plug) > 0 {
					e.flushPlug(p, true)
				}
				return
			}
			if i := r.DepCount - p.doneBase; i >= 0 {
				dep = p.doneAt[i]
			}
			// Later bios need at least this many completions less the
			// depth's growth: forget the completions far behind.
			if drop := r.DepCount - p.doneBase - maxDepthGrowth; drop > 64 && drop*2 >= int64(len(p.doneAt)) {
				n := copy(p.doneAt, p.doneAt[drop:])
				p.doneAt, p.doneBase = p.doneAt[:n], p.doneBase+drop
			}
		}
		// ready: when the process is free to act on a completion; with
		// the host model, once its previous submission has ended, and
		// it thinks only the application's part of the gap.
		// woke: how long after its completion the process runs, the
		// completion's CPU under the host model.
		think, ready, woke := r.Think, trace.NoTime, trace.Time(0)
		if h := e.cfg.Submit; h != nil {
			think, ready, woke = h.appThink(r, p.lastCapQ), p.lastSubmit+h.Target, h.CompleteTarget
		}
		switch a := r.releaser(); {
		case a != nil:
			// Step 6: released by another process's completion.
			if !a.predDone.Valid() {
				if e.waiters == nil {
					e.waiters = map[*Record][]*proc{}
				}
				e.waiters[a] = append(e.waiters[a], p)
				if len(p.plug) > 0 {
					e.flushPlug(p, true)
				}
				return
			}
			at = a.predDone + r.releaseDelay()
		case r.Dep >= 0 && dep.Valid():
			at = max(dep+woke, ready) + think
		case r.Dep >= 0:
			at = max(p.lastDone+woke, ready) + think
		case ready.Valid():
			at = ready + think
			if wake := e.cfg.Submit.appWake(r.wake); dep.Valid() && dep+wake > at {
				at = dep + wake
			}
		default:
			at = p.lastSubmit + think
			// A process that waited at its full depth wakes up some time
			// after the completion that freed it (step 4).
			if dep.Valid() && dep+r.wake > at {
				at = dep + r.wake
			}
		}
		if e.cfg.Submit != nil {
			at = max(at, e.cpuFree[r.CPU])
		}
	}
	if r.lockOpen && e.cfg.Mode != Open {
		// Step 7: a section's first bio waits for the lock.
		if h := e.lockHolder; h != nil && h != p {
			e.waitLock(p)
			return
		}
		switch {
		case r.lockWaited && r.releaser() == nil && closed:
			// It waited for the lock in the capture: its think time
			// was that wait. It arrives its captured gap after the
			// release, or after it is ready when the lock is free.
			base := at - r.Think
			if e.lockFree.Valid() && e.lockFree > base {
				base = e.lockFree
			}
			at = base + r.lockGapOf()
		case e.lockFree.Valid() && e.lockFree+r.lockWakeOf() > at:
			at = e.lockFree + r.lockWakeOf()
		}
	}
	if at < p.lastSubmit {
		at = p.lastSubmit
	}
	if at < e.now {
		at = e.now
	}
	if e.stopTimed(p, r, at) {
		return
	}
	p.scheduled = true
	e.push(simEvent{at: at, kind: evArrive, rec: r})
}

// --- submission path ---

// waitLock makes p wait for the lock of step 7; it sleeps, which flushes
// its plug.
func (e *Engine) waitLock(p *proc) {
	if !p.lockWait {
		p.lockWait = true
		e.lockWaiters = append(e.lockWaiters, p)
	}
	if len(p.plug) > 0 {
		e.flushPlug(p, true)
	}
}

// releaseLock frees the lock of step 7 and wakes its waiters (the first
// to arrive takes it, the others wait again).
func (e *Engine) releaseLock() {
	e.lockHolder, e.lockFree = nil, e.now
	for _, q := range e.lockWaiters {
		q.lockWait = false
	}
	e.woken = append(e.woken, e.lockWaiters...)
	e.lockWaiters = e.lockWaiters[:0]
}

func (e *Engine) arrive(r *Record) {
	p := r.proc
	if h := e.cfg.Submit; h != nil && e.cfg.Mode == Closed && !r.Open && p.lastSubmit.Valid() {
		// The host model: a bio whose CPU is held by another
		// submission, or that others wait for, waits its turn (FIFO).
		c := r.CPU
		e.cpuMaps()
		if len(e.cpuWait[c]) > 0 || e.cpuFree[c] > e.now {
			if len(e.cpuWait[c]) == 0 {
				e.push(simEvent{at: e.cpuFree[c], kind: evCPU, arg: uint64(c)})
			}
			e.cpuWait[c] = append(e.cpuWait[c], r)
			return
		}
		e.cpuFree[c] = e.now + h.Target
	}
	e.arriveNow(r)
}

// cpuMaps makes the host model's maps on first use.
func (e *Engine) cpuMaps() {
	if e.cpuFree == nil {
		e.cpuFree, e.cpuWait = map[uint32]trace.Time{}, map[uint32][]*Record{}
	}
}

// completionCPU holds, under Config.Submit, the CPU that completed the
// first of recs that is not Open in the capture (Record.DoneCPU) for
// cost, after whatever it was doing: the completion interrupts it and
// the end of its work moves on.
func (e *Engine) completionCPU(recs []*Record, cost trace.Time) {
	for _, r := range recs {
		if par := r.parentBio(); r.Open || par != nil && par.Open {
			continue
		}
		e.cpuMaps()
		e.cpuFree[r.DoneCPU] = max(e.cpuFree[r.DoneCPU], e.now) + cost
		return
	}
}

// cpuTurn gives CPU c, just freed, to the first bio waiting for it
// (Config.Submit).
func (e *Engine) cpuTurn(c uint32) {
	q := e.cpuWait[c]
	if len(q) == 0 {
		return
	}
	if e.cpuFree[c] > e.now {
		// A completion took the CPU since this turn was set.
		e.push(simEvent{at: e.cpuFree[c], kind: evCPU, arg: uint64(c)})
		return
	}
	r := q[0]
	q[0] = nil
	if q = q[1:]; len(q) == 0 {
		q = nil
	}
	e.cpuWait[c] = q
	e.cpuFree[c] = e.now + e.cfg.Submit.Target
	if len(q) > 0 {
		e.push(simEvent{at: e.cpuFree[c], kind: evCPU, arg: uint64(c)})
	}
	e.arriveNow(r)
}

// arriveNow submits r: its Q, at the current time.
func (e *Engine) arriveNow(r *Record) {
	p := r.proc
	p.lastCapQ = r.Queue
	p.scheduled = false
	if r.lockOpen && e.cfg.Mode != Open {
		if h := e.lockHolder; h != nil && h != p {
			e.waitLock(p) // another member took the lock first
			return
		}
		e.lockHolder = p
	}
	p.popHead()
	r.predQueue = e.now
	e.res.Bios++
	e.emitBio(trace.ActionQueue, r)
	if lim := e.q.MaxSectors << 9; lim > 0 && r.Bytes > lim && r.Cat&trace.CatDiscard == 0 {
		e.split(p, r, lim)
		return
	}
	e.submitBio(p, r)
}

// split splits r at max_sectors (bio_split_to_limits -> bio_submit_split
// in block/blk-merge.c): each first part of lim bytes is its own bio,
// flagged REQ_NOMERGE (neither merged nor merged into), traced X, and
// submitted before the remainder is resubmitted; the last part is a plain
// bio. The parts are submitted in order, each through the whole path
// (merge, request, plug); r completes for its process when all have.
func (e *Engine) split(p *proc, r *Record, lim uint32) {
	var parts []*Record
	for off := uint32(0); off < r.Bytes; off += lim {
		part := &Record{PID: r.PID, CPU: r.CPU, DoneCPU: r.DoneCPU, Index: r.Index, Cgroup: r.Cgroup, Comm: r.Comm,
			Sector: r.Sector + uint64(off>>9), Bytes: min(lim, r.Bytes-off), Cat: r.Cat,
			Plugged: r.Plugged, Queue: r.Queue, Issue: r.Issue, Done: r.Done,
			predQueue: e.now, predDone: trace.NoTime, proc: p, ext: &recordExt{parent: r}, noMerge: true}
		parts = append(parts, part)
	}
	parts[0].flushBefore = r.flushBefore // the plug was flushed before the bio's first request
	if n := r.partsSeenOf(); n > 0 && n < len(parts) && p.timed == nil {
		// The capture ended with the rest of the bio unsubmitted (its next
		// part asleep for a tag): submit what it shows; the bio does not
		// complete (recordExt.partsSeen).
		parts = parts[:n]
		r.extOf().partsLeft = n + 1
		p.splitRest = append(p.splitRest[:0], parts[1:]...)
		e.emitSplit(parts[0])
		e.submitBio(p, parts[0])
		return
	}
	last := parts[len(parts)-1]
	last.noMerge, last.PlugEnd = false, r.PlugEnd
	r.extOf().partsLeft = len(parts)
	p.splitRest = append(p.splitRest[:0], parts[1:]...)
	e.emitSplit(parts[0])
	e.submitBio(p, parts[0])
}

// emitSplit emits the X of the first part of what remains of a bio.
func (e *Engine) emitSplit(part *Record) {
	if e.out == nil {
		e.res.Events++
		return
	}
	e.setEvent(e.now, trace.ActionSplit, part.Cat|trace.CatQueue, part.Sector, part.Bytes, part.PID, part.Cgroup, part.Comm)
	e.ev.SplitSector = part.End()
	e.emit()
}

// submitBio submits one bio (or part of one): merge, else a request.
func (e *Engine) submitBio(p *proc, r *Record) {
	if !r.noMerge && e.merge(p, r) {
		e.submitted(p, r)
		return
	}
	if e.wbt != nil && !r.Cat.IsWrite() && r.Cat&trace.CatFlush == 0 {
		e.wbt.lastRead = e.now // wbt_wait of a read: last_issue
	}
	if e.wbt != nil && e.wbt.tracks(r) && !e.wbtWait(r) {
		// Over the writeback throttle's limit (rq_qos_throttle): the
		// process sleeps, which flushes its plug.
		p.blocked = true
		e.res.WBTSleeps++
		if len(p.plug) > 0 {
			e.flushPlug(p, true)
		}
		return
	}
	e.allocBio(p, r)
}

// allocBio allocates r's request, or puts r to sleep for one.
func (e *Engine) allocBio(p *proc, r *Record) {
	if !e.tagFree(r) {
		// No free request (or none within the scheduler's depth limit for
		// it): the process sleeps, which flushes its plug.
		p.blocked = true
		e.res.Sleeps++
		e.sleepers = append(e.sleepers, r)
		e.sleepD = append(e.sleepD, e.allocD)
		if len(p.plug) > 0 {
			e.flushPlug(p, true)
		}
		return
	}
	e.getRequest(p, r)
}

func (e *Engine) getRequest(p *proc, r *Record) {
	rq := e.newRequest(r)
	e.emitRq(trace.ActionGetRQ, rq, r.PID, trace.CatQueue)
	if rq.Cat&(trace.CatFlush|trace.CatFUA) != 0 && e.insertFlush(rq) {
		e.submitted(p, r)
		return
	}
	if r.Plugged {
		// blk_add_rq_to_plug (block/blk-mq.c): a plug that holds
		// BLK_MAX_REQUEST_COUNT requests, or whose rq_list_peek request
		// has BLK_PLUG_FLUSH_SIZE bytes or more, is flushed (U) before
		// the new request starts the next one (P). rq_list_peek is the
		// list's head, its oldest request, since requests are added at
		// the tail (rq_list_add_tail, Linux 6.13 on; the head was the
		// newest before): sync in fs-bfq-untar keeps 32 requests of 512
		// KiB behind a first one of 4 KiB on its plug.
		if r.flushBefore && len(p.plug) > 0 {
			// The capture's process slept for a tag here, which flushed
			// its plug before this request (Record.flushBefore).
			e.flushPlug(p, true)
		}
		if n := len(p.plug); n == 0 {
			e.emitNote(trace.ActionPlug, p, 0)
		} else if n >= blkMaxRequestCount || p.plug[0].Bytes >= blkPlugFlushSize {
			e.flushPlug(p, false)
			e.emitNote(trace.ActionPlug, p, 0)
		}
		rq.eng.plugged = true
		p.plug = append(p.plug, rq)
	} else {
		e.insert(rq, p.pid)
	}
	e.submitted(p, r)
}

// blkMaxRequestCount is BLK_MAX_REQUEST_COUNT (32), the most requests a
// plug of one queue holds (blk_plug_max_rq_count); blkPlugFlushSize is
// BLK_PLUG_FLUSH_SIZE (128 KiB): a plug whose oldest request has that
// many bytes is flushed before it takes another request.
const (
	blkMaxRequestCount = 32
	blkPlugFlushSize   = 128 << 10
)

// submitted finishes a bio's submission: it merged or got a request.
func (e *Engine) submitted(p *proc, r *Record) {
	p.lastSubmit = e.now
	if (r.PlugEnd || !r.Plugged) && len(p.plug) > 0 && (r.parentBio() == nil || len(p.splitRest) == 0) {
		e.flushPlug(p, false)
	}
	if len(p.splitRest) > 0 {
		next := p.splitRest[0]
		p.splitRest = p.splitRest[1:]
		if len(p.splitRest) > 0 {
			e.emitSplit(next)
		}
		e.submitBio(p, next)
		return
	}
	e.tryRelease(p)
}

// flushPlug inserts p's plug list into the scheduler (blk_finish_plug; U,
// or UT when the process sleeps with a plug held).
func (e *Engine) flushPlug(p *proc, implicit bool) {
	a := trace.ActionUnplugIO
	if implicit {
		a = trace.ActionUnplugTimer
	}
	e.emitNote(a, p, uint64(len(p.plug)))
	// The list is detached first: inserting can free a request (an insert
	// merge) and so wake a sleeper, and when that is p itself (it flushes
	// because it goes to sleep for a request) its next request is plugged
	// during this loop. It must stay on p's plug for the next flush;
	// truncating p.plug after the loop lost it, and the replay stalled
	// with that request allocated forever (public/hadoop-node8 under cfq).
	list := p.plug
	p.plug = nil
	for i, rq := range list {
		list[i] = nil
		rq.eng.plugged = false
		e.insert(rq, p.pid)
	}
	if p.plug == nil {
		p.plug = list[:0] // reuse the array
	}
}

// insert hands rq to the scheduler, after an insert merge (elevator
// schedulers: elv_attempt_insert_merge in block/elevator.c, called by
// bfq_insert_request and dd_insert_request through
// blk_mq_sched_try_insert_merge). The kernel's insert merge asks no
// allow_merge: blk_attempt_req_merge -> attempt_merge (block/blk-merge.c)
// checks only rq_mergeable, the operation, the cgroup and the size, so a
// request may join a held request of another queue; then the grown
// request is merged again into one ending where it starts, while one is
// found ("The merged request could be merged with others, try again").
// The one-hit cache (q->last_merge) is not modelled: the hash finds the
// same request unless two held requests end at one sector.
func (e *Engine) insert(rq *Request, pid uint32) {
	if e.elev && e.held > 0 {
		e.syncHash()
		if prev := e.byEnd[rq.Sector]; prev != nil && e.rqMergeable(prev, rq) &&
			(e.rqOK == nil || e.rqOK.AllowRequestMerge(prev, rq)) {
			e.unhash(prev)
			e.absorb(prev, rq)
			e.hash(prev)
			e.sched.RequestMerged(e.now, prev, BackMerge)
			e.res.RequestMerges++
			e.emitRq(trace.ActionBackMerge, rq, pid, rqMergeCat)
			e.freeRequest(rq)
			for {
				e.syncHash()
				pp := e.byEnd[prev.Sector]
				if pp == nil || !e.rqMergeable(pp, prev) || (e.rqOK != nil && !e.rqOK.AllowRequestMerge(pp, prev)) {
					break
				}
				e.mergeRequests(pp, prev, pid)
				prev = pp
			}
			return
		}
	}
	rq.Inserted = e.now
	if e.elev {
		e.emitRq(trace.ActionInsert, rq, pid, trace.CatQueue)
	}
	rq.eng.held = true
	rq.eng.schedSaw = true
	e.held++
	if !rq.eng.noMerge {
		e.hash(rq)
	}
	e.sched.Insert(e.now, rq)
}

// latter returns the held request that rq may absorb after a back merge
// (attempt_back_merge: elv_latter_request, then attempt_merge's check that
// it starts where rq ends), or nil.
func (e *Engine) latter(rq *Request) *Request {
	var next *Request
	if e.nb != nil {
		next = e.nb.LatterRequest(rq)
	} else {
		next = e.byStart[rq.End()]
	}
	if next != nil && next.Sector == rq.End() && e.rqMergeable(rq, next) {
		return next
	}
	return nil
}

// former returns the held request that may absorb rq after a front merge
// (attempt_front_merge: elv_former_request), or nil.
func (e *Engine) former(rq *Request) *Request {
	var prev *Request
	if e.nb != nil {
		prev = e.nb.FormerRequest(rq)
	} else {
		prev = e.byEnd[rq.Sector]
	}
	if prev != nil && prev.End() == rq.Sector && e.rqMergeable(prev, rq) {
		return prev
	}
	return nil
}

// mergeOK reports whether a bio of cat and cgroup may join rq (blk_rq_merge_ok
// and rq_mergeable): same operation, no flush or FUA on either side, same
// cgroup and both REQ_META or neither (blk_cgroup_mergeable), rq not
// REQ_NOMERGE.
//
// blk_cgroup_mergeable (block/blk-cgroup.h) asks rq->bio->bi_blkg ==
// bio->bi_blkg && bio_issue_as_root_blkg(rq->bio) ==
// bio_issue_as_root_blkg(bio), and bio_issue_as_root_blkg is (bi_opf &
// (REQ_META | REQ_SWAP)) != 0: "we don't want to throttle e.g. a metadata
// update because it happens to be next to a regular IO". blk_rq_merge_ok
// (bio merges: plug, hash, front) and ll_merge_requests_fn (request
// merges, rqMergeable) both ask it. The trace shows REQ_META (the M of the
// RWBS), not REQ_SWAP. In fs-mqdl-pgbench a backend's ext4 metadata read
// (RM 4195064+8) ends where its plugged readahead request (RA 4195072+8)
// starts; the kernel kept them apart. Kernels before 5.18 lack the rule
// (CgroupMergeRule).
func (e *Engine) mergeOK(rq *Request, cat trace.Category, cg uint64) bool {
	const dir = trace.CatWrite | trace.CatDiscard
	const nomerge = trace.CatFlush | trace.CatFUA
	return rq.Cat&dir == cat&dir && rq.Cat&nomerge == 0 && cat&nomerge == 0 &&
		(!e.cgMerge || rq.Cgroup == cg && (rq.Cat^cat)&trace.CatMeta == 0) && !rq.eng.noMerge
}

// bioFits is ll_back_merge_fn and ll_front_merge_fn (block/blk-merge.c)
// for bio r and rq, once mergeOK holds: the request may grow to
// MaxSectors sectors (blk_rq_get_max_sectors) and MaxSegments physical
// segments (ll_new_hw_segment: req->nr_phys_segments + nr_phys_segs >
// blk_rq_get_max_segments(req) is no merge). A bio that does not fit
// marks rq REQ_NOMERGE (req_set_nomerge, on both failures), so that
// nothing merges into it afterwards. Discards count no segments.
func (e *Engine) bioFits(rq *Request, r *Record) bool {
	if uint64(rq.Bytes>>9)+uint64(r.Bytes>>9) > uint64(e.q.MaxSectors) ||
		(rq.Cat&trace.CatDiscard == 0 && rq.eng.segs+bioSegments(r) > e.q.MaxSegments) {
		rq.eng.noMerge = true
		return false
	}
	return true
}

// bioSegments returns the physical segments bio r adds to a request:
// Record.Segments, or when that is 0 the fewest r can have,
// minSegments(r.Bytes).
func bioSegments(r *Record) int {
	if r.Segments > 0 {
		return int(r.Segments)
	}
	return minSegments(r.Bytes)
}

// maxSegmentSize is BLK_MAX_SEGMENT_SIZE (65536 bytes), the largest
// physical segment of a queue that sets none (blk_validate_limits).
const maxSegmentSize = 64 << 10

// defaultMaxSegments is BLK_MAX_SEGMENTS (128), queue/max_segments of a
// driver that sets none (blk_validate_limits), as the loop driver.
const defaultMaxSegments = 128

// minSegments returns the fewest physical segments a bio of bytes can
// have: one per maxSegmentSize, at least one (all its pages physically
// contiguous).
func minSegments(bytes uint32) int {
	return max(1, int((uint64(bytes)+maxSegmentSize-1)/maxSegmentSize))
}

// rqMergeable reports whether next may be merged into rq, which it follows
// (attempt_merge: rq_mergeable, the operation and flags, the cgroup; then
// ll_merge_requests_fn: at most MaxSectors sectors and MaxSegments
// segments together, without marking either REQ_NOMERGE).
func (e *Engine) rqMergeable(rq, next *Request) bool {
	return rq != next && rq.eng.held && !rq.eng.noMerge && !next.eng.noMerge &&
		e.mergeOK(rq, next.Cat, next.Cgroup) &&
		uint64(rq.Bytes>>9)+uint64(next.Bytes>>9) <= uint64(e.q.MaxSectors) &&
		(rq.Cat&trace.CatDiscard != 0 || rq.eng.segs+next.eng.segs <= e.q.MaxSegments)
}

// merge tries to merge bio r into an existing request: the last request
// on p's plug list (blk_attempt_plug_merge), then the scheduler's requests
// (elv_merge: the back-merge hash, then the scheduler's front-merge
// candidate), then a request-request merge after it (attempt_back_merge,
// attempt_front_merge; elevator schedulers only).
func (e *Engine) merge(p *proc, r *Record) bool {
	if n := len(p.plug); n > 0 {
		rq := p.plug[n-1]
		if e.mergeOK(rq, r.Cat, r.Cgroup) {
			switch {
			case rq.End() == r.Sector && e.bioFits(rq, r):
				e.addBio(rq, r, false)
				e.res.BackMerges++
				e.emitBio(trace.ActionBackMerge, r)
				return true
			case r.End() == rq.Sector && e.bioFits(rq, r):
				e.addBio(rq, r, true)
				e.res.FrontMerges++
				e.emitBio(trace.ActionFrontMerge, r)
				return true
			}
		}
	}
	if e.held == 0 {
		return false
	}
	e.syncHash()
	e.bio = Bio{PID: r.PID, Index: r.Index, Cgroup: r.Cgroup, Sector: r.Sector, Bytes: r.Bytes, Cat: r.Cat}
	b := &e.bio
	if rq := e.byEnd[r.Sector]; rq != nil && rq.eng.held && e.mergeOK(rq, r.Cat, r.Cgroup) && e.sched.AllowMerge(rq, b) && e.bioFits(rq, r) {
		e.unhash(rq)
		e.addBio(rq, r, false)
		e.res.BackMerges++
		e.emitBio(trace.ActionBackMerge, r)
		e.syncHash()
		if next := e.latter(rq); e.elev && next != nil {
			e.mergeRequests(rq, next, r.PID)
		} else {
			e.hash(rq)
			e.sched.RequestMerged(e.now, rq, BackMerge)
		}
		return true
	}
	if rq := e.sched.RequestMerge(e.now, b); rq != nil && rq.eng.held && rq.Sector == r.End() &&
		e.mergeOK(rq, r.Cat, r.Cgroup) && e.sched.AllowMerge(rq, b) && e.bioFits(rq, r) {
		e.unhash(rq)
		e.addBio(rq, r, true)
		e.res.FrontMerges++
		e.emitBio(trace.ActionFrontMerge, r)
		e.syncHash()
		if prev := e.former(rq); e.elev && prev != nil {
			e.hash(rq)
			e.mergeRequests(prev, rq, r.PID)
		} else {
			e.hash(rq)
			e.sched.RequestMerged(e.now, rq, FrontMerge)
		}
		return true
	}
	return false
}

// addBio grows rq by r, at its front or back.
func (e *Engine) addBio(rq *Request, r *Record, front bool) {
	if front {
		rq.Sector = r.Sector
	}
	rq.Bytes += r.Bytes
	rq.Bios++
	rq.eng.segs += bioSegments(r)
	rq.eng.recs = append(rq.eng.recs, r)
}

// absorb moves next's bios into rq (next directly follows rq).
func (e *Engine) absorb(rq, next *Request) {
	rq.Bytes += next.Bytes
	rq.Bios += next.Bios
	rq.eng.segs += next.eng.segs
	rq.eng.recs = append(rq.eng.recs, next.eng.recs...)
	if next.Queued < rq.Queued {
		rq.Queued = next.Queued
	}
}

// mergeRequests merges next, a held request starting at rq.End(), into rq.
func (e *Engine) mergeRequests(rq, next *Request, pid uint32) {
	e.unhash(rq)
	e.unhash(next)
	e.sched.RequestsMerged(e.now, rq, next)
	next.eng.held = false
	e.held--
	e.absorb(rq, next)
	e.hash(rq)
	e.res.RequestMerges++
	e.emitRq(trace.ActionBackMerge, next, pid, rqMergeCat)
	e.freeRequest(next)
}

// rqMergeCat is the category of a request merge's M (block_rq_merge): the
// kernel traces it through blk_add_trace_rq (kernel/trace/blktrace.c),
// which adds BLK_TC_FS to BLK_TA_BACKMERGE's BLK_TC_QUEUE for a request
// that is not passthrough, where a bio's M (blk_add_trace_bio) carries no
// FS. trace.Rebuilder tells the two apart by it: without it the
// prediction's merged-away requests were read as bio merges that matched
// nothing, left queued with their bios and never completed (fs-bfq-untar:
// 142 merged-away requests in the capture, none in the prediction).
const rqMergeCat = trace.CatQueue | trace.CatFS

// hash enters rq in the merge hashes, lazily: most requests leave the
// scheduler before any merge lookup, so they are only listed, and entered
// by syncHash before a lookup. A request is listed once until the next
// syncHash, at the place of its first hash since then: syncHash enters
// the requests in that order, so a later hash of a listed request (even
// one reused from the pool since) adds nothing, and toHash holds at most
// one entry per Request struct however long no lookup comes (under none,
// whose requests rarely wait, it grew by one entry per request).
func (e *Engine) hash(rq *Request) {
	rq.eng.pendingHash = true
	if !rq.eng.listed {
		rq.eng.listed = true
		e.toHash = append(e.toHash, rq)
	}
}

// syncHash enters the listed requests that still want it.
func (e *Engine) syncHash() {
	for i, rq := range e.toHash {
		rq.eng.listed = false
		if rq.eng.pendingHash {
			rq.eng.pendingHash = false
			e.byEnd[rq.End()] = rq
			if e.byStart != nil {
				e.byStart[rq.Sector] = rq
			}
			rq.eng.hashed = true
		}
		e.toHash[i] = nil
	}
	e.toHash = e.toHash[:0]
}

func (e *Engine) unhash(rq *Request) {
	rq.eng.pendingHash = false
	if !rq.eng.hashed {
		return
	}
	if e.byEnd[rq.End()] == rq {
		delete(e.byEnd, rq.End())
	}
	if e.byStart != nil && e.byStart[rq.Sector] == rq {
		delete(e.byStart, rq.Sector)
	}
	rq.eng.hashed = false
}

// --- requests ---

func (e *Engine) newRequest(r *Record) *Request {
	var rq *Request
	if n := len(e.pool); n > 0 {
		rq = e.pool[n-1]
		e.pool = e.pool[:n-1]
		recs, listed := rq.eng.recs[:0], rq.eng.listed
		*rq = Request{}
		rq.eng.recs, rq.eng.listed = recs, listed
	} else {
		rq = &Request{}
	}
	e.nextID++
	e.allocated++
	if e.tags != nil {
		rq.eng.tag = e.tags.get(r.CPU, e.allocD)
		rq.eng.tagCPU = r.CPU
	}
	rq.ID = e.nextID
	rq.PID, rq.Cgroup, rq.Sector, rq.Bytes, rq.Cat = r.PID, r.Cgroup, r.Sector, r.Bytes, r.Cat
	rq.Comm = r.Comm
	rq.Bios = 1
	rq.eng.segs = bioSegments(r)
	rq.Queued = e.now
	rq.Inserted, rq.Issued = trace.NoTime, trace.NoTime
	rq.eng.recs = append(rq.eng.recs, r)
	rq.eng.noMerge = r.noMerge
	rq.eng.wbt, r.wbtTracked = r.wbtTracked, false
	if w := e.allocated - e.inDriver; w > e.res.MaxWaiting {
		e.res.MaxWaiting = w
	}
	return rq
}

// freeRequest returns rq's request to the pool and wakes a sleeper.
func (e *Engine) freeRequest(rq *Request) {
	e.allocated--
	if e.tags != nil {
		e.tags.put(rq.eng.tag, rq.eng.tagCPU)
	}
	for i := range rq.eng.recs {
		rq.eng.recs[i] = nil
	}
	rq.eng.recs = rq.eng.recs[:0]
	rq.eng.gone = true
	rq.Sched = nil
	e.pool = append(e.pool, rq)
	for e.allocated < e.q.NrRequests && e.sleepHead < len(e.sleepers) {
		// The first sleeper whose depth limit allows a request now (a
		// sleeper limited by LimitDepth lets later ones with a larger
		// limit, sync reads, go first, as the tag bitmap's shallow
		// allocation does).
		i := e.sleepHead
		for i < len(e.sleepers) && !e.depthFree(e.sleepD[i]) {
			i++
		}
		if i == len(e.sleepers) {
			break
		}
		r, d := e.sleepers[i], e.sleepD[i]
		h := e.sleepHead
		copy(e.sleepers[h+1:i+1], e.sleepers[h:i])
		copy(e.sleepD[h+1:i+1], e.sleepD[h:i])
		e.sleepers[h] = nil
		e.sleepHead++
		if e.sleepHead == len(e.sleepers) {
			e.sleepers, e.sleepD, e.sleepHead = e.sleepers[:0], e.sleepD[:0], 0
		}
		r.proc.blocked = false
		e.allocD = d
		e.getRequest(r.proc, r)
	}
	if rq.eng.wbt && e.wbt != nil {
		rq.eng.wbt = false
		e.wbtDone()
	}
}

// tagFree reports whether r's request can be allocated now, and sets
// allocD to the shallow depth to allocate it with. Without a DepthLimiter
// any of the NrRequests tags will do; with one, the scheduler tag bitmap
// decides which bits the depth leaves r (tagMap).
func (e *Engine) tagFree(r *Record) bool {
	e.allocD = e.tagLimit(r)
	return e.depthFree(e.allocD)
}

// depthFree reports whether a request of shallow depth d can be allocated
// now. A sleeper keeps the depth it slept with: bfq_limit_depth runs once
// an allocation, and blk_mq_get_tag retries after each wake-up with the
// same data->shallow_depth.
func (e *Engine) depthFree(d int) bool {
	if e.tags == nil {
		return e.allocated < d
	}
	return e.tags.free(d)
}

// tagLimit returns the most requests that may be allocated when r asks
// for one: NrRequests (the scheduler tags of the one hardware queue), or
// less as the scheduler's LimitDepth says.
func (e *Engine) tagLimit(r *Record) int {
	if e.limiter == nil {
		return e.q.NrRequests
	}
	e.limBio = Bio{PID: r.PID, Index: r.Index, Cgroup: r.Cgroup, Sector: r.Sector, Bytes: r.Bytes, Cat: r.Cat}
	if l := e.limiter.LimitDepth(e.now, &e.limBio); l > 0 && l < e.q.NrRequests {
		return l
	}
	return e.q.NrRequests
}

// Records returns the bios rq serves, its first bio first. The slice is
// valid until rq completes.
func (rq *Request) Records() []*Record { return rq.eng.recs }

// dispatch runs the hardware queue: while the device has room, it takes
// requests from the scheduler and issues them (blk_mq_run_hw_queue).
func (e *Engine) dispatch() {
	for round := 0; round < 2; round++ {
		e.kicked = false
		n := 0
		for e.inDriver < e.q.Depth && e.err == nil {
			var rq *Request
			switch {
			case len(e.bypass) > 0:
				// hctx->dispatch first (blk_mq_sched_dispatch_requests).
				rq = e.bypass[0]
				e.bypass = e.bypass[1:]
			case len(e.atHead) > 0:
				rq = e.atHead[0]
				e.atHead = e.atHead[1:]
			case e.sched.HasWork(e.now):
				rq = e.sched.Dispatch(e.now)
				if rq == nil {
					break
				}
				if !rq.eng.held {
					e.fail(fmt.Errorf("scheduler %s dispatched request %d it does not hold", e.sched.Name(), rq.ID))
					return
				}
				e.unhash(rq)
				rq.eng.held = false
				e.held--
			}
			if rq == nil {
				break
			}
			rq.Issued = e.now
			if e.wbt != nil {
				e.wbtIssue(rq)
			}
			e.inDriver++
			if e.inDriver > e.res.MaxInDriver {
				e.res.MaxInDriver = e.inDriver
			}
			e.emitRq(trace.ActionIssue, rq, rq.PID, trace.CatIssue)
			done := e.dev.Issue(e.now, rq)
			if done < e.now {
				done = e.now
			}
			e.push(simEvent{at: done, kind: evComplete, rq: rq})
			n++
		}
		if !e.kicked || n == 0 {
			return
		}
	}
}

func (e *Engine) complete(rq *Request) {
	if e.wbt != nil {
		e.wbtComplete(rq)
	}
	e.inDriver--
	e.res.Requests++
	e.dev.Done(e.now, rq)
	switch {
	case rq.eng.flushRq:
		e.emitRq(trace.ActionComplete, rq, 0, trace.CatComplete)
		e.flushEnd(rq)
		return
	case rq.eng.flushSeq && rq.eng.fseq&fseqData == 0:
		// mq_flush_data_end_io: the data phase is done; the request
		// completes when its sequence does. A blk-mq elevator (one that
		// takes at-head inserts) is told now: __blk_mq_end_request calls
		// blk_mq_finish_request, the elevator's finish_request, before
		// the end_io that moves the sequence on (6.x; BFQ logs its
		// put_queue at the data's C, fs-bfq-fsync-vs-seqread), and only
		// once (RQF_USE_SCHED is cleared).
		if _, mq := e.sched.(AtHeadInserter); mq && rq.eng.schedSaw {
			e.sched.Completed(e.now, rq)
			rq.eng.schedSaw = false
		}
		e.emitRq(trace.ActionComplete, rq, rq.PID, trace.CatComplete)
		e.fq.dataInFlight--
		e.flushSeq(rq, fseqData)
		return
	}
	e.sched.Completed(e.now, rq)
	e.emitRq(trace.ActionComplete, rq, rq.PID, trace.CatComplete)
	e.finishBios(rq)
}

// finishBios completes rq's bios, releases their processes and frees rq.
func (e *Engine) finishBios(rq *Request) {
	recs := rq.eng.recs
	if h := e.cfg.Submit; h != nil && h.CompleteTarget > 0 && e.cfg.Mode == Closed {
		e.completionCPU(recs, h.CompleteTarget)
	}
	for _, r := range recs {
		r.predDone = e.now
		if par := r.parentBio(); par != nil {
			// A part of a split bio: the bio completes with its last part.
			if par.ext.partsLeft--; par.ext.partsLeft > 0 {
				continue
			}
			r = par
			r.predDone = e.now
		}
		if ws, ok := e.waiters[r]; ok {
			delete(e.waiters, r)
			e.woken = append(e.woken, ws...)
		}
		if r.lockClose && e.lockHolder == r.proc {
			e.releaseLock()
		}
		p := r.proc
		p.completed++
		if p.doneBase == 0 {
			p.doneBase = 1
		}
		p.doneAt = append(p.doneAt, e.now)
		p.lastDone = e.now
		if p.stats == nil {
			p.stats = e.stats.proc(p.pid, p.comm, r.Cgroup)
		}
		if p.cg == nil || p.cg.ID != r.Cgroup {
			p.cg = e.stats.cgroup(r.Cgroup)
		}
		e.stats.addTo(p.stats, p.cg, r.Bytes, r.predQueue, e.now)
	}
	for _, r := range recs {
		p := r.proc
		e.tryRelease(p)
		if !p.exited && p.completed == p.total {
			p.exited = true
			if e.exit != nil {
				e.exit.ProcessExited(e.now, p.pid)
			}
		}
	}
	if len(e.woken) > 0 {
		woken := e.woken
		e.woken = nil
		for _, q := range woken {
			e.tryRelease(q)
		}
	}
	e.freeRequest(rq)
}

// --- Host ---

// LogEnabled reports whether Log records anything: false when the replay
// builds no events (Run with a nil out). Schedulers that check it (an
// optional method of the Host) skip formatting their decision messages.
func (e *Engine) LogEnabled() bool { return e.out != nil }

// ArmTimer schedules Scheduler.Timer(at, id), replacing a pending id.
// Panics if at is before the current time.
func (e *Engine) ArmTimer(id int, at trace.Time) {
	if at < e.now {
		panic(fmt.Sprintf("replay: (*Engine).ArmTimer: time %v before now %v", at, e.now))
	}
	e.push(simEvent{at: at, kind: evTimer, arg: uint64(id)})
	e.timers[id] = e.seq // the event's seq, which push just gave it
}

// CancelTimer cancels the pending timer id, if any.
func (e *Engine) CancelTimer(id int) { delete(e.timers, id) }

// Kick asks for a dispatch round once the current hook returns.
func (e *Engine) Kick() { e.kicked = true }

// InDriver returns the requests issued and not yet completed.
func (e *Engine) InDriver() int { return e.inDriver }

// Queue returns the queue modelled.
func (e *Engine) Queue() Queue { return e.q }

// Log records a scheduler message as an ActionMessage event.
func (e *Engine) Log(now trace.Time, pid uint32, cgroup uint64, text string) {
	if e.out == nil {
		return
	}
	var comm string
	if p := e.procOf(pid); p != nil {
		comm = p.comm
	}
	e.setEvent(now, trace.ActionMessage, trace.CatNotify, 0, 0, pid, cgroup, comm)
	e.ev.Text = text
	e.emit()
}

// procOf returns the process pid, nil when none has arrived yet.
func (e *Engine) procOf(pid uint32) *proc {
	if p := e.lastProc; p != nil && p.pid == pid {
		return p
	}
	p := e.procs[pid]
	if p != nil {
		e.lastProc = p
	}
	return p
}

// --- output ---

func (e *Engine) push(ev simEvent) {
	e.seq++
	ev.seq = e.seq
	e.events.push(ev)
}

func (e *Engine) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// setEvent makes e.ev the event given, every other field zero. It sets
// the fields one by one: assigning a composite literal builds the event
// (160 bytes, three strings) aside and copies it in with the garbage
// collector's write barriers, for each of the several events a request
// makes; here only the strings that change are written. Every field of
// trace.Event is set (TestSetEventSetsEveryField).
func (e *Engine) setEvent(t trace.Time, a trace.Action, cat trace.Category, sector uint64, bytes, pid uint32, cgroup uint64, comm string) {
	ev := &e.ev
	ev.Time, ev.Seq, ev.CPU, ev.Dev, ev.Action, ev.Cat = t, 0, 0, e.w.Dev, a, cat
	ev.Sector, ev.Bytes, ev.PID, ev.Error, ev.Cgroup = sector, bytes, pid, 0, cgroup
	if ev.CgroupPath != "" {
		ev.CgroupPath = ""
	}
	if ev.Comm != comm {
		ev.Comm = comm
	}
	if ev.Text != "" {
		ev.Text = ""
	}
	ev.FromDev, ev.FromSector, ev.Depth, ev.SplitSector, ev.WallSec, ev.WallNsec = 0, 0, 0, 0, 0, 0
}

func (e *Engine) emit() {
	e.res.Events++
	e.ev.Seq = uint32(e.res.Events)
	if err := e.out(&e.ev); err != nil {
		e.fail(err)
	}
}

func (e *Engine) emitBio(a trace.Action, r *Record) {
	if e.out == nil {
		e.res.Events++
		return
	}
	e.setEvent(e.now, a, r.Cat|trace.CatQueue, r.Sector, r.Bytes, r.PID, r.Cgroup, r.Comm)
	e.emit()
}

func (e *Engine) emitRq(a trace.Action, rq *Request, pid uint32, cat trace.Category) {
	if e.out == nil {
		e.res.Events++
		return
	}
	var comm string
	if p := e.procOf(pid); p != nil {
		comm = p.comm
	}
	e.setEvent(e.now, a, rq.Cat|cat, rq.Sector, rq.Bytes, pid, rq.Cgroup, comm)
	e.emit()
}

func (e *Engine) emitNote(a trace.Action, p *proc, depth uint64) {
	if e.out == nil {
		e.res.Events++
		return
	}
	var cg uint64
	if len(p.plug) > 0 {
		cg = p.plug[0].Cgroup
	}
	e.setEvent(e.now, a, trace.CatQueue, 0, 0, p.pid, cg, p.comm)
	e.ev.Depth = depth
	e.emit()
}

package bfq

import (
	"math/bits"
	"path"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// ttime is a struct bfq_ttime, fixed point as the kernel keeps it.
type ttime struct {
	lastEndRequest int64  // ns
	samples        uint64 // ttime_samples, one sample = 256
	total          uint64 // ttime_total, ns·256
	mean           uint64 // ttime_mean, ns
}

// queue is a struct bfq_queue.
type queue struct {
	entity entity
	id     int
	pid    int32 // -1 once shared (bfqSHARED-)
	sync   bool
	ioprio int
	g      *group

	sort       []*rqState // sort_list, by (sector, seq)
	fifoHead   *rqState
	fifoTail   *rqState
	nextRq     *rqState
	queuedN    [2]int
	dispatched int

	maxBudget      int
	budgetTimeoutJ int64

	busy, waitRequest, nonBlockingWaitRq, fifoExpire bool
	shortTtime, ioBound, inLargeBurst, softrtUpdate  bool
	coop, splitCoop, justCreated                     bool
	inBurstList                                      bool
	// warmTtime: shortTtime is the capture's (a queue that existed before
	// the trace began, Options.Warm), held until the queue has the think
	// time samples the kernel decides on (ttime_samples > 80).
	warmTtime bool

	tt                    ttime
	seekHistory           uint32
	lastRequestPos        uint64
	ioStartTime           int64
	totIdleTime           int64
	reqWithinTimer        int
	wrCoeff               int
	wrCurMaxTime          int64 // jiffies
	lastWrStartFin        int64 // jiffies
	wrStartAtSrt          int64 // jiffies
	softRtNextStart       int64 // jiffies
	lastIdleBklog         int64 // jiffies
	serviceFromBacklogged int
	serviceFromWr         int

	creationJ, splitTimeJ, firstIOTimeJ int64

	newBfqq   *queue
	procRefs  int  // process references (bfqq_process_refs)
	bic       *bic // owning bic when not shared
	lastPID   uint32
	inPosTree bool

	weightCounter bool // in queue_weights_tree

	injectLimit    int
	decreaseTimeJ  int64
	lastServTimeNs int64 // baseline total service time, ns (0: not sampled)

	// waker detection (bfq_check_waker): waker is waker_bfqq,
	// tentativeWaker tentative_waker_bfqq; woken is woken_list (most
	// recently added first), wokenOf the queue whose list holds q.
	waker, tentativeWaker *queue
	wakerDetections       int
	wakerDetectionStart   int64 // ns
	woken                 []*queue
	wokenOf               *queue

	nameStr string // name() cached for namePid
	namePid int32
	// lastLog is the message logEmit sent for the queue last: a message
	// equal to it is sent as that string, not a new one (most messages
	// repeat their queue's previous one: "may_budget_timeout" per request).
	lastLog string
}

// rqState is BFQ's per-request state (rq->elv.priv), kept in Request.Sched.
type rqState struct {
	rq       *replay.Request
	q        *queue
	allocQ   *queue // the queue whose entities count it allocated (RQ_BFQQ at bfqq_request_allocated), or nil
	seq      uint64
	fifoTime int64
	fifoPrev *rqState
	fifoNext *rqState
	inFifo   bool
	inSched  bool // in the sort list (not yet dispatched)
	bic      *bic // RQ_BIC: the bic that allocated it (bic->requests)
}

func (r *rqState) pos() uint64  { return r.rq.Sector }
func (r *rqState) sectors() int { return int(r.rq.Bytes >> 9) }
func (r *rqState) sync() bool   { return r.rq.IsSync() }
func (r *rqState) meta() bool   { return r.rq.Cat&trace.CatMeta != 0 }
func rqOf(rq *replay.Request) *rqState {
	if st, ok := rq.Sched.(*rqState); ok {
		return st
	}
	return nil
}

func (q *queue) name() string {
	if q.nameStr == "" || q.namePid != q.pid {
		q.nameStr, q.namePid = trace.QueueName("bfq", q.pid, q.sync), q.pid
	}
	return q.nameStr
}

func (q *queue) empty() bool { return len(q.sort) == 0 }

// seeky is BFQQ_SEEKY: more than 19 of the last 32 requests seeky.
func (q *queue) seeky() bool { return bits.OnesCount32(q.seekHistory) > 32/2+3 }

// totallySeeky is BFQQ_TOTALLY_SEEKY.
func (q *queue) totallySeeky() bool { return q.seekHistory == ^uint32(0) }

func (q *queue) budgetLeft() int { return q.entity.budget - q.entity.service }

// sortInsert is elv_rb_add: equal sectors go after existing ones.
func (q *queue) sortInsert(r *rqState) {
	i := len(q.sort)
	for i > 0 && q.sort[i-1].pos() > r.pos() {
		i--
	}
	q.sort = append(q.sort, nil)
	copy(q.sort[i+1:], q.sort[i:])
	q.sort[i] = r
}

func (q *queue) sortIndex(r *rqState) int {
	for i, x := range q.sort {
		if x == r {
			return i
		}
	}
	return -1
}

func (q *queue) sortDelete(r *rqState) {
	if i := q.sortIndex(r); i >= 0 {
		copy(q.sort[i:], q.sort[i+1:])
		q.sort[len(q.sort)-1] = nil
		q.sort = q.sort[:len(q.sort)-1]
	}
}

func (q *queue) fifoAppend(r *rqState) {
	r.fifoPrev, r.fifoNext = q.fifoTail, nil
	if q.fifoTail != nil {
		q.fifoTail.fifoNext = r
	} else {
		q.fifoHead = r
	}
	q.fifoTail = r
	r.inFifo = true
}

func (q *queue) fifoDelete(r *rqState) {
	if !r.inFifo {
		return
	}
	if r.fifoPrev != nil {
		r.fifoPrev.fifoNext = r.fifoNext
	} else {
		q.fifoHead = r.fifoNext
	}
	if r.fifoNext != nil {
		r.fifoNext.fifoPrev = r.fifoPrev
	} else {
		q.fifoTail = r.fifoPrev
	}
	r.fifoPrev, r.fifoNext, r.inFifo = nil, nil, false
}

// fifoReplace puts r in next's place in the fifo (list_replace_init).
func (q *queue) fifoReplace(next, r *rqState) {
	q.fifoDelete(r)
	r.fifoPrev, r.fifoNext = next.fifoPrev, next.fifoNext
	if r.fifoPrev != nil {
		r.fifoPrev.fifoNext = r
	} else {
		q.fifoHead = r
	}
	if r.fifoNext != nil {
		r.fifoNext.fifoPrev = r
	} else {
		q.fifoTail = r
	}
	r.inFifo = true
	next.fifoPrev, next.fifoNext, next.inFifo = nil, nil, false
}

// chooseReq is bfq_choose_req: which of r1, r2 to serve first from last.
func (s *Scheduler) chooseReq(r1, r2 *rqState, last uint64) *rqState {
	if r1 == nil || r1 == r2 {
		return r2
	}
	if r2 == nil {
		return r1
	}
	if r1.sync() && !r2.sync() {
		return r1
	} else if r2.sync() && !r1.sync() {
		return r2
	}
	if r1.meta() && !r2.meta() {
		return r1
	} else if r2.meta() && !r1.meta() {
		return r2
	}
	s1, s2 := r1.pos(), r2.pos()
	backMax := uint64(s.backMax) * 2
	var d1, d2 uint64
	wrap1, wrap2 := false, false
	if s1 >= last {
		d1 = s1 - last
	} else if s1+backMax >= last {
		d1 = (last - s1) * uint64(s.backPenalty)
	} else {
		wrap1 = true
	}
	if s2 >= last {
		d2 = s2 - last
	} else if s2+backMax >= last {
		d2 = (last - s2) * uint64(s.backPenalty)
	} else {
		wrap2 = true
	}
	switch {
	case !wrap1 && !wrap2:
		if d1 < d2 {
			return r1
		} else if d2 < d1 {
			return r2
		}
		if s1 >= s2 {
			return r1
		}
		return r2
	case wrap2 && !wrap1:
		return r1
	case wrap1 && !wrap2:
		return r2
	default:
		if s1 <= s2 {
			return r1
		}
		return r2
	}
}

// checkFifo is bfq_check_fifo: once per service slot.
func (s *Scheduler) checkFifo(q *queue, last *rqState) *rqState {
	if q.fifoExpire {
		return nil
	}
	q.fifoExpire = true
	r := q.fifoHead
	if r == nil || r == last || int64(s.now) < r.fifoTime {
		return nil
	}
	return r
}

// findNextRq is bfq_find_next_rq, called before last leaves the lists.
func (s *Scheduler) findNextRq(q *queue, last *rqState) *rqState {
	if n := s.checkFifo(q, last); n != nil {
		return n
	}
	i := q.sortIndex(last)
	var next, prev *rqState
	if i > 0 {
		prev = q.sort[i-1]
	}
	if i+1 < len(q.sort) {
		next = q.sort[i+1]
	} else if len(q.sort) > 0 && q.sort[0] != last {
		next = q.sort[0]
	}
	return s.chooseReq(next, prev, last.pos())
}

// groupFor returns the group of a cgroup id, creating it (and its
// ancestors, from Options.CgroupPaths) lazily (bfq_bio_bfqg, bfq_pd_init).
func (s *Scheduler) groupFor(id uint64) *group {
	p, hasPath := s.paths[id]
	if id == 0 || (hasPath && (p == "/" || p == "")) || (!hasPath && id == 1) {
		return s.root
	}
	if g, ok := s.groups[id]; ok {
		return g
	}
	parent := s.root
	if hasPath {
		pp := path.Dir(path.Clean(p))
		if pp != "/" && pp != "." {
			if pid, ok := s.idForPath(pp); ok {
				parent = s.groupFor(pid)
			}
		}
	}
	w := defaultGroupWeight
	if ww, ok := s.wts[id]; ok {
		w = ww
	}
	g := &group{id: id, path: p, parent: parent}
	g.sd.owner = g
	g.sd.classIdleLastService = s.nowJ - (1 << 40)
	g.entity = &entity{weight: w, origWeight: w, newWeight: w, class: classBE, sd: &parent.sd, mySd: &g.sd, g: g}
	if parent.entity != nil {
		g.entity.parent = parent.entity
	}
	s.groups[id] = g
	return g
}

// idForPath finds the cgroup id with path p; with several, the smallest id.
func (s *Scheduler) idForPath(p string) (uint64, bool) {
	var best uint64
	found := false
	for id, pp := range s.paths {
		if path.Clean(pp) == p && (!found || id < best) {
			best, found = id, true
		}
	}
	return best, found
}

// newQueue is bfq_get_queue + bfq_init_bfqq for a new queue.
func (s *Scheduler) newQueue(g *group, pid uint32, sync bool) *queue {
	s.nextQueueID++
	class, level := s.prioOf(pid)
	q := &queue{id: s.nextQueueID, sync: sync, ioprio: level, g: g}
	if sync {
		q.pid = int32(pid)
	} else {
		q.pid = int32(pid) // bfq_init_bfqq uses current's pid for async queues too
	}
	w := (ioprioNrLevels - level) * weightConvCoeff // bfq_ioprio_to_weight: 40 at level 4
	q.entity = entity{weight: w, origWeight: w, newWeight: w, class: class, sd: &g.sd, q: q}
	if g.entity != nil {
		q.entity.parent = g.entity
	}
	q.maxBudget = 2 * s.bfqMaxBudget() / 3
	q.budgetTimeoutJ = s.smallestFromNow()
	q.seekHistory = 1
	q.ioBound = true
	q.shortTtime = sync
	q.tt.lastEndRequest = int64(s.now) + 1
	q.ioStartTime = int64(s.now)
	q.wrCoeff = 1
	q.softRtNextStart = s.nowJ
	q.lastWrStartFin = s.smallestFromNow()
	q.wrStartAtSrt = s.smallestFromNow()
	q.creationJ = s.nowJ
	q.splitTimeJ = s.smallestFromNow()
	q.justCreated = true
	q.lastPID = pid
	q.decreaseTimeJ = s.nowJ
	if !q.shortTtime {
		q.injectLimit = 1
	}
	return q
}

// asyncKey names an async queue of a group: class and level.
type asyncKey struct{ class, level int }

// prioOf returns the class index and level of pid's I/O priority
// (bfq_set_next_ioprio_data: RT and BE keep their level, IDLE gets
// IOPRIO_NR_LEVELS - 1).
func (s *Scheduler) prioOf(pid uint32) (class, level int) {
	p := s.opts.IOPrioFor(pid, s.comms[pid])
	switch p.Class {
	case replay.IOPrioRT:
		return classRT, int(p.Level)
	case replay.IOPrioIdle:
		return classIdle, ioprioNrLevels - 1
	}
	return classBE, int(p.Level)
}

// asyncKeyOf is the async queue pid's bios go to (bfq_async_queue_prio).
func (s *Scheduler) asyncKeyOf(pid uint32) asyncKey {
	c, l := s.prioOf(pid)
	if c == classIdle {
		return asyncKey{classIdle, 0}
	}
	return asyncKey{c, l}
}

// noteComm remembers the name of rq's process (for its I/O priority).
func (s *Scheduler) noteComm(rq *replay.Request) {
	if _, ok := s.comms[rq.PID]; !ok {
		s.comms[rq.PID] = rq.Comm
	}
}

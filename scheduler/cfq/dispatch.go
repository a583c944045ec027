package cfq

import (
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }

// shouldIdle is cfq_should_idle.
func (s *Scheduler) shouldIdle(now int64, q *queue) bool {
	if s.t.sliceIdle == 0 || q.class == classIdle {
		return false
	}
	if q.idleWindow && !(s.nonrot && s.hwTag != 0) {
		return true
	}
	st := q.st
	if st == nil {
		st = q.g.stFor(q.class, q.typ())
	}
	if st.count() == 1 && q.sync && !s.thinktimeBig(&st.tt, false) {
		return true
	}
	if s.logRequests {
		s.logv(now, q, kv{"Not idling. st->count:", int64(st.count())})
	}
	return false
}

// setActiveQueue is __cfq_set_active_queue.
func (s *Scheduler) setActiveQueue(now int64, q *queue) {
	if q != nil {
		s.logv(now, q, kv{"set_active wl_class:", int64(s.servingClass)}, kv{" wl_type:", int64(s.servingType)})
		q.sliceStart = 0
		q.dispatchStart = now
		q.allocatedSlice = 0
		q.sliceEnd = 0
		q.sliceDispatch = 0
		q.nrSectors = 0
		q.waitRequest = false
		q.mustDispatch = false
		q.fifoExpire = false
		q.sliceNew = true
		s.delTimer(q)
	}
	s.active = q
}

// getNextQueue is cfq_get_next_queue.
func (s *Scheduler) getNextQueue() *queue {
	if s.rqQueued == 0 || s.servingGroup == nil {
		return nil
	}
	return s.servingGroup.stFor(s.servingClass, s.servingType).first()
}

func (s *Scheduler) delTimer(q *queue) {
	if s.timerPending {
		s.h.CancelTimer(idleTimer)
		s.timerPending = false
	}
}

// sliceExpired is __cfq_slice_expired for the active queue.
func (s *Scheduler) sliceExpired(now int64, timedOut bool) {
	q := s.active
	if q == nil {
		return
	}
	s.logv(now, q, kv{"slice expired t=", int64(b2i(timedOut))})
	if q.waitRequest {
		s.delTimer(q)
	}
	q.waitRequest = false
	q.waitBusy = false
	if q.coop && q.seeky() {
		q.splitCoop = true
	}
	if timedOut {
		if q.sliceNew {
			q.sliceResid = s.scaledSlice(q)
		} else {
			q.sliceResid = q.sliceEnd - now
		}
		s.logv(now, q, kv{"resid=", q.sliceResid})
	}
	s.groupServed(now, q.g, q)
	if q.onRR && q.empty() {
		s.delCfqqRR(now, q)
	}
	s.resortRRList(now, q)
	s.active = nil
	s.activeCIC = nil
}

// closeCooperator is cfq_close_cooperator with cfqq_close: a busy sync
// queue of the same group whose next request is near the last position.
func (s *Scheduler) closeCooperator(cur *queue) *queue {
	if cur.class == classIdle || !cur.sync || cur.seeky() || cur.g.nrCfqq == 1 {
		return nil
	}
	pt := &s.prioTrees[cur.org]
	if len(pt.qs) == 0 {
		return nil
	}
	sec := s.lastPosition
	var cand *queue
	i := pt.search(sec)
	if i < len(pt.qs) && pt.qs[i].nextRQ.Sector == sec {
		cand = pt.qs[i]
	} else {
		// The rb parent of the missing leaf is the predecessor or the
		// successor; try the nearer first, then the other.
		var a, b *queue
		if i < len(pt.qs) {
			a = pt.qs[i]
		}
		if i > 0 {
			b = pt.qs[i-1]
		}
		if a != nil && b != nil && dist(b.nextRQ.Sector, sec) < dist(a.nextRQ.Sector, sec) {
			a, b = b, a
		}
		for _, x := range []*queue{a, b} {
			if x != nil && dist(x.nextRQ.Sector, sec) <= cfqqCloseThr {
				cand = x
				break
			}
		}
	}
	if cand == nil || cand == cur || cand.g != cur.g || !cand.sync || cand.seeky() ||
		(cand.class == classRT) != (cur.class == classRT) {
		return nil
	}
	return cand
}

func dist(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// setupMerge is cfq_setup_merge: schedule merging toward the queue with
// more process references.
func (s *Scheduler) setupMerge(q, nq *queue) {
	if nq.procs == 0 {
		return
	}
	for nq.newQ != nil {
		if nq.newQ == q {
			return
		}
		nq = nq.newQ
	}
	if q.procs == 0 || nq.procs == 0 {
		return
	}
	if nq.procs >= q.procs {
		q.newQ = nq
	} else {
		nq.newQ = q
	}
}

// selectQueue is cfq_select_queue.
func (s *Scheduler) selectQueue(now int64) *queue {
	q := s.active
	var newQ *queue
	if q == nil {
		goto newQueue
	}
	if s.rqQueued == 0 {
		return nil
	}
	if q.waitBusy && !q.empty() {
		goto expire
	}
	if q.sliceUsed(now) && !q.mustDispatch {
		if q.g.nrCfqq == 1 && q.empty() && q.dispatched > 0 && s.shouldIdle(now, q) {
			return nil
		}
		goto checkGroupIdle
	}
	if !q.empty() {
		return q
	}
	newQ = s.closeCooperator(q)
	if newQ != nil {
		if q.newQ == nil {
			s.setupMerge(q, newQ)
		}
		goto expire
	}
	if s.timerPending {
		return nil
	}
	if q.seeky() && q.idleWindow && (q.sliceNew || q.sliceEnd-now > now-q.sliceStart) {
		q.deep = false
		q.idleWindow = false
	}
	if q.dispatched > 0 && s.shouldIdle(now, q) {
		return nil
	}
checkGroupIdle:
	if s.t.groupIdle != 0 && q.g.nrCfqq == 1 && q.g.dispatched > 0 && !s.thinktimeBig(&q.g.tt, true) {
		return nil
	}
expire:
	s.sliceExpired(now, false)
newQueue:
	if newQ == nil {
		s.chooseCfqg(now)
		newQ = s.getNextQueue()
	}
	s.setActiveQueue(now, newQ)
	return newQ
}

// checkFifo is cfq_check_fifo: once per slice, an expired head of fifo.
func (s *Scheduler) checkFifo(now int64, q *queue) *replay.Request {
	if q.fifoExpire {
		return nil
	}
	q.fifoExpire = true
	if len(q.fifo) == 0 {
		return nil
	}
	rq := q.fifo[0]
	if now < rqd(rq).fifoTime {
		return nil
	}
	return rq
}

// sliceUsedSoon is cfq_slice_used_soon.
func (s *Scheduler) sliceUsedSoon(now int64, q *queue) bool {
	return q.sliceNew || now+s.t.sliceIdle*int64(q.dispatched) > q.sliceEnd
}

// mayDispatch is cfq_may_dispatch: per-queue depth limits.
func (s *Scheduler) mayDispatch(now int64, q *queue) bool {
	if q.mustDispatch {
		return true
	}
	if s.shouldIdle(now, q) && s.rqInFlight[0] > 0 {
		return false
	}
	if s.rqInFlight[1] > 0 && !q.sync {
		return false
	}
	maxDisp := max(s.t.quantum/2, 1)
	if q.class == classIdle {
		maxDisp = 1
	}
	if q.dispatched >= maxDisp {
		if q.class == classIdle {
			return false
		}
		promote := q.sync && s.busySyncQueues == 1
		if s.busyQueues > 1 && s.sliceUsedSoon(now, q) && !promote {
			return false
		}
		if s.busyQueues == 1 || promote {
			maxDisp = int(^uint(0) >> 1)
		} else {
			maxDisp = s.t.quantum
		}
	}
	if !q.sync && s.t.latency {
		depth := int((now - s.lastDelayedSync) / s.t.slice[1])
		if depth == 0 && q.dispatched == 0 {
			depth = 1
		}
		maxDisp = min(maxDisp, depth)
	}
	return q.dispatched < maxDisp
}

// dispatchRequest is cfq_dispatch_request (with cfq_dispatch_insert and
// cfq_activate_request: the request goes straight to the device).
func (s *Scheduler) dispatchRequest(now int64, q *queue) *replay.Request {
	rq := s.checkFifo(now, q)
	if rq != nil {
		q.mustDispatch = true
	}
	if !s.mayDispatch(now, q) {
		return nil
	}
	if rq == nil {
		rq = q.nextRQ
	} else {
		s.logv(now, q, kv{"fifo=", int64(rq.ID)})
	}
	// cfq_dispatch_insert
	if s.logRequests {
		s.logs(now, q, "dispatch_insert")
	}
	q.nextRQ = s.findNextRQ(q, rq)
	s.removeRequest(rq)
	d := rqd(rq)
	q.dispatched++
	d.g.dispatched++
	s.rqInFlight[b2i(q.sync)]++
	q.nrSectors += uint64(rq.Bytes >> 9)
	if s.activeCIC == nil {
		s.activeCIC = d.c
	}
	// cfq_activate_request
	s.rqInDriver++
	s.lastPosition = rq.End()
	d.g.stats.Sectors += uint64(rq.Bytes >> 9)
	d.g.stats.Dispatched++
	if s.logRequests {
		s.logv(now, q, kv{"activate rq, drv=", int64(s.rqInDriver)})
	}
	return rq
}

// Dispatch is cfq_dispatch_requests: at most one request.
func (s *Scheduler) Dispatch(t trace.Time) *replay.Request {
	now := int64(t)
	if s.busyQueues == 0 {
		return nil
	}
	q := s.selectQueue(now)
	if q == nil {
		return nil
	}
	rq := s.dispatchRequest(now, q)
	if rq == nil {
		return nil
	}
	q.sliceDispatch++
	q.mustDispatch = false
	if s.busyQueues > 1 && ((!q.sync && q.sliceDispatch >= s.prioToMaxrq(q)) || q.class == classIdle) {
		q.sliceEnd = now + 1
		s.sliceExpired(now, false)
	}
	s.logDispatched(now, q)
	return rq
}

// HasWork reports whether requests are queued (cfq_dispatch_requests has
// something to look at).
func (s *Scheduler) HasWork(trace.Time) bool { return s.busyQueues > 0 && s.rqQueued > 0 }

// scheduleDispatch is cfq_schedule_dispatch: a kblockd queue run.
func (s *Scheduler) scheduleDispatch(now int64) {
	if s.busyQueues > 0 {
		if s.logRequests {
			s.logs(now, nil, "schedule dispatch")
		}
		s.h.Kick()
	}
}

// armSliceTimer is cfq_arm_slice_timer: idle on the empty active queue,
// either as queue idling (slice_idle) or group idling (group_idle).
func (s *Scheduler) armSliceTimer(now int64) {
	q := s.active
	if s.nonrot && s.hwTag != 0 && (!s.armOnGroupIdle || s.t.groupIdle == 0) {
		return // 4.13: no idling on NCQ SSDs at all; 4.19: only without group_idle
	}
	var groupIdle int64
	if !s.shouldIdle(now, q) {
		if s.t.groupIdle == 0 {
			return
		}
		groupIdle = s.t.groupIdle
	}
	if q.dispatched > 0 {
		return
	}
	c := s.activeCIC
	if c == nil || c.exited {
		return
	}
	if c.tt.valid() && uint64(q.sliceEnd-now) < c.tt.mean { // u64 arithmetic, as the kernel
		s.logv(now, q, kv{"Not idling. think_time:", int64(c.tt.mean)})
		return
	}
	st := q.st
	if st == nil {
		st = q.g.stFor(q.class, q.typ())
	}
	if groupIdle != 0 && (q.g.nrCfqq > 1 || s.thinktimeBig(&st.tt, true)) {
		return
	}
	q.waitRequest = true
	sl := s.t.sliceIdle
	if groupIdle != 0 {
		sl = groupIdle
	}
	s.timerPending = true
	s.timerAt = now + sl
	s.h.ArmTimer(idleTimer, trace.Time(now+sl))
	s.logv(now, q, kv{"arm_idle: ", sl}, kv{" group_idle: ", int64(b2i(groupIdle != 0))})
}

// shouldWaitBusy is cfq_should_wait_busy.
func (s *Scheduler) shouldWaitBusy(now int64, q *queue) bool {
	if !q.empty() || q.g.nrCfqq > 1 || s.thinktimeBig(&q.g.tt, true) {
		return false
	}
	if q.sliceUsed(now) {
		return true
	}
	left := uint64(q.sliceEnd - now)
	if c := s.activeCIC; c != nil && c.tt.valid() && left < c.tt.mean {
		return true
	}
	return left <= uint64(s.jiffy)
}

// updateHWTag is cfq_update_hw_tag: decide whether the device queues.
func (s *Scheduler) updateHWTag() {
	q := s.active
	s.hwTagEstDepth = max(s.hwTagEstDepth, s.rqInDriver)
	if s.hwTag == 1 {
		return
	}
	if s.rqQueued <= cfqHWQueueMin && s.rqInDriver <= cfqHWQueueMin {
		return
	}
	if q != nil && q.idleWindow && q.dispatched+q.queued[0]+q.queued[1] < cfqHWQueueMin && s.rqInDriver < cfqHWQueueMin {
		return
	}
	s.hwTagSamples++
	if s.hwTagSamples <= 50 {
		return
	}
	if s.hwTagEstDepth >= cfqHWQueueMin {
		s.hwTag = 1
	} else {
		s.hwTag = 0
	}
}

// Completed is cfq_completed_request (run order matters, §9.4 of the spec).
func (s *Scheduler) Completed(t trace.Time, rq *replay.Request) {
	now := int64(t)
	d, ok := rq.Sched.(*rqData)
	if !ok {
		return
	}
	q := d.q
	if s.logRequests {
		s.logv(now, q, kv{"complete rqnoidle ", int64(b2i(reqNoidle(rq)))})
	}
	s.updateHWTag()
	s.rqInDriver--
	q.dispatched--
	d.g.dispatched--
	d.g.stats.Serviced++
	s.rqInFlight[b2i(q.sync)]--
	if d.sync {
		d.c.tt.lastEnd = now
		st := q.st
		if !q.onRR || st == nil {
			st = q.g.stFor(q.class, q.typ())
		}
		st.tt.lastEnd = now
		if d.start+s.t.fifoExpire[1] <= now {
			s.lastDelayedSync = now
		}
	}
	q.g.tt.lastEnd = now
	if s.active == q {
		empty := q.empty()
		if q.sliceNew {
			s.setPrioSlice(now, q)
			q.sliceNew = false
		}
		if s.shouldWaitBusy(now, q) {
			ext := s.t.sliceIdle
			if ext == 0 {
				ext = s.t.groupIdle
			}
			q.sliceEnd = now + ext
			q.waitBusy = true
			s.logs(now, q, "will busy wait")
		}
		if q.sliceUsed(now) || q.class == classIdle {
			s.sliceExpired(now, true)
		} else if d.sync && empty && s.closeCooperator(q) == nil {
			s.armSliceTimer(now)
		}
	}
	if s.rqInDriver == 0 {
		s.scheduleDispatch(now)
	}
	// The SCSI midlayer runs the queue after every completion (scsi_run_queue).
	s.h.Kick()
	rq.Sched = nil
	*d = rqData{}
	s.freeRQ = append(s.freeRQ, d)
}

// Timer is cfq_idle_slice_timer.
func (s *Scheduler) Timer(t trace.Time, id int) {
	if id != idleTimer || !s.timerPending {
		return
	}
	now := int64(t)
	s.timerPending = false
	q := s.active
	timedOut := true
	if q != nil {
		s.logs(now, q, "idle timer fired")
		timedOut = false
		if q.mustDispatch {
			s.scheduleDispatch(now)
			return
		}
		if !q.sliceUsed(now) {
			if s.busyQueues == 0 {
				return
			}
			if !q.empty() {
				s.scheduleDispatch(now)
				return
			}
			q.deep = false
		}
	}
	s.sliceExpired(now, timedOut)
	s.scheduleDispatch(now)
}

// shouldPreempt is cfq_should_preempt: may a request rq for nq take the
// device from the active queue.
func (s *Scheduler) shouldPreempt(now int64, nq *queue, rq *replay.Request) bool {
	q := s.active
	if q == nil || nq.class == classIdle {
		return false
	}
	if q.class == classIdle {
		return true
	}
	if q.class == classRT && nq.class != classRT {
		return false
	}
	d := rqd(rq)
	if d.sync && !q.sync && !q.mustDispatch {
		return true
	}
	if !isDescendant(q.g, nq.g) {
		return false
	}
	if q.sliceUsed(now) {
		return true
	}
	if nq.class == classRT && q.class != classRT {
		return true
	}
	if s.servingType == wlSyncNoidle && nq.typ() == wlSyncNoidle && q.empty() {
		return true
	}
	if d.prio && q.prioPending == 0 {
		return true
	}
	if q.empty() && !s.shouldIdle(now, q) {
		return true
	}
	if s.activeCIC == nil || !q.waitRequest {
		return false
	}
	return dist(rq.Sector, s.lastPosition) <= cfqqCloseThr // cfq_rq_close
}

// preemptQueue is cfq_preempt_queue: expire the active queue and put nq
// at the front of its tree.
func (s *Scheduler) preemptQueue(now int64, nq *queue) {
	oldType := s.active.typ()
	s.logs(now, nq, "preempt")
	s.sliceExpired(now, true)
	if oldType != nq.typ() {
		nq.g.savedWlSlice = 0
	}
	s.serviceTreeAdd(now, nq, true)
	nq.sliceEnd = 0
	nq.sliceNew = true
}

// Insert is cfq_insert_request (with the queue choice of cfq_set_request
// and cfq_rq_enqueued).
func (s *Scheduler) Insert(t trace.Time, rq *replay.Request) {
	now := int64(t)
	g := s.groupFor(now, rq.Cgroup)
	c := s.getCIC(now, rq.PID, g)
	sync := rq.IsSync()
	q := s.setRequest(now, c, sync)
	var d *rqData
	if n := len(s.freeRQ); n > 0 {
		d, s.freeRQ = s.freeRQ[n-1], s.freeRQ[:n-1]
	} else {
		d = new(rqData)
	}
	*d = rqData{q: q, c: c, g: q.g, sync: sync, prio: rq.Cat&trace.CatMeta != 0}
	d.start = int64(rq.Queued)
	if !rq.Queued.Valid() {
		d.start = now
	}
	d.fifoTime = now + s.t.fifoExpire[b2i(sync)]
	rq.Sched = d
	if s.logRequests {
		s.logs(now, q, "insert_request")
	}
	q.fifo = append(q.fifo, rq)
	s.rqQueued++
	s.addRQRB(now, rq)
	s.rqEnqueued(now, q, c, rq)
	s.h.Kick() // __blk_run_queue after an unplugged insert
}

// rqEnqueued is cfq_rq_enqueued.
func (s *Scheduler) rqEnqueued(now int64, q *queue, c *cic, rq *replay.Request) {
	d := rqd(rq)
	if d.prio {
		q.prioPending++
	}
	s.updateIOThinktime(now, q, c)
	s.updateIOSeektime(q, rq)
	s.updateIdleWindow(now, q, c)
	q.lastRequestPos = rq.End()
	if q == s.active {
		if q.waitRequest {
			if rq.Bytes > pageSize || s.busyQueues > 1 {
				s.delTimer(q)
				q.waitRequest = false
				s.h.Kick()
			} else {
				q.mustDispatch = true
			}
		}
	} else if s.shouldPreempt(now, q, rq) {
		s.preemptQueue(now, q)
		s.h.Kick()
	}
}

// ---- merges (elevator hooks) ----

func bioSync(b *replay.Bio) bool {
	return !b.Cat.IsWrite() || b.Cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
}

// AllowMerge is cfq_allow_bio_merge: a sync bio never joins an async
// request, and only the process's own queue.
func (s *Scheduler) AllowMerge(rq *replay.Request, bio *replay.Bio) bool {
	d, ok := rq.Sched.(*rqData)
	if !ok {
		return false
	}
	sync := bioSync(bio)
	if sync && !d.sync {
		return false
	}
	c := s.procs[bio.PID]
	if c == nil {
		return false
	}
	return c.q[b2i(sync)] == d.q
}

// RequestMerge is cfq_merge (cfq_find_rq_fmerge): a request of the bio's
// own queue starting where the bio ends.
func (s *Scheduler) RequestMerge(_ trace.Time, bio *replay.Bio) *replay.Request {
	c := s.procs[bio.PID]
	if c == nil {
		return nil
	}
	q := c.q[b2i(bioSync(bio))]
	if q == nil {
		return nil
	}
	end := bio.End()
	for _, rq := range q.sortList {
		if rq.Sector == end {
			return rq
		}
		if rq.Sector > end {
			break
		}
	}
	return nil
}

// AllowRequestMerge is cfq_allow_rq_merge, which 4.19's
// blk_attempt_req_merge asks before an insert merge: both requests on one
// queue. next may not be inserted yet: its queue is its process's.
func (s *Scheduler) AllowRequestMerge(rq, next *replay.Request) bool {
	d, ok := rq.Sched.(*rqData)
	if !ok {
		return false
	}
	if dn, ok := next.Sched.(*rqData); ok {
		return dn.q == d.q
	}
	c := s.procs[next.PID]
	if c == nil {
		return false
	}
	return c.q[b2i(next.IsSync())] == d.q
}

// LatterRequest is elv_rb_latter_request (4.19 cfq's
// elevator_latter_req_fn) on rq's own queue's sort tree.
func (s *Scheduler) LatterRequest(rq *replay.Request) *replay.Request {
	d, ok := rq.Sched.(*rqData)
	if !ok || d.q == nil {
		return nil
	}
	if i := d.q.sortIndex(rq); i >= 0 && i+1 < len(d.q.sortList) {
		return d.q.sortList[i+1]
	}
	return nil
}

// FormerRequest is elv_rb_former_request (elevator_former_req_fn) on rq's
// own queue's sort tree.
func (s *Scheduler) FormerRequest(rq *replay.Request) *replay.Request {
	d, ok := rq.Sched.(*rqData)
	if !ok || d.q == nil {
		return nil
	}
	if i := d.q.sortIndex(rq); i > 0 {
		return d.q.sortList[i-1]
	}
	return nil
}

// RequestMerged is cfq_merged_request: a front merge repositions the
// request in its queue's sort list (cfq_reposition_rq_rb).
func (s *Scheduler) RequestMerged(t trace.Time, rq *replay.Request, how replay.Merge) {
	d, ok := rq.Sched.(*rqData)
	if !ok || how != replay.FrontMerge {
		return
	}
	q := d.q
	q.sortDel(rq)
	q.queued[b2i(d.sync)]--
	s.addRQRB(int64(t), rq)
}

// RequestsMerged is cfq_merged_requests: next joins rq and disappears.
func (s *Scheduler) RequestsMerged(t trace.Time, rq, next *replay.Request) {
	now := int64(t)
	d, ok1 := rq.Sched.(*rqData)
	dn, ok2 := next.Sched.(*rqData)
	if !ok1 || !ok2 {
		return
	}
	q := d.q
	if dn.fifoTime < d.fifoTime && q == dn.q {
		// the survivor takes next's place and time in the fifo
		var ri, ni = -1, -1
		for i, x := range q.fifo {
			if x == rq {
				ri = i
			} else if x == next {
				ni = i
			}
		}
		if ri >= 0 && ni >= 0 {
			q.fifo[ni], q.fifo[ri] = rq, next
		}
		d.fifoTime = dn.fifoTime
	}
	if q.nextRQ == next {
		q.nextRQ = rq
	}
	s.removeRequest(next)
	nq := dn.q
	if nq.onRR && nq.empty() && nq != s.active {
		s.delCfqqRR(now, nq)
	}
	next.Sched = nil
}

// ProcessExited is cfq_exit_icq: the process sends no more I/O; its
// queue stops idling and is expired if active.
func (s *Scheduler) ProcessExited(t trace.Time, pid uint32) {
	now := int64(t)
	c := s.procs[pid]
	if c == nil {
		return
	}
	c.exited = true
	if q := c.q[1]; q != nil {
		if q == s.active && q.procs <= 1 {
			s.sliceExpired(now, false)
			s.scheduleDispatch(now)
		}
		q.procs--
		q.newQ = nil
		c.q[1] = nil
	}
	c.q[0] = nil
	delete(s.procs, pid)
}

package bfq

// Queue lookup, bursts and queue merging (bfq_init_rq, bfq_get_queue,
// bfq_handle_burst, bfq_setup_cooperator, bfq_merge_bfqqs, bfq_split_bfqq,
// bfq_do_or_sched_stable_merge).

// bicFor returns the process's bic, creating it; a change of cgroup drops
// its queues (simplified __bfq_bic_change_cgroup: the sync queue is not
// moved but replaced by a fresh one in the new group).
func (s *Scheduler) bicFor(pid uint32, cgroup uint64) *bic {
	b := s.bics[pid]
	if b == nil {
		b = &bic{pid: pid, cgroup: cgroup}
		s.bics[pid] = b
		return b
	}
	b.exited = false
	if b.cgroup != cgroup {
		b.cgroup = cgroup
		for i := 1; i >= 0; i-- {
			if q := b.q[i]; q != nil {
				b.q[i] = nil
				if q == s.inService && i == 1 && q.empty() {
					s.expire(q, false, expPreempted)
				}
				s.putCooperator(q)
				s.releaseProcessRef(q)
			}
		}
		b.stablyMerged = false
		b.stableMerge = nil
	}
	return b
}

// queueForInsert is bfq_init_rq's queue choice: bfq_get_bfqq_handle_split,
// the split of a seeky shared queue, and bfq_handle_burst.
func (s *Scheduler) queueForInsert(b *bic, sync bool, pid uint32) *queue {
	g := s.groupFor(b.cgroup)
	q := b.q[b2i(sync)]
	newQ := false
	if q == nil {
		q = s.getQueue(b, g, sync, pid, false)
		newQ = true
	} else if sync && q.coop && q.splitCoop && !b.stablyMerged {
		// "If the queue was seeky for too long, break it apart."
		s.logq(logDecisions, q, "breaking apart bfqq")
		waker := wakerAfterSplit(q)
		if q.inLargeBurst {
			b.saved.inLargeBurst = true
		}
		if n := s.splitQueue(b, q, pid); n != nil {
			q = n
		} else {
			q = s.getQueue(b, g, sync, pid, true)
			q.splitTimeJ = s.nowJ
			s.resumeState(q, b)
			newQ = true
			if s.feat.waker {
				// bfq_get_bfqq_handle_split: the new queue keeps the
				// shared queue's waker.
				q.tentativeWaker = nil
				s.setWaker(q, waker)
			}
		}
	}
	if newQ && q.justCreated && (s.burstSize > 0 || s.totBusy() == 0) {
		s.handleBurst(q)
	}
	return q
}

// getQueue is bfq_get_queue: the group's shared async queue, or a new
// sync queue (with stable merge at creation, ≥ 5.13).
func (s *Scheduler) getQueue(b *bic, g *group, sync bool, pid uint32, respawn bool) *queue {
	if !sync {
		// bfq_async_queue_prio: one async queue per class and level of
		// the group (one for the idle class).
		k := s.asyncKeyOf(pid)
		q := g.asyncQ[k]
		if q == nil {
			if g.asyncQ == nil {
				g.asyncQ = map[asyncKey]*queue{}
			}
			q = s.newQueue(g, pid, false)
			q.procRefs = 0
			g.asyncQ[k] = q
		}
		q.procRefs++
		b.q[0] = q
		return q
	}
	q := s.newQueue(g, pid, true)
	s.warmQueue(q, pid)
	q.procRefs = 1
	q.bic = b
	b.q[1] = q
	if s.feat.stableMerge && !respawn {
		q = s.doOrSchedStableMerge(q, b)
	}
	return q
}

// doOrSchedStableMerge is bfq_do_or_sched_stable_merge.
func (s *Scheduler) doOrSchedStableMerge(q *queue, b *bic) *queue {
	src := &s.lastBfqqCreated
	if q.entity.parent != nil {
		src = &q.g.lastBfqqCreate
	}
	last := *src
	if last == nil || last.creationJ+s.msecsToJiffies(stableMergeMs) < q.creationJ ||
		last.entity.parent != q.entity.parent || last.ioprio != q.ioprio || last.entity.class != q.entity.class {
		*src = q
	} else if last.creationJ+s.burstIntervalJ >= q.creationJ {
		if s.nonrotWithQueueing {
			// bfq_do_early_stable_merge
			n := s.setupMerge(q, last)
			if n == nil {
				return q
			}
			if n.bic != nil {
				n.bic.stablyMerged = true
			}
			b.stablyMerged = true
			return s.mergeQueues(b, q)
		}
		b.stableMerge = last
		s.totalStableScheduled++
	}
	return q
}

// reassignLastBfqq is bfq_reassign_last_bfqq.
func (s *Scheduler) reassignLastBfqq(cur, n *queue) {
	if cur.entity.parent != nil && cur.g.lastBfqqCreate == cur {
		cur.g.lastBfqqCreate = n
	} else if s.lastBfqqCreated == cur {
		s.lastBfqqCreated = n
	}
}

// splitQueue is bfq_split_bfqq: reuse the queue when this is its only
// process, else detach the bic (nil return: a new queue is needed).
func (s *Scheduler) splitQueue(b *bic, q *queue, pid uint32) *queue {
	s.logq(logDecisions, q, "splitting queue")
	s.totalSplits++
	if q.procRefs == 1 && q.newBfqq == nil {
		q.pid = int32(pid)
		q.coop = false
		q.splitCoop = false
		q.bic = b
		return q
	}
	b.q[1] = nil
	s.putCooperator(q)
	s.releaseProcessRef(q)
	return nil
}

// saveState is bfq_bfqq_save_state.
func (s *Scheduler) saveState(q *queue) {
	b := q.bic
	if b == nil {
		return
	}
	sv := &b.saved
	sv.valid = true
	sv.weight = q.entity.origWeight
	sv.ttime = q.tt
	sv.shortTtime = q.shortTtime
	sv.ioBound = q.ioBound
	sv.ioStartTime = q.ioStartTime
	sv.totIdleTime = q.totIdleTime
	sv.inLargeBurst = q.inLargeBurst
	if q.justCreated && !q.inLargeBurst && s.lowLatency {
		sv.wrCoeff = wrCoeffDefault
		sv.wrCurMaxTime = s.wrDuration()
		sv.lastWrStartFi = s.nowJ
		sv.serviceFromWr = 0
	} else {
		sv.wrCoeff = q.wrCoeff
		sv.wrCurMaxTime = q.wrCurMaxTime
		sv.lastWrStartFi = q.lastWrStartFin
		sv.serviceFromWr = q.serviceFromWr
	}
}

// resumeState is bfq_bfqq_resume_state for a queue created by a split.
func (s *Scheduler) resumeState(q *queue, b *bic) {
	sv := &b.saved
	if !sv.valid {
		return
	}
	q.shortTtime = sv.shortTtime
	q.ioBound = sv.ioBound
	q.tt = sv.ttime
	q.ioStartTime = sv.ioStartTime
	q.totIdleTime = sv.totIdleTime
	q.inLargeBurst = sv.inLargeBurst
	if s.lowLatency {
		q.wrCoeff = sv.wrCoeff
	}
	q.serviceFromWr = sv.serviceFromWr
	q.lastWrStartFin = sv.lastWrStartFi
	q.wrCurMaxTime = sv.wrCurMaxTime
	if q.wrCoeff > 1 && (q.inLargeBurst || s.nowJ > q.lastWrStartFin+q.wrCurMaxTime) {
		q.wrCoeff = 1
		q.wrCurMaxTime = 0
	}
	if q.wrCoeff > 1 {
		q.entity.prioChanged = true
	}
}

// tooLateForMerging is bfq_too_late_for_merging (bfq_merge_time_limit HZ/10).
func (s *Scheduler) tooLateForMerging(q *queue) bool {
	return q.serviceFromBacklogged > 0 && s.nowJ > q.firstIOTimeJ+s.hz/10
}

// mayBeCloseCooperator is bfq_may_be_close_cooperator.
func (s *Scheduler) mayBeCloseCooperator(q, n *queue) bool {
	if s.tooLateForMerging(n) {
		return false
	}
	if q.entity.class == classIdle || n.entity.class == classIdle || q.entity.class != n.entity.class {
		return false
	}
	if q.seeky() || n.seeky() {
		return false
	}
	return q.sync && n.sync
}

// setupMerge is bfq_setup_merge: schedules q's redirection to n's chain end.
//
// The chain walk refuses a merge that would close a cycle (bfq_setup_merge:
// "Avoid a circular list and skip interim queue merges"), and so does
// n == q: the kernel's callers never pass it (bfq_find_close_cooperator
// drops cur_bfqq, the in-service check excludes bfqq, bic_set_bfqq cancels
// a stable merge with the bic's own queue), and a self-link would make
// setupCooperator's walk spin.
func (s *Scheduler) setupMerge(q, n *queue) *queue {
	if n.procRefs == 0 || n == q {
		return nil
	}
	for n.newBfqq != nil {
		if n.newBfqq == q {
			return nil
		}
		n = n.newBfqq
	}
	if q.procRefs == 0 || n.procRefs == 0 {
		return nil
	}
	if n.entity.parent != q.entity.parent {
		return nil
	}
	s.logq(logDecisions, q, "scheduling merge with queue %d", n.pid)
	q.newBfqq = n
	n.procRefs += q.procRefs
	return n
}

// setupCooperator is bfq_setup_cooperator; pos is the bio's or request's
// start sector.
func (s *Scheduler) setupCooperator(q *queue, pos uint64, request bool, b *bic) *queue {
	if n := q.newBfqq; n != nil {
		for n.newBfqq != nil {
			n = n.newBfqq
		}
		return n
	}
	if !s.nonrotWithQueueing {
		if q.sync && b.stableMerge != nil && !q.justCreated &&
			s.nowJ > q.splitTimeJ+s.msecsToJiffies(stableMergeMs) &&
			s.nowJ > q.creationJ+s.msecsToJiffies(stableMergeMs) {
			// bfq_setup_stable_merge
			sm := b.stableMerge
			b.stableMerge = nil
			if s.idlingBoostsThr(q) || min(q.procRefs, sm.procRefs) == 0 {
				return nil
			}
			n := s.setupMerge(q, sm)
			if n != nil {
				b.stablyMerged = true
				if n.bic != nil {
					n.bic.stablyMerged = true
				}
			}
			return n
		}
	}
	if s.nonrotWithQueueing {
		return nil
	}
	if s.tooLateForMerging(q) {
		return nil
	}
	if s.totBusy() == 1 {
		return nil
	}
	in := s.inService
	if in != nil && in != q && absDiff(pos, s.inServLastPos) <= closeThr &&
		q.entity.parent == in.entity.parent && s.mayBeCloseCooperator(q, in) {
		if n := s.setupMerge(q, in); n != nil {
			return n
		}
	}
	n := s.findCloseCooperator(q, pos)
	if n != nil && s.mayBeCloseCooperator(q, n) {
		return s.setupMerge(q, n)
	}
	return nil
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// mergeQueues is bfq_merge_bfqqs: redirect b from q to q.newBfqq.
func (s *Scheduler) mergeQueues(b *bic, q *queue) *queue {
	n := q.newBfqq
	s.logq(logDecisions, q, "merging with queue %d", n.pid)
	s.totalMerges++
	s.saveState(q)
	s.saveState(n)
	if q.ioBound {
		n.ioBound = true
	}
	q.ioBound = false
	// q's waker may inject for the merged queue's processes too.
	if s.feat.waker && q.waker != nil && n.waker == nil && q.waker != n {
		n.tentativeWaker = nil
		s.setWaker(n, q.waker)
	}
	if n.wrCoeff == 1 && q.wrCoeff > 1 {
		n.wrCoeff = q.wrCoeff
		n.wrCurMaxTime = q.wrCurMaxTime
		n.lastWrStartFin = q.lastWrStartFin
		n.wrStartAtSrt = q.wrStartAtSrt
		if n.busy {
			s.wrBusy++
		}
		n.entity.prioChanged = true
	}
	if q.wrCoeff > 1 {
		q.wrCoeff = 1
		q.entity.prioChanged = true
		if q.busy {
			s.wrBusy--
		}
	}
	if s.logLevel >= logAll {
		s.logq(logAll, n, "merge_bfqqs: wr_busy %d", s.wrBusy)
	}
	b.q[1] = n
	// bic_set_bfqq: a bic scheduled to stably merge with the very queue it
	// is now redirected to would, after a split of that queue, be stably
	// merged with itself (q.newBfqq = q, a cycle that setupCooperator's
	// chain walk never leaves): the stable merge is cancelled.
	if b.stableMerge == n {
		b.stableMerge = nil
	}
	n.coop = true
	n.bic = nil
	n.pid = -1
	q.bic = nil
	s.reassignLastBfqq(q, n)
	s.releaseProcessRef(q)
	return n
}

// ---- rq_pos_tree (bfq_pos_tree_add_move, bfqq_find_close) ----

func (s *Scheduler) posTreeRemove(q *queue) {
	if !q.inPosTree {
		return
	}
	t := q.g.posTree
	for i, x := range t {
		if x == q {
			q.g.posTree = append(t[:i], t[i+1:]...)
			break
		}
	}
	q.inPosTree = false
}

// posTreeAddMove is bfq_pos_tree_add_move; a queue whose key is already
// present is left out, as the kernel does.
func (s *Scheduler) posTreeAddMove(q *queue) {
	s.posTreeRemove(q)
	if q.entity.class == classIdle || q.nextRq == nil || s.tooLateForMerging(q) {
		return
	}
	key := q.nextRq.pos()
	t := q.g.posTree
	i := 0
	for i < len(t) && t[i].nextRq.pos() < key {
		i++
	}
	if i < len(t) && t[i].nextRq.pos() == key {
		return
	}
	t = append(t, nil)
	copy(t[i+1:], t[i:])
	t[i] = q
	q.g.posTree = t
	q.inPosTree = true
}

// findCloseCooperator is bfq_find_close_cooperator / bfqq_find_close: an
// exact key match, else the nearer of the two neighbours of pos, else the
// other one, within BFQQ_CLOSE_THR. (The kernel's first candidate is the
// rb-tree node where the search ended, which depends on the tree's shape;
// the nearer neighbour stands in for it.)
func (s *Scheduler) findCloseCooperator(q *queue, pos uint64) *queue {
	t := q.g.posTree
	if len(t) == 0 {
		return nil
	}
	i := 0
	for i < len(t) && t[i].nextRq.pos() < pos {
		i++
	}
	var hit *queue
	if i < len(t) && t[i].nextRq.pos() == pos {
		hit = t[i]
	} else {
		var pred, succ *queue
		if i > 0 {
			pred = t[i-1]
		}
		if i < len(t) {
			succ = t[i]
		}
		first, second := pred, succ
		if pred == nil || (succ != nil && absDiff(succ.nextRq.pos(), pos) < absDiff(pos, pred.nextRq.pos())) {
			first, second = succ, pred
		}
		if first != nil && absDiff(first.nextRq.pos(), pos) <= closeThr {
			hit = first
		} else if second != nil && absDiff(second.nextRq.pos(), pos) <= closeThr {
			hit = second
		}
	}
	if hit == nil || hit == q {
		return nil
	}
	return hit
}

// ---- bursts (bfq_handle_burst) ----

func (s *Scheduler) burstListDel(q *queue) {
	if !q.inBurstList {
		return
	}
	for i, x := range s.burstList {
		if x == q {
			s.burstList = append(s.burstList[:i], s.burstList[i+1:]...)
			break
		}
	}
	q.inBurstList = false
}

func (s *Scheduler) handleBurst(q *queue) {
	if q.inBurstList || q.inLargeBurst || s.nowJ <= q.splitTimeJ+s.msecsToJiffies(10) {
		return
	}
	if s.nowJ > s.lastInsInBurst+s.burstIntervalJ || q.entity.parent != s.burstParent {
		s.largeBurst = false
		// bfq_reset_burst_list
		for _, x := range s.burstList {
			x.inBurstList = false
		}
		s.burstList = append(s.burstList[:0], q)
		q.inBurstList = true
		s.burstSize = 1
		s.burstParent = q.entity.parent
	} else if s.largeBurst {
		q.inLargeBurst = true
	} else {
		// bfq_add_to_burst
		s.burstSize++
		if s.burstSize == largeBurstThresh {
			s.largeBurst = true
			for _, x := range s.burstList {
				x.inLargeBurst = true
				x.inBurstList = false
			}
			q.inLargeBurst = true
			s.burstList = s.burstList[:0]
		} else {
			s.burstList = append(s.burstList, q)
			q.inBurstList = true
		}
	}
	s.lastInsInBurst = s.nowJ
}

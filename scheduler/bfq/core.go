package bfq

import (
	"strconv"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

var _ replay.Scheduler = (*Scheduler)(nil)
var _ replay.ProcessExiter = (*Scheduler)(nil)

// ---- bookkeeping: busy set, weights tree, groups with pending requests ----

// weightsTreeAdd is bfq_weights_tree_add.
func (s *Scheduler) weightsTreeAdd(q *queue) {
	if q.weightCounter {
		return
	}
	w := q.entity.weight
	i := 0
	for i < len(s.queueWeights) && s.queueWeights[i].weight < w {
		i++
	}
	if i < len(s.queueWeights) && s.queueWeights[i].weight == w {
		s.queueWeights[i].n++
	} else {
		s.queueWeights = append(s.queueWeights, weightCount{})
		copy(s.queueWeights[i+1:], s.queueWeights[i:])
		s.queueWeights[i] = weightCount{weight: w, n: 1}
	}
	q.weightCounter = true
}

// weightsTreeRemoveCounter is __bfq_weights_tree_remove.
func (s *Scheduler) weightsTreeRemoveCounter(q *queue) {
	if !q.weightCounter {
		return
	}
	w := q.entity.weight
	for i := range s.queueWeights {
		if s.queueWeights[i].weight == w {
			s.queueWeights[i].n--
			if s.queueWeights[i].n == 0 {
				s.queueWeights = append(s.queueWeights[:i], s.queueWeights[i+1:]...)
			}
			break
		}
	}
	q.weightCounter = false
}

// weightsTreeRemove is bfq_weights_tree_remove; in ≤ 6.1 it also
// uncounts the inactive ancestors' groups lazily.
func (s *Scheduler) weightsTreeRemove(q *queue) {
	if s.feat.legacyGroupCount {
		for e := q.entity.parent; e != nil; e = e.parent {
			sd := e.mySd
			if sd.next != nil || sd.inService != nil {
				break
			}
			if e.inGroupsWithPendingReqs {
				e.inGroupsWithPendingReqs = false
				s.numGroupsWithPendingReqs--
			}
		}
	}
	s.weightsTreeRemoveCounter(q)
}

// addInGroupsPending is bfq_add_bfqq_in_groups_with_pending_reqs (≥ 6.2).
func (s *Scheduler) addInGroupsPending(q *queue) {
	if s.feat.legacyGroupCount || q.entity.inGroupsWithPendingReqs {
		return
	}
	q.entity.inGroupsWithPendingReqs = true
	if q.g.numQueuesPend == 0 {
		s.numGroupsWithPendingReqs++
	}
	q.g.numQueuesPend++
}

// delInGroupsPending is bfq_del_bfqq_in_groups_with_pending_reqs (≥ 6.2).
func (s *Scheduler) delInGroupsPending(q *queue) {
	if s.feat.legacyGroupCount || !q.entity.inGroupsWithPendingReqs {
		return
	}
	q.entity.inGroupsWithPendingReqs = false
	q.g.numQueuesPend--
	if q.g.numQueuesPend == 0 {
		s.numGroupsWithPendingReqs--
	}
}

func (s *Scheduler) activeListAdd(q *queue) {
	s.activeList = append(s.activeList, nil)
	copy(s.activeList[1:], s.activeList)
	s.activeList[0] = q
}

func (s *Scheduler) activeListDel(q *queue) {
	for i, x := range s.activeList {
		if x == q {
			s.activeList = append(s.activeList[:i], s.activeList[i+1:]...)
			return
		}
	}
}

// addBusy is bfq_add_bfqq_busy.
func (s *Scheduler) addBusy(q *queue) {
	if s.logLevel >= logAll {
		s.logq(logAll, q, "add to busy")
	}
	// bfq_activate_bfqq
	s.activateRequeueEntity(&q.entity, q.nonBlockingWaitRq, false, false)
	q.nonBlockingWaitRq = false
	q.busy = true
	s.busy[q.entity.class]++
	if q.dispatched == 0 {
		s.addInGroupsPending(q)
		if q.wrCoeff == 1 {
			s.weightsTreeAdd(q)
		}
	}
	if q.wrCoeff > 1 {
		s.wrBusy++
	}
}

// delBusy is bfq_del_bfqq_busy.
func (s *Scheduler) delBusy(q *queue, expiration bool) {
	if s.logLevel >= logAll {
		s.logq(logAll, q, "del from busy")
	}
	q.busy = false
	s.busy[q.entity.class]--
	if q.wrCoeff > 1 {
		s.wrBusy--
	}
	s.deactivateEntity(&q.entity, true, expiration)
	if q.dispatched == 0 {
		s.delInGroupsPending(q)
		s.weightsTreeRemove(q)
	}
}

// requeueQueue is bfq_requeue_bfqq.
func (s *Scheduler) requeueQueue(q *queue, expiration bool) {
	s.activateRequeueEntity(&q.entity, false, q == s.inService, expiration)
}

// ---- idling decisions ----

// asymmetric is bfq_asymmetric_scenario.
func (s *Scheduler) asymmetric(q *queue) bool {
	smallest := q != nil && q.weightCounter && len(s.queueWeights) > 0 && s.queueWeights[0].weight == q.entity.weight
	varied := !smallest && len(s.queueWeights) >= 2
	nc := 0
	for _, n := range s.busy {
		if n > 0 {
			nc++
		}
	}
	groups := s.numGroupsWithPendingReqs > 1
	if s.feat.legacyGroupCount {
		groups = s.numGroupsWithPendingReqs > 0
	}
	return varied || nc >= 2 || groups
}

// idlingBoostsThr is idling_boosts_thr_without_issues. hw_tag -1 counts
// as "queueing" (it is truthy in the kernel's !hw_tag tests).
func (s *Scheduler) idlingBoostsThr(q *queue) bool {
	if q.procRefs == 0 {
		return false
	}
	noHwTag := s.hwTag == 0
	rotNoQueueing := s.rotational && noHwTag
	seqBound := !q.seeky() && q.ioBound && q.shortTtime
	boosts := rotNoQueueing || ((s.rotational || noHwTag) && seqBound)
	return boosts && s.wrBusy == 0
}

// idlingNeededForGuarantees is idling_needed_for_service_guarantees.
func (s *Scheduler) idlingNeededForGuarantees(q *queue) bool {
	if q.procRefs == 0 {
		return false
	}
	return (q.wrCoeff > 1 && (s.wrBusy < s.totBusy() || s.inDriver >= q.dispatched+4)) ||
		s.asymmetric(q) || s.totBusy() == 1
}

// betterToIdle is bfq_better_to_idle.
func (s *Scheduler) betterToIdle(q *queue) bool {
	if q.procRefs == 0 {
		return false
	}
	if s.strictGuarantees {
		return true
	}
	if s.sliceIdle == 0 || !q.sync || q.entity.class == classIdle {
		return false
	}
	return s.idlingBoostsThr(q) || s.idlingNeededForGuarantees(q)
}

// mustIdle is bfq_bfqq_must_idle.
func (s *Scheduler) mustIdle(q *queue) bool { return q.empty() && s.betterToIdle(q) }

// budgetTimeout is bfq_bfqq_budget_timeout.
func (s *Scheduler) budgetTimeout(q *queue) bool { return s.nowJ >= q.budgetTimeoutJ }

// mayExpireForBudgTimeout is bfq_may_expire_for_budg_timeout.
func (s *Scheduler) mayExpireForBudgTimeout(q *queue) bool {
	if s.logLevel >= logAll {
		s.logMayBudgetTimeout(q, q.waitRequest)
	}
	return (!q.waitRequest || q.budgetLeft() >= q.entity.budget/3) && s.budgetTimeout(q)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// servToCharge is bfq_serv_to_charge.
func (s *Scheduler) servToCharge(r *rqState, q *queue) int {
	if q.sync || q.wrCoeff > 1 || s.asymmetric(q) {
		return r.sectors()
	}
	return r.sectors() * asyncChargeFactor
}

// armSliceTimer is bfq_arm_slice_timer.
func (s *Scheduler) armSliceTimer() {
	q := s.inService
	q.waitRequest = true
	sl := s.sliceIdle
	if q.seeky() && q.wrCoeff == 1 && !s.asymmetric(q) {
		if sl > minTTns {
			sl = minTTns
		}
	} else if q.wrCoeff > 1 && sl < 20000000 {
		sl = 20000000
	}
	s.lastIdlingStart = int64(s.now)
	s.lastIdlingStartJ = s.nowJ
	s.idleTimerQ = q
	s.totalIdleArms++
	s.h.ArmTimer(idleTimerID, s.now+trace.Time(sl))
	if s.logLevel >= logDecisions {
		s.logMayBudgetTimeout(q, true)
	}
}

func (s *Scheduler) cancelIdleTimer() {
	if s.idleTimerQ != nil {
		s.idleTimerQ = nil
		s.h.CancelTimer(idleTimerID)
	}
}

// scheduleDispatch is bfq_schedule_dispatch.
func (s *Scheduler) scheduleDispatch() {
	if s.queued != 0 {
		if s.logLevel >= logAll {
			s.logd(logAll, "schedule dispatch")
		}
		s.h.Kick()
	}
}

// ---- expiration and budgets ----

// isSlow is bfq_bfqq_is_slow; it returns the slowness and Δt in ms.
func (s *Scheduler) isSlow(q *queue, compensate bool) (bool, int64) {
	slow := q.seeky()
	if !q.sync {
		return false, 0
	}
	end := int64(s.now)
	if compensate {
		end = s.lastIdlingStart
	}
	deltaUs := (end - s.lastBudgetStart) / 1000
	if deltaUs < 1000 {
		if !s.rotational {
			return slow, minTTns / 1000000
		}
		return slow, defaultSliceIdleNs / 1000000
	}
	deltaMs := deltaUs / 1000
	if deltaUs > 20000 {
		slow = q.entity.service < s.maxBudget/2
	}
	return slow, deltaMs
}

// chargeTime is bfq_bfqq_charge_time, with the compile-time timeout HZ/8.
func (s *Scheduler) chargeTime(q *queue, timeMs int64) {
	e := &q.entity
	timeoutMs := s.jiffiesToMsecs(s.constTimeoutJ)
	bounded := timeMs
	if bounded > timeoutMs {
		bounded = timeoutMs
	}
	servForTime := int(int64(s.maxBudget) * bounded / timeoutMs)
	tot := servForTime
	if e.service > tot {
		tot = e.service
	}
	if tot > e.budget {
		e.budget = tot
	}
	if d := tot - e.service; d > 0 {
		s.served(q, d)
	}
}

// recalcBudget is __bfq_bfqq_recalc_budget.
func (s *Scheduler) recalcBudget(q *queue, reason int) {
	minB := s.minBudget()
	budget := q.maxBudget
	if q.wrCoeff != 1 {
		budget = 2 * minB
	}
	if q.sync && q.wrCoeff == 1 {
		switch reason {
		case expTooIdle:
			if q.dispatched > 0 {
				budget = min(budget*2, s.maxBudget)
			} else if budget > 5*minB {
				budget -= 4 * minB
			} else {
				budget = minB
			}
		case expBudgetTimeout:
			budget = min(budget*2, s.maxBudget)
		case expBudgetExhausted:
			budget = min(budget*4, s.maxBudget)
		case expNoMoreRequests:
			budget = max(q.entity.service, minB)
		default:
			return // PREEMPTED: nothing changes
		}
	} else if !q.sync {
		budget = s.maxBudget
	}
	q.maxBudget = budget
	if s.budgetsAssigned >= statsMinBudgets && s.userMaxBudget == 0 {
		q.maxBudget = min(q.maxBudget, s.maxBudget)
	}
	if q.nextRq != nil {
		q.entity.budget = max(q.maxBudget, s.servToCharge(q.nextRq, q))
	}
	if s.logLevel >= logAll {
		s.logq(logAll, q, "recalc_budg: last max_budg %d, min budg %d", q.maxBudget, minB)
	}
}

// softrtNextStart is bfq_bfqq_softrt_next_start.
func (s *Scheduler) softrtNextStart(q *queue) int64 {
	a := q.softRtNextStart
	b := q.lastIdleBklog + s.hz*int64(q.serviceFromBacklogged)/wrMaxSoftrtRate
	c := s.nowJ + s.nsecsToJiffies(s.sliceIdle) + 4
	return max(a, b, c)
}

// expire is bfq_bfqq_expire.
func (s *Scheduler) expire(q *queue, compensate bool, reason int) {
	e := &q.entity
	slow, deltaMs := s.isSlow(q, compensate)
	if q.wrCoeff == 1 && (slow || (reason == expBudgetTimeout && q.budgetLeft() >= e.budget/3)) {
		s.chargeTime(q, deltaMs)
	}
	if s.feat.ioBoundByCount && reason == expTooIdle && e.service <= 2*e.budget/10 {
		q.ioBound = false
	}
	if s.lowLatency && q.wrCoeff == 1 {
		q.lastWrStartFin = s.nowJ
	}
	if s.lowLatency && q.empty() {
		if q.dispatched == 0 {
			q.softRtNextStart = s.softrtNextStart(q)
		} else {
			q.softrtUpdate = true
		}
	}
	if s.logLevel >= logDecisions {
		// "expire (%d, slow %d, num_disp %d, short_ttime %d)"
		b := s.logStart(q, "expire (")
		b = strconv.AppendInt(b, int64(reason), 10)
		b = append(b, ", slow "...)
		b = strconv.AppendInt(b, int64(b2i(slow)), 10)
		b = append(b, ", num_disp "...)
		b = strconv.AppendInt(b, int64(q.dispatched), 10)
		b = append(b, ", short_ttime "...)
		b = strconv.AppendInt(b, int64(b2i(q.shortTtime)), 10)
		s.logEmit(q, append(b, ')'))
	}
	s.totalExpirations[reason]++
	s.rqsInjected = false
	s.recalcBudget(q, reason)
	s.expireInner(q, reason)
	if !q.busy && reason != expBudgetTimeout && reason != expBudgetExhausted {
		q.nonBlockingWaitRq = true
	} else {
		e.service = 0
	}
	for p := e.parent; p != nil; p = p.parent {
		p.service = 0
	}
}

// expireInner is __bfq_bfqq_expire.
func (s *Scheduler) expireInner(q *queue, reason int) {
	if q.coop && q.seeky() {
		q.splitCoop = true
	}
	if q.empty() && !(reason == expPreempted && s.idlingNeededForGuarantees(q)) {
		if q.dispatched == 0 {
			q.budgetTimeoutJ = s.nowJ
		}
		s.delBusy(q, true)
	} else {
		s.requeueQueue(q, true)
		if !s.nonrotWithQueueing && !q.empty() {
			s.posTreeAddMove(q)
		}
	}
	// __bfq_bfqd_reset_in_service
	q.waitRequest = false
	s.cancelIdleTimer()
	s.inService = nil
	for e := &q.entity; e != nil; e = e.parent {
		e.sd.inService = nil
	}
}

// setInService is bfq_set_in_service_queue + __bfq_set_in_service_queue.
func (s *Scheduler) setInService() *queue {
	q := s.getNextQueue()
	if q != nil {
		q.fifoExpire = false
		s.budgetsAssigned = (s.budgetsAssigned*7 + 256) / 8
		if s.nowJ > q.lastWrStartFin && q.wrCoeff > 1 && q.wrCurMaxTime == s.wrRtMaxTimeJ && s.nowJ > q.budgetTimeoutJ {
			if q.budgetTimeoutJ > q.lastWrStartFin {
				q.lastWrStartFin += s.nowJ - q.budgetTimeoutJ
			} else {
				q.lastWrStartFin = s.nowJ
			}
		}
		// bfq_set_budget_timeout
		coeff := int64(1)
		if q.wrCurMaxTime != s.wrRtMaxTimeJ {
			coeff = int64(q.entity.weight / q.entity.origWeight)
		}
		s.lastBudgetStart = int64(s.now)
		q.budgetTimeoutJ = s.nowJ + s.timeoutJ*coeff
		s.wrLoggedThisSlot = false
		if s.logLevel >= logDecisions {
			b := s.logStart(q, "set_in_service_queue, cur-budget = ")
			s.logEmit(q, strconv.AppendInt(b, int64(q.entity.budget), 10))
		}
	}
	s.inService = q
	if !s.feat.staleInServLastPos {
		s.inServLastPos = 0 // Jan Kara, "bfq: Avoid false bfq queue merging" (5.12)
	}
	return q
}

// selectQueue is bfq_select_queue.
func (s *Scheduler) selectQueue() *queue {
	q := s.inService
	reason := expNoMoreRequests
	if q == nil {
		goto newQueue
	}
	if s.logLevel >= logAll {
		s.logq(logAll, q, "select_queue: already in-service queue")
	}
	if s.mayExpireForBudgTimeout(q) && !s.mustIdle(q) {
		reason = expBudgetTimeout
		goto expire
	}
checkQueue:
	if q.nextRq != nil {
		if s.servToCharge(q.nextRq, q) > q.budgetLeft() {
			reason = expBudgetExhausted
			goto expire
		}
		if q.waitRequest {
			q.waitRequest = false
			s.cancelIdleTimer()
		}
		goto keepQueue
	}
	if q.waitRequest || (q.dispatched != 0 && s.betterToIdle(q)) {
		q = s.injectionSource(q)
		goto keepQueue
	}
	reason = expNoMoreRequests
expire:
	s.expire(q, false, reason)
newQueue:
	q = s.setInService()
	if q != nil {
		if s.logLevel >= logAll {
			s.logq(logAll, q, "select_queue: checking new queue")
		}
		goto checkQueue
	}
keepQueue:
	if q != nil {
		if s.logLevel >= logAll {
			s.logq(logAll, q, "select_queue: returned this queue")
		}
	} else {
		if s.logLevel >= logAll {
			s.logd(logAll, "select_queue: no queue returned")
		}
	}
	return q
}

// injectionSource is the plugging branch of bfq_select_queue: the same
// process's async queue, else the waker queue, else the first woken
// queue (waker feature), else bfq_choose_bfqq_for_injection.
func (s *Scheduler) injectionSource(in *queue) *queue {
	if b := in.bic; b != nil {
		if aq := b.q[0]; aq != nil && aq.busy && aq.nextRq != nil && aq.nextRq.rq.PID == b.pid &&
			s.servToCharge(aq.nextRq, aq) <= aq.budgetLeft() {
			return aq
		}
	}
	if s.feat.waker {
		if s.canInject(in.waker) {
			return in.waker
		}
		if w := in.firstWoken(); s.canInject(w) {
			return w
		}
	}
	if !s.idlingBoostsThr(in) && (in.wrCoeff == 1 || s.wrBusy > 1 || !in.shortTtime) {
		return s.chooseForInjection(in)
	}
	return nil
}

// chooseForInjection is bfq_choose_bfqq_for_injection. Its "temporary
// limit 1" rule compares jiffies with last_idling_start_jiffies plus
// bfq_slice_idle, a time in ns: kept as the kernel has it, it practically
// never fires.
func (s *Scheduler) chooseForInjection(in *queue) *queue {
	limit := in.injectLimit
	alwaysInject := in.wrCoeff == 1 || !in.shortTtime
	if limit == 0 && in.lastServTimeNs == 0 && in.waitRequest && s.nowJ >= s.lastIdlingStartJ+s.sliceIdle {
		limit = 1
	}
	if s.inDriver >= limit {
		return nil
	}
	for _, q := range s.activeList {
		if !q.empty() && (alwaysInject || q.wrCoeff > 1) && s.servToCharge(q.nextRq, q) <= q.budgetLeft() {
			if !s.rotational && q.nextRq.sectors() >= sectThrNonrot && s.inDriver >= 1 {
				continue
			}
			s.rqsInjected = true
			return q
		}
	}
	return nil
}

// resetInjectLimit is bfq_reset_inject_limit.
func (s *Scheduler) resetInjectLimit(q *queue) {
	q.lastServTimeNs = 0
	s.waitedRq = nil
	if q.shortTtime {
		q.injectLimit = 0
	} else {
		q.injectLimit = 1
	}
	q.decreaseTimeJ = s.nowJ
}

// ---- weight raising ----

// endWr is bfq_bfqq_end_wr.
func (s *Scheduler) endWr(q *queue) {
	if q.wrCurMaxTime != s.wrRtMaxTimeJ {
		q.softRtNextStart = s.nowJ
	}
	if q.busy {
		s.wrBusy--
	}
	q.wrCoeff = 1
	q.wrCurMaxTime = 0
	q.lastWrStartFin = s.nowJ
	q.entity.prioChanged = true
}

// updateWrData is bfq_update_wr_data, on each dispatch of the in-service queue.
func (s *Scheduler) updateWrData(q *queue) {
	e := &q.entity
	if q.wrCoeff > 1 {
		lvl := logAll
		if !s.wrLoggedThisSlot {
			lvl = logDecisions
			s.wrLoggedThisSlot = true
		}
		if s.logLevel >= lvl {
			// "raising period dur %d/%d msec, old coeff %d, w %d(%d)"
			b := s.logStart(q, "raising period dur ")
			b = strconv.AppendInt(b, (s.jiffiesToMsecs(s.nowJ - q.lastWrStartFin)), 10)
			b = append(b, '/')
			b = strconv.AppendInt(b, (s.jiffiesToMsecs(q.wrCurMaxTime)), 10)
			b = append(b, " msec, old coeff "...)
			b = strconv.AppendInt(b, int64(q.wrCoeff), 10)
			b = append(b, ", w "...)
			b = strconv.AppendInt(b, int64(e.weight), 10)
			b = append(b, '(')
			b = strconv.AppendInt(b, int64(e.origWeight), 10)
			s.logEmit(q, append(b, ')'))
		}
		if q.inLargeBurst {
			s.endWr(q)
		} else if s.nowJ > q.lastWrStartFin+q.wrCurMaxTime {
			if q.wrCurMaxTime != s.wrRtMaxTimeJ || s.nowJ > q.wrStartAtSrt+s.wrDuration() {
				s.endWr(q)
			} else {
				// switch_back_to_interactive_wr
				q.wrCoeff = wrCoeffDefault
				q.wrCurMaxTime = s.wrDuration()
				q.lastWrStartFin = q.wrStartAtSrt
				e.prioChanged = true
			}
		}
		if q.wrCoeff > 1 && q.wrCurMaxTime != s.wrRtMaxTimeJ && q.serviceFromWr > maxServiceFromWr {
			s.endWr(q)
		}
	}
	if (e.weight > e.origWeight) != (q.wrCoeff > 1) {
		s.updateWeightPrio(e.st(), e)
	}
}

// handleIdleBusySwitch is bfq_bfqq_handle_idle_busy_switch.
func (s *Scheduler) handleIdleBusySwitch(q *queue, oldWrCoeff int, r *rqState, b *bic) bool {
	idleLong := q.dispatched == 0 && s.nowJ > q.budgetTimeoutJ+s.wrMinIdleTimeJ
	arrivedInTime := int64(s.now) <= q.tt.lastEndRequest+s.sliceIdle*3
	nonMergedOrStably := q.bic != nil || (b != nil && b.stablyMerged)
	inBurst := q.inLargeBurst
	defaultWeight := s.feat.wrAnyWeight || q.entity.newWeight == 40
	softRt := !q.totallySeeky() && !inBurst && s.nowJ > q.softRtNextStart && q.dispatched == 0 && defaultWeight
	interactive := !inBurst && idleLong && defaultWeight
	wrOrDeserves := s.lowLatency && (q.wrCoeff > 1 || (q.sync && nonMergedOrStably && (interactive || softRt)))

	// bfq_bfqq_update_budg_for_activation
	wantsToPreempt := false
	e := &q.entity
	if q.nonBlockingWaitRq && arrivedInTime && q.budgetLeft() > 0 {
		e.budget = min(q.budgetLeft(), q.maxBudget)
		e.service = 0
		wantsToPreempt = true
	} else {
		e.service = 0
		e.budget = max(q.maxBudget, s.servToCharge(q.nextRq, q))
		q.nonBlockingWaitRq = false
	}

	if s.feat.ioBoundByCount && !q.ioBound {
		if arrivedInTime {
			q.reqWithinTimer++
			if q.reqWithinTimer >= requestsWithinTimer {
				q.ioBound = true
			}
		} else {
			q.reqWithinTimer = 0
		}
	}

	if !q.justCreated && idleLong && s.nowJ > q.budgetTimeoutJ+s.msecsToJiffies(10000) {
		q.inLargeBurst = false
		s.burstListDel(q)
	}
	q.justCreated = false

	if s.lowLatency && s.nowJ > q.splitTimeJ+s.wrMinIdleTimeJ {
		// bfq_update_bfqq_wr_on_rq_arrival
		if oldWrCoeff == 1 && wrOrDeserves {
			if interactive {
				q.serviceFromWr = 0
				q.wrCoeff = wrCoeffDefault
				q.wrCurMaxTime = s.wrDuration()
			} else {
				q.wrStartAtSrt = s.smallestFromNow()
				q.wrCoeff = wrCoeffDefault * softrtWeightFactor
				q.wrCurMaxTime = s.wrRtMaxTimeJ
			}
			e.budget = min(e.budget, 2*s.minBudget())
		} else if oldWrCoeff > 1 {
			if interactive {
				q.wrCoeff = wrCoeffDefault
				q.wrCurMaxTime = s.wrDuration()
			} else if inBurst {
				q.wrCoeff = 1
			} else if softRt {
				if q.wrCurMaxTime != s.wrRtMaxTimeJ {
					q.wrStartAtSrt = q.lastWrStartFin
					q.wrCurMaxTime = s.wrRtMaxTimeJ
					q.wrCoeff = wrCoeffDefault * softrtWeightFactor
				}
				q.lastWrStartFin = s.nowJ
			}
		}
		if oldWrCoeff != q.wrCoeff {
			e.prioChanged = true
		}
	}
	q.lastIdleBklog = s.nowJ
	q.serviceFromBacklogged = 0
	q.softrtUpdate = false

	s.addBusy(q)

	if in := s.inService; in != nil &&
		((wantsToPreempt && q.wrCoeff >= in.wrCoeff) || s.higherClassOrWeight(q, in) || !s.betterToIdle(in)) &&
		s.root.sd.next != s.root.sd.inService { // next_queue_may_preempt
		s.expire(in, false, expPreempted)
	}
	return interactive
}

// higherClassOrWeight is bfq_bfqq_higher_class_or_weight.
func (s *Scheduler) higherClassOrWeight(q, in *queue) bool {
	if q.entity.class < in.entity.class {
		return true
	}
	if in.entity.class < q.entity.class {
		return false
	}
	var qw, iw int
	if in.entity.parent == q.entity.parent {
		qw, iw = q.entity.weight, in.entity.weight
	} else {
		qw, iw = q.entity.weight, in.entity.weight
		if q.entity.parent != nil {
			qw = q.entity.parent.weight
		}
		if in.entity.parent != nil {
			iw = in.entity.parent.weight
		}
	}
	return qw > iw
}

// ---- arrival ----

// updateThinktime is bfq_update_io_thinktime.
func (s *Scheduler) updateThinktime(q *queue) {
	if !s.feat.ttimeEveryArrival && (q.dispatched > 0 || q.busy) {
		return
	}
	tt := &q.tt
	el := int64(s.now) - tt.lastEndRequest
	lim := 2 * s.sliceIdle
	if el < 0 || el > lim { // u64 arithmetic: a negative gap wraps to huge
		el = lim
	}
	tt.samples = (7*tt.samples + 256) / 8
	tt.total = (7*tt.total + 256*uint64(el)) / 8
	tt.mean = (tt.total + 128) / tt.samples
}

// updateHasShortTtime is bfq_update_has_short_ttime.
func (s *Scheduler) updateHasShortTtime(q *queue, b *bic) {
	if !q.sync || q.entity.class == classIdle || s.sliceIdle == 0 {
		return
	}
	if s.nowJ <= q.splitTimeJ+s.wrMinIdleTimeJ {
		return
	}
	if q.warmTtime {
		if q.tt.samples <= 80 {
			return
		}
		q.warmTtime = false
	}
	thr := uint64(s.sliceIdle >> 1)
	if s.feat.ttimeFullSlice {
		thr = uint64(s.sliceIdle)
	}
	short := true
	if (b != nil && b.exited) || (q.tt.samples > 80 && q.tt.mean > thr) {
		short = false
	}
	changed := short != q.shortTtime
	q.shortTtime = short
	if changed {
		if s.logLevel >= logAll {
			s.logq(logAll, q, "update_has_short_ttime: %d", b2i(short))
		}
		if q.lastServTimeNs == 0 && (s.nowJ >= q.decreaseTimeJ+s.msecsToJiffies(100) || !short) {
			s.resetInjectLimit(q)
		}
	}
}

// rqSeeky is BFQ_RQ_SEEKY.
func (s *Scheduler) rqSeeky(last uint64, r *rqState) bool {
	var d uint64
	if last != 0 {
		p := r.pos()
		if p > last {
			d = p - last
		} else {
			d = last - p
		}
	}
	return d > seekThr && (s.rotational || r.sectors() < sectThrNonrot)
}

// updateSeektime is bfq_update_io_seektime.
func (s *Scheduler) updateSeektime(q *queue, r *rqState) {
	q.seekHistory <<= 1
	if s.rqSeeky(q.lastRequestPos, r) {
		q.seekHistory |= 1
	}
	if q.wrCoeff > 1 && q.wrCurMaxTime == s.wrRtMaxTimeJ && q.totallySeeky() {
		if s.nowJ > q.wrStartAtSrt+s.wrDuration() {
			s.endWr(q)
		} else {
			q.wrCoeff = wrCoeffDefault
			q.wrCurMaxTime = s.wrDuration()
			q.lastWrStartFin = q.wrStartAtSrt
			q.entity.prioChanged = true
		}
	}
}

// updateIOIntensity is bfq_update_io_intensity (≥ 5.12).
func (s *Scheduler) updateIOIntensity(q *queue) {
	now := int64(s.now)
	tot := now - q.ioStartTime
	if q.empty() && q.dispatched == 0 {
		q.totIdleTime += now - q.tt.lastEndRequest
	}
	if q.justCreated {
		return
	}
	q.ioBound = !(q.totIdleTime*5 > tot)
	if tot > 200000000 {
		q.ioStartTime = now - tot>>1
		q.totIdleTime >>= 1
	}
}

// updatedNextReq is bfq_updated_next_req.
func (s *Scheduler) updatedNextReq(q *queue) {
	if q.nextRq == nil || q == s.inService {
		return
	}
	nb := max(q.maxBudget, s.servToCharge(q.nextRq, q), q.entity.service)
	if q.entity.budget != nb {
		q.entity.budget = nb
		if s.logLevel >= logAll {
			s.logq(logAll, q, "updated next rq: new budget %d", nb)
		}
		s.requeueQueue(q, false)
	}
}

// addRequest is bfq_add_request.
func (s *Scheduler) addRequest(r *rqState, b *bic) {
	q := r.q
	oldWr := q.wrCoeff
	interactive := false
	if s.logLevel >= logAll {
		s.logq(logAll, q, "add_request %d", b2i(r.sync()))
	}
	q.queuedN[b2i(r.sync())]++
	s.queued++
	// 6.x: for a sync queue whose process has this request only allocated
	// (RQ_BIC(rq)->requests <= 1); before, for a sync queue left empty.
	if q.sync && ((s.feat.waker && (b == nil || b.requests <= 1)) || (!s.feat.waker && q.empty())) {
		s.injectSampling(q)
	}
	if q.sync && !s.feat.ioBoundByCount {
		s.updateIOIntensity(q)
	}
	q.sortInsert(r)
	r.inSched = true
	prev := q.nextRq
	q.nextRq = s.chooseReq(q.nextRq, r, s.lastPosition)
	if !s.nonrotWithQueueing && prev != q.nextRq {
		s.posTreeAddMove(q)
	}
	if !q.busy {
		interactive = s.handleIdleBusySwitch(q, oldWr, r, b)
	} else {
		if s.lowLatency && oldWr == 1 && !r.sync() && s.nowJ > q.lastWrStartFin+s.wrMinInterArrAsync {
			q.wrCoeff = wrCoeffDefault
			q.wrCurMaxTime = s.wrDuration()
			s.wrBusy++
			q.entity.prioChanged = true
		}
		if prev != q.nextRq {
			s.updatedNextReq(q)
		}
	}
	if s.lowLatency && (oldWr == 1 || q.wrCoeff == 1 || interactive) {
		q.lastWrStartFin = s.nowJ
	}
}

// rqEnqueued is bfq_rq_enqueued.
func (s *Scheduler) rqEnqueued(q *queue, r *rqState) {
	q.lastRequestPos = r.rq.End()
	if q == s.inService && q.waitRequest {
		small := q.queuedN[b2i(r.sync())] == 1 && r.sectors() < 32
		bt := s.budgetTimeout(q)
		if small && s.idlingBoostsThr(q) && !bt {
			return
		}
		q.waitRequest = false
		s.cancelIdleTimer()
		if bt {
			s.expire(q, false, expBudgetTimeout)
		}
	}
}

// Insert is bfq_insert_request: bfq_init_rq (queue lookup, creation,
// split, burst, stable merge), then __bfq_insert_request (cooperator
// merge, think time, seekiness, bfq_add_request, fifo, bfq_rq_enqueued).
func (s *Scheduler) Insert(now trace.Time, rq *replay.Request) {
	s.setNow(now)
	s.noteComm(rq)
	b := s.bicFor(rq.PID, rq.Cgroup)
	sync := rq.IsSync()
	q := s.queueForInsert(b, sync, rq.PID)
	r := s.newRqState(rq, q)
	r.bic = b
	b.requests++
	rq.Sched = r
	if n := s.setupCooperator(q, r.pos(), true, b); n != nil {
		if b.q[1] == q {
			for q != n && q.newBfqq != nil {
				q = s.mergeQueues(b, q)
			}
		}
		q.justCreated = false
		q = n
		r.q = q
	}
	q.lastPID = rq.PID
	s.updateThinktime(q)
	s.updateHasShortTtime(q, b)
	s.updateSeektime(q, r)
	s.requestAllocated(r, q)
	s.addRequest(r, b)
	r.fifoTime = int64(now) + s.fifoExpire[b2i(r.sync())]
	q.fifoAppend(r)
	s.rqEnqueued(q, r)
	s.h.Kick()
}

// newRqState returns a fresh per-request state for rq in q.
func (s *Scheduler) newRqState(rq *replay.Request, q *queue) *rqState {
	var r *rqState
	if n := len(s.rqFree); n > 0 {
		r = s.rqFree[n-1]
		s.rqFree = s.rqFree[:n-1]
		r.rq, r.q = rq, q
	} else {
		r = &rqState{rq: rq, q: q}
	}
	s.seq++
	r.seq = s.seq
	return r
}

// HasWork is bfq_has_work.
func (s *Scheduler) HasWork(now trace.Time) bool { return s.queued > 0 || len(s.dispatchList) > 0 }

// Dispatch is bfq_dispatch_request / __bfq_dispatch_request.
func (s *Scheduler) Dispatch(now trace.Time) *replay.Request {
	s.setNow(now)
	if len(s.dispatchList) > 0 {
		return s.dispatchAtHead()
	}
	if s.logLevel >= logAll {
		s.logd(logAll, "dispatch requests: %d busy queues", s.totBusy())
	}
	if s.totBusy() == 0 {
		return nil
	}
	if s.strictGuarantees && s.inDriver > 0 {
		return nil
	}
	q := s.selectQueue()
	if q == nil {
		return nil
	}
	r := s.dispatchFromQueue(q)
	s.inDriver++
	s.totalDispatched++
	return r.rq
}

// dispatchFromQueue is bfq_dispatch_rq_from_bfqq.
func (s *Scheduler) dispatchFromQueue(q *queue) *rqState {
	r := q.nextRq
	charge := s.servToCharge(r, q)
	s.served(q, charge)
	if s.logLevel >= logAll {
		s.logq(logAll, q, "bfqq_served %d secs", charge)
	}
	if q == s.inService && s.waitDispatch {
		s.waitDispatch = false
		s.waitedRq = r
	}
	// bfq_dispatch_remove
	q.dispatched++
	s.updatePeakRate(r)
	s.removeRequest(r)
	if q != s.inService {
		return r
	}
	s.updateWrData(q)
	if s.totBusy() > 1 && q.entity.class == classIdle {
		s.expire(q, false, expBudgetExhausted)
	}
	return r
}

// removeRequest is bfq_remove_request.
func (s *Scheduler) removeRequest(r *rqState) {
	q := r.q
	if q.nextRq == r {
		q.nextRq = s.findNextRq(q, r)
		s.updatedNextReq(q)
	}
	q.fifoDelete(r)
	q.queuedN[b2i(r.sync())]--
	s.queued--
	q.sortDelete(r)
	r.inSched = false
	if q.empty() {
		q.nextRq = nil
		if q.busy && q != s.inService {
			s.delBusy(q, false)
			q.entity.budget, q.entity.service = 0, 0
		}
		s.posTreeRemove(q)
	} else if !s.nonrotWithQueueing {
		s.posTreeAddMove(q)
	}
}

// ---- peak rate (bfq_update_peak_rate, bfq_update_rate_reset) ----

func (s *Scheduler) resetRateComputation(r *rqState) {
	if r != nil {
		s.lastDispatch = int64(s.now)
		s.firstDispatch = int64(s.now)
		s.peakRateSamples = 1
		s.seqSamples = 0
		s.totSectors = uint64(r.sectors())
		s.lastRqMaxSize = uint32(r.sectors())
	} else {
		s.peakRateSamples = 0
	}
}

func (s *Scheduler) updateRateReset(r *rqState) {
	if s.peakRateSamples >= rateMinSamples && s.deltaFromFirst >= rateMinIntervalNs {
		s.deltaFromFirst = max(s.deltaFromFirst, s.lastCompletion-s.firstDispatch)
		us := uint64(s.deltaFromFirst / 1000)
		if us == 0 {
			us = 1
		}
		rate := uint32((s.totSectors << rateShift) / us)
		if !((s.seqSamples < (3*s.peakRateSamples)>>2 && rate <= s.peakRate) || rate > 20<<rateShift) {
			w := (9 * s.seqSamples) / s.peakRateSamples
			w = uint32(min(uint64(8), uint64(w)*uint64(s.deltaFromFirst)/rateRefIntervalNs))
			div := 10 - w
			s.peakRate *= div - 1
			s.peakRate /= div
			rate /= div
			s.peakRate += rate
			if s.peakRate < 1 {
				s.peakRate = 1
			}
			if s.userMaxBudget == 0 { // update_thr_responsiveness_params
				s.maxBudget = s.calcMaxBudget()
				if s.logLevel >= logAll {
					s.logd(logAll, "new max_budget = %d", s.maxBudget)
				}
			}
		}
	}
	s.resetRateComputation(r)
}

func (s *Scheduler) updatePeakRate(r *rqState) {
	now := int64(s.now)
	if s.peakRateSamples == 0 {
		s.resetRateComputation(r)
	} else {
		doReset := false
		if now-s.lastDispatch > 100000000 && s.inDriver == 0 {
			doReset = true
		} else {
			s.peakRateSamples++
			if (s.inDriver > 0 || now-s.lastCompletion < minTTns) && !s.rqSeeky(s.lastPosition, r) {
				s.seqSamples++
			}
			s.totSectors += uint64(r.sectors())
			if s.peakRateSamples%32 != 0 {
				s.lastRqMaxSize = max(s.lastRqMaxSize, uint32(r.sectors()))
			} else {
				s.lastRqMaxSize = uint32(r.sectors())
			}
			s.deltaFromFirst = now - s.firstDispatch
			doReset = s.deltaFromFirst >= rateRefIntervalNs
		}
		if doReset {
			s.updateRateReset(r)
		}
	}
	s.lastPosition = r.rq.End()
	if r.q == s.inService {
		s.inServLastPos = s.lastPosition
	}
	s.lastDispatch = now
}

// ---- completion ----

// updateHwTag is bfq_update_hw_tag.
func (s *Scheduler) updateHwTag() {
	q := s.inService
	s.maxRqInDriver = max(s.maxRqInDriver, s.inDriver)
	if s.hwTag == 1 {
		return
	}
	if s.inDriver+s.queued <= hwQueueThreshold {
		return
	}
	if q != nil && q.shortTtime && q.dispatched+q.queuedN[0]+q.queuedN[1] < hwQueueThreshold && s.inDriver < hwQueueThreshold {
		return
	}
	s.hwTagSamples++
	if s.hwTagSamples-1 < hwQueueSamples {
		return
	}
	s.hwTag = b2i(s.maxRqInDriver > hwQueueThreshold)
	s.maxRqInDriver = 0
	s.hwTagSamples = 0
	s.nonrotWithQueueing = !s.rotational && s.hwTag == 1
}

// Completed is bfq_finish_requeue_request → bfq_completed_request.
func (s *Scheduler) Completed(now trace.Time, rq *replay.Request) {
	s.setNow(now)
	r := rqOf(rq)
	if r == nil {
		return
	}
	q := r.q
	if r == s.waitedRq && s.feat.adaptiveInject {
		s.updateInjectLimit(q)
	}
	if r.bic != nil {
		r.bic.requests--
	}
	s.requestFreed(r)
	// The request leaves BFQ: recycle its state (nothing points to it once
	// dispatched: it left the sort list, the fifo and next_rq).
	rq.Sched = nil
	*r = rqState{}
	s.rqFree = append(s.rqFree, r)
	s.updateHwTag()
	s.inDriver--
	q.dispatched--
	if q.dispatched == 0 && !q.busy {
		q.budgetTimeoutJ = s.nowJ
		s.delInGroupsPending(q)
		s.weightsTreeRemove(q)
	}
	q.tt.lastEndRequest = int64(now)
	deltaUs := (int64(now) - s.lastCompletion) / 1000
	if deltaUs > minTTns/1000 && (uint64(s.lastRqMaxSize)<<rateShift)/uint64(deltaUs) < 1<<(rateShift-10) {
		s.updateRateReset(nil)
	}
	s.lastCompletion = int64(now)
	// Shared queues are not taken as wakers.
	if !q.coop {
		s.lastCompletedRqBfqq = q
	} else {
		s.lastCompletedRqBfqq = nil
	}
	if q.softrtUpdate && q.dispatched == 0 && q.empty() && q.wrCoeff != wrCoeffDefault {
		q.softRtNextStart = s.softrtNextStart(q)
	}
	if s.inService == q {
		if s.mustIdle(q) {
			if q.dispatched == 0 {
				s.armSliceTimer()
			}
			return
		} else if s.mayExpireForBudgTimeout(q) {
			s.expire(q, false, expBudgetTimeout)
		} else if q.empty() && (q.dispatched == 0 || !s.betterToIdle(q)) {
			s.expire(q, false, expNoMoreRequests)
		}
	}
	if s.inDriver == 0 {
		s.scheduleDispatch()
	}
}

// Timer is bfq_idle_slice_timer → bfq_idle_slice_timer_body.
func (s *Scheduler) Timer(now trace.Time, id int) {
	s.setNow(now)
	if id != idleTimerID {
		return
	}
	q := s.idleTimerQ
	s.idleTimerQ = nil
	if q == nil || q != s.inService {
		return
	}
	q.waitRequest = false
	reason := -1
	if s.budgetTimeout(q) {
		reason = expBudgetTimeout
	} else if q.queuedN[0] == 0 && q.queuedN[1] == 0 {
		reason = expTooIdle
	}
	if reason >= 0 {
		s.expire(q, true, reason)
	}
	s.scheduleDispatch()
}

// ProcessExited is bfq_exit_icq: the process's queues lose their process
// reference; an in-service sync queue is expired (bfq_exit_bfqq).
func (s *Scheduler) ProcessExited(now trace.Time, pid uint32) {
	s.setNow(now)
	b := s.bics[pid]
	if b == nil || b.exited {
		return
	}
	b.exited = true
	for i := 1; i >= 0; i-- {
		q := b.q[i]
		if q == nil {
			continue
		}
		b.q[i] = nil
		if q == s.inService {
			s.expireInner(q, expBudgetTimeout)
			s.scheduleDispatch()
		}
		s.putCooperator(q)
		s.releaseProcessRef(q)
	}
}

// releaseProcessRef is bfq_release_process_ref.
func (s *Scheduler) releaseProcessRef(q *queue) {
	if q.busy && q.empty() && q != s.inService {
		s.delBusy(q, false)
	}
	s.reassignLastBfqq(q, nil)
	if q.procRefs > 0 {
		q.procRefs--
	}
	if q.procRefs == 0 {
		q.bic = nil
	}
}

// putCooperator is bfq_put_cooperator.
func (s *Scheduler) putCooperator(q *queue) {
	for n := q.newBfqq; n != nil; n = n.newBfqq {
		if n.procRefs > 0 {
			n.procRefs--
		}
	}
}

// ---- request merging hooks (elevator) ----

// bioQueue returns the queue a bio would go to (bfqd->bio_bfqq), or nil.
func (s *Scheduler) bioQueue(bio *replay.Bio) (*queue, *bic) {
	b := s.bics[bio.PID]
	if b == nil {
		return nil, nil
	}
	sync := !bio.Cat.IsWrite() || bio.Cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
	return b.q[b2i(sync)], b
}

// AllowMerge is bfq_allow_bio_merge: no sync bio into an async request,
// a pending cooperator merge is executed first, and only the bio's own
// queue may take it.
func (s *Scheduler) AllowMerge(rq *replay.Request, bio *replay.Bio) bool {
	r := rqOf(rq)
	if r == nil {
		return false
	}
	sync := !bio.Cat.IsWrite() || bio.Cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
	if sync && !rq.IsSync() {
		return false
	}
	q, b := s.bioQueue(bio)
	if q == nil {
		return false
	}
	if n := s.setupCooperator(q, bio.Sector, false, b); n != nil {
		if b.q[1] == q {
			for q != n && q.newBfqq != nil {
				q = s.mergeQueues(b, q)
			}
		}
		q = n
	}
	return q == r.q
}

// RequestMerge is bfq_request_merge: the request of the bio's queue that
// starts where the bio ends (elv_rb_find).
func (s *Scheduler) RequestMerge(now trace.Time, bio *replay.Bio) *replay.Request {
	s.setNow(now)
	q, _ := s.bioQueue(bio)
	if q == nil {
		return nil
	}
	end := bio.End()
	for _, r := range q.sort {
		if r.pos() == end {
			return r.rq
		}
		if r.pos() > end {
			break
		}
	}
	return nil
}

// LatterRequest is elv_rb_latter_request (bfq's next_request): the next
// request in sector order on rq's own queue's sort tree.
func (s *Scheduler) LatterRequest(rq *replay.Request) *replay.Request {
	r := rqOf(rq)
	if r == nil || r.q == nil {
		return nil
	}
	if i := r.q.sortIndex(r); i >= 0 && i+1 < len(r.q.sort) {
		return r.q.sort[i+1].rq
	}
	return nil
}

// FormerRequest is elv_rb_former_request (bfq's former_request) on rq's
// own queue's sort tree.
func (s *Scheduler) FormerRequest(rq *replay.Request) *replay.Request {
	r := rqOf(rq)
	if r == nil || r.q == nil {
		return nil
	}
	if i := r.q.sortIndex(r); i > 0 {
		return r.q.sort[i-1].rq
	}
	return nil
}

// RequestMerged is bfq_request_merged: a front merge re-sorts the request.
func (s *Scheduler) RequestMerged(now trace.Time, rq *replay.Request, how replay.Merge) {
	s.setNow(now)
	r := rqOf(rq)
	if r == nil || how != replay.FrontMerge {
		return
	}
	q := r.q
	i := q.sortIndex(r)
	if i > 0 && r.pos() < q.sort[i-1].pos() {
		q.sortDelete(r)
		q.sortInsert(r)
		prev := q.nextRq
		q.nextRq = s.chooseReq(q.nextRq, r, s.lastPosition)
		if prev != q.nextRq {
			s.updatedNextReq(q)
			if !s.nonrotWithQueueing {
				s.posTreeAddMove(q)
			}
		}
	}
}

// RequestsMerged is bfq_requests_merged: rq inherits next's older
// fifo_time, and next leaves BFQ (bfq_remove_request).
func (s *Scheduler) RequestsMerged(now trace.Time, rq, next *replay.Request) {
	s.setNow(now)
	r, n := rqOf(rq), rqOf(next)
	if n == nil {
		return
	}
	if r != nil && r.q == n.q && r.inFifo && n.inFifo && n.fifoTime < r.fifoTime {
		r.q.fifoReplace(n, r)
		r.fifoTime = n.fifoTime
	}
	if r != nil && r.q.nextRq == n {
		r.q.nextRq = r
	}
	if n.inSched {
		s.removeRequest(n)
	}
	// next is freed (blk_mq_free_request -> bfq_finish_requeue_request):
	// not started, it only leaves its bic's count.
	if n.bic != nil {
		n.bic.requests--
		n.bic = nil
	}
	s.requestFreed(n)
}

// LimitDepth is bfq_limit_depth. The depths are bfq_update_depths': sync
// reads have the full depth; async I/O at most half of the scheduler tags,
// sync writes three quarters; while a queue is weight-raised
// (wr_busy_queues > 0) ~18% and ~37% ((depth*3)>>4, (depth*6)>>4). Then,
// with the entity-request-limit feature, bfqq_request_over_limit: when the
// process's queue for the bio, or a group above it, already has its share
// of that limit allocated, the depth drops to 1 (fs-bfq-writeback: the
// flusher's async queue, weight 40 in the root group beside the reader's
// group of weight 750, "too many requests: allocated 6 limit 6 level 0"
// at 1.26, 2.17 and 2.27 s).
//
// The result is a shallow depth in tags of the whole bitmap, as
// data->shallow_depth is since Linux 6.17 (42e6c6ce03fd: async_depths
// from nr_requests, and an entity over its limit gets 1 tag, bit 0 of the
// first word: replay's tag map). With feature shallow-depth-per-word (the
// kernels before), the depths are word_depths, per sbitmap word of
// 1<<shift bits, and the limit is (nr_requests*depth)>>shift; the result
// is then (nr_requests*depth)>>shift, which replay's tag map spreads back
// over the words as depth bits each (1 a word for an entity over its
// limit: 4 tags of 256). 0 for no limit.
func (s *Scheduler) LimitDepth(now trace.Time, bio *replay.Bio) int {
	write := bio.Cat.IsWrite()
	sync := !write || bio.Cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
	nr := s.h.Queue().NrRequests
	shift := replay.TagShift(nr)
	perWord := s.feat.shallowPerWord
	full := nr // the depth's unit: tags of the whole bitmap
	if perWord {
		full = 1 << shift // bits of one word
	}
	d, limit := 0, nr
	if !sync || write {
		switch wr := s.wrBusy > 0; {
		case !wr && !sync:
			d = max(full>>1, 1)
		case !wr:
			d = max((full*3)>>2, 1)
		case !sync:
			d = max((full*3)>>4, 1)
		default:
			d = max((full*6)>>4, 1)
		}
		limit = d
		if perWord {
			limit = (nr * d) >> shift
		}
	}
	if b := s.bics[bio.PID]; s.feat.entityLimit && b != nil && b.cgroup == bio.Cgroup {
		if q := b.q[b2i(sync)]; q != nil && s.requestOverLimit(q, limit) {
			d = 1
		}
	}
	if d == 0 {
		return 0
	}
	if perWord {
		return max((nr*d)>>shift, 1)
	}
	return d
}

// ioprioBENr is IOPRIO_BE_NR, the best-effort priority levels.
const ioprioBENr = 8

// requestOverLimit is bfqq_request_over_limit: from the top group down to
// q, each entity's share of limit is limit*weight/wsum rounded to the
// closest (wsum: its service tree's; for q, every class up to its own,
// each earlier one weighing IOPRIO_BE_NR times more), and the first entity
// with at least its share allocated is over the limit. An entity not on a
// service tree or in service is not limited.
func (s *Scheduler) requestOverLimit(q *queue, limit int) bool {
	var chain [16]*entity
	n := 0
	for e := &q.entity; e != nil; e = e.parent {
		if !e.onSt {
			return false
		}
		if n == len(chain) {
			return false
		}
		chain[n] = e
		n++
	}
	for level := n - 1; level >= 0; level-- {
		e := chain[level]
		var wsum uint64
		if level > 0 {
			wsum = e.st().wsum
		} else {
			for i := 0; i <= e.class; i++ {
				wsum = wsum*ioprioBENr + e.sd.st[i].wsum
			}
		}
		if wsum == 0 {
			continue
		}
		limit = int((uint64(limit)*uint64(e.weight) + wsum/2) / wsum)
		if e.allocated >= limit {
			return true
		}
	}
	return false
}

// requestAllocated is bfqq_request_allocated: r counts in q's entity and
// every group entity above it until requestFreed.
func (s *Scheduler) requestAllocated(r *rqState, q *queue) {
	r.allocQ = q
	for e := &q.entity; e != nil; e = e.parent {
		e.allocated++
	}
}

// requestFreed is bfqq_request_freed for r, if it was counted.
func (s *Scheduler) requestFreed(r *rqState) {
	if q := r.allocQ; q != nil {
		for e := &q.entity; e != nil; e = e.parent {
			e.allocated--
		}
		r.allocQ = nil
	}
}

package bfq

// B-WF2Q+ (block/bfq-wf2q.c): entities, service trees, virtual time.
//
// Virtual times are unsigned 64-bit and compared wrap-safely as the kernel
// does (bfq_gt). Service is in sectors; Δ(s, w) = (s << WFQ_SERVICE_SHIFT) / w
// (bfq_delta). Trees are sorted slices: an active tree ordered by (finish,
// insertion sequence) so that ties go to the earlier-inserted entity (the
// kernel inserts equal keys to the right), an idle tree ordered the same way.
// The number of entities per tree is the number of busy queues and groups
// of one parent, so linear scans stand in for the augmented rb-trees.

const (
	wfqServiceShift = 22 // WFQ_SERVICE_SHIFT

	classRT   = 0 // IOPRIO_CLASS_RT - 1
	classBE   = 1 // IOPRIO_CLASS_BE - 1
	classIdle = 2 // IOPRIO_CLASS_IDLE - 1
	nClasses  = 3 // BFQ_IOPRIO_CLASSES

	treeNone   = 0
	treeActive = 1
	treeIdle   = 2
)

// bfqGT is bfq_gt: a > b, wrap-safe.
func bfqGT(a, b uint64) bool { return int64(a-b) > 0 }

// bfqDelta is bfq_delta: service (sectors) to virtual time for weight w.
func bfqDelta(service uint64, weight uint64) uint64 {
	if weight == 0 {
		return 0
	}
	return (service << wfqServiceShift) / weight
}

// entity is a struct bfq_entity: a queue or a non-root group in B-WF2Q+.
type entity struct {
	start, finish uint64 // virtual timestamps
	budget        int    // sectors
	service       int    // sectors received in the current slot

	weight, origWeight, newWeight int
	prioChanged                   bool
	class                         int // index into service_tree

	onSt bool // on_st_or_in_serv: counted in its tree's wsum

	allocated int // requests inserted and not finished in it or below it (entity->allocated)
	tree      int // treeNone, treeActive, treeIdle
	seq       uint64

	parent *entity    // group entity of the parent, nil under the root
	sd     *schedData // sched_data this entity is scheduled in
	mySd   *schedData // groups only: the children's sched_data
	q      *queue     // queues only
	g      *group     // groups only

	// inGroupsWithPendingReqs: ≤ 6.1, on group entities; ≥ 6.2, on queue
	// entities (entity.in_groups_with_pending_reqs).
	inGroupsWithPendingReqs bool
}

// serviceTree is a struct bfq_service_tree.
type serviceTree struct {
	active []*entity // ordered by (finish, seq)
	idle   []*entity // ordered by (finish, seq); first_idle = idle[0], last_idle = last
	vtime  uint64
	wsum   uint64
}

// schedData is a struct bfq_sched_data.
type schedData struct {
	st                   [nClasses]serviceTree
	inService            *entity
	next                 *entity
	classIdleLastService int64 // jiffies
	owner                *group
}

func (e *entity) st() *serviceTree { return &e.sd.st[e.class] }

func entityLess(a, b *entity) bool {
	if a.finish != b.finish {
		return bfqGT(b.finish, a.finish)
	}
	return a.seq < b.seq
}

func insertSorted(s []*entity, e *entity) []*entity {
	i := len(s)
	for i > 0 && entityLess(e, s[i-1]) {
		i--
	}
	s = append(s, nil)
	copy(s[i+1:], s[i:])
	s[i] = e
	return s
}

func removeEntity(s []*entity, e *entity) []*entity {
	for i, x := range s {
		if x == e {
			copy(s[i:], s[i+1:])
			s[len(s)-1] = nil
			return s[:len(s)-1]
		}
	}
	return s
}

// calcFinish is bfq_calc_finish.
func (e *entity) calcFinish(service int) {
	e.finish = e.start + bfqDelta(uint64(service), uint64(e.weight))
}

// activeInsert is bfq_active_insert (plus the active_list of queues and
// the group's active_entities count).
func (s *Scheduler) activeInsert(st *serviceTree, e *entity) {
	s.seq++
	e.seq = s.seq
	st.active = insertSorted(st.active, e)
	e.tree = treeActive
	if e.q != nil {
		s.activeListAdd(e.q)
	}
	if g := e.sd.owner; g != nil && g != s.root {
		g.activeEntities++
	}
}

// activeExtract is bfq_active_extract.
func (s *Scheduler) activeExtract(st *serviceTree, e *entity) {
	st.active = removeEntity(st.active, e)
	e.tree = treeNone
	if e.q != nil {
		s.activeListDel(e.q)
	}
	if g := e.sd.owner; g != nil && g != s.root {
		g.activeEntities--
	}
}

func (s *Scheduler) idleInsert(st *serviceTree, e *entity) {
	s.seq++
	e.seq = s.seq
	st.idle = insertSorted(st.idle, e)
	e.tree = treeIdle
}

func (s *Scheduler) idleExtract(st *serviceTree, e *entity) {
	st.idle = removeEntity(st.idle, e)
	e.tree = treeNone
}

// forgetEntity is bfq_forget_entity.
func (s *Scheduler) forgetEntity(st *serviceTree, e *entity) {
	e.onSt = false
	st.wsum -= uint64(e.weight)
}

// forgetIdle is bfq_forget_idle, kernel quirk included: with an empty
// active tree it can only lower or keep vtime.
func (s *Scheduler) forgetIdle(st *serviceTree) {
	if len(st.active) == 0 && len(st.idle) > 0 {
		last := st.idle[len(st.idle)-1]
		if !bfqGT(last.finish, st.vtime) {
			st.vtime = last.finish
		}
	}
	if len(st.idle) > 0 {
		first := st.idle[0]
		if !bfqGT(first.finish, st.vtime) {
			s.idleExtract(st, first)
			s.forgetEntity(st, first)
		}
	}
}

// updateWeightPrio is __bfq_entity_update_weight_prio: applies a pending
// weight change (weight raising start or end); classes never change here
// because the capture carries no ioprio.
func (s *Scheduler) updateWeightPrio(st *serviceTree, e *entity) *serviceTree {
	if !e.prioChanged {
		return st
	}
	st.wsum -= uint64(e.weight)
	if e.newWeight != e.origWeight {
		e.origWeight = e.newWeight
	}
	e.prioChanged = false
	prev := e.weight
	nw := e.origWeight
	if e.q != nil {
		nw *= e.q.wrCoeff
	}
	if prev != nw && e.q != nil {
		s.weightsTreeRemoveCounter(e.q)
	}
	e.weight = nw
	if prev != nw && e.q != nil && e.q.wrCoeff == 1 {
		s.weightsTreeAdd(e.q)
	}
	st.wsum += uint64(e.weight)
	return st
}

// updateFinTimeEnqueue is bfq_update_fin_time_enqueue.
func (s *Scheduler) updateFinTimeEnqueue(e *entity, st *serviceTree, backshifted bool) {
	st = s.updateWeightPrio(st, e)
	e.calcFinish(e.budget)
	if backshifted && bfqGT(st.vtime, e.finish) {
		delta := st.vtime - e.finish
		if e.q != nil {
			delta /= uint64(e.q.wrCoeff)
		}
		e.start += delta
		e.finish += delta
	}
	s.activeInsert(st, e)
}

// activateEntity is __bfq_activate_entity.
func (s *Scheduler) activateEntity(e *entity, nonBlockingWaitRq bool) {
	st := e.st()
	backshifted := false
	minVstart := st.vtime
	if nonBlockingWaitRq && bfqGT(st.vtime, e.finish) {
		backshifted = true
		minVstart = e.finish
	}
	if e.tree == treeIdle {
		s.idleExtract(st, e)
		if bfqGT(minVstart, e.finish) {
			e.start = minVstart
		} else {
			e.start = e.finish
		}
	} else {
		e.start = minVstart
		st.wsum += uint64(e.weight)
		e.onSt = true
	}
	if e.g != nil && s.feat.legacyGroupCount && !e.inGroupsWithPendingReqs {
		// ≤ 6.1: a group is counted when its entity is activated.
		e.inGroupsWithPendingReqs = true
		s.numGroupsWithPendingReqs++
	}
	s.updateFinTimeEnqueue(e, st, backshifted)
}

// requeueEntity is __bfq_requeue_entity.
func (s *Scheduler) requeueEntity(e *entity) {
	st := e.st()
	if e == e.sd.inService {
		e.calcFinish(e.service)
		e.start = e.finish
		if e.tree == treeActive {
			s.activeExtract(st, e)
		}
	} else {
		s.activeExtract(st, e)
	}
	s.updateFinTimeEnqueue(e, st, false)
}

// activateRequeueOne is __bfq_activate_requeue_entity.
func (s *Scheduler) activateRequeueOne(e *entity, nonBlockingWaitRq bool) {
	if e.sd.inService == e || e.tree == treeActive {
		s.requeueEntity(e)
	} else {
		s.activateEntity(e, nonBlockingWaitRq)
	}
}

// activateRequeueEntity is bfq_activate_requeue_entity.
func (s *Scheduler) activateRequeueEntity(e *entity, nonBlockingWaitRq, requeue, expiration bool) {
	for ; e != nil; e = e.parent {
		sd := e.sd
		s.activateRequeueOne(e, nonBlockingWaitRq)
		if !s.updateNextInService(sd, e, expiration) && !requeue {
			break
		}
	}
}

// deactivateOne is __bfq_deactivate_entity.
func (s *Scheduler) deactivateOne(e *entity, insIntoIdleTree bool) bool {
	if !e.onSt {
		return false
	}
	sd := e.sd
	st := e.st()
	isInService := e == sd.inService
	e.calcFinish(e.service)
	if isInService {
		sd.inService = nil
	} else {
		e.service = 0
	}
	if e.tree == treeActive {
		s.activeExtract(st, e)
	} else if !isInService && e.tree == treeIdle {
		s.idleExtract(st, e)
	}
	if !insIntoIdleTree || !bfqGT(e.finish, st.vtime) {
		s.forgetEntity(st, e)
	} else {
		s.idleInsert(st, e)
	}
	return true
}

// deactivateEntity is bfq_deactivate_entity.
func (s *Scheduler) deactivateEntity(e *entity, insIntoIdleTree, expiration bool) {
	var parent *entity
	for ; e != nil; e = parent {
		parent = e.parent
		sd := e.sd
		if !s.deactivateOne(e, insIntoIdleTree) {
			return
		}
		if sd.next == e {
			s.updateNextInService(sd, nil, expiration)
		}
		if sd.next != nil || sd.inService != nil {
			break
		}
		insIntoIdleTree = true
	}
	for e = parent; e != nil; e = e.parent {
		s.requeueEntity(e)
		if !s.updateNextInService(e.sd, e, expiration) && !expiration {
			break
		}
	}
}

// calcVtimeJump is bfq_calc_vtime_jump: max(vtime, min start over active).
func calcVtimeJump(st *serviceTree) uint64 {
	minStart := st.active[0].start
	for _, e := range st.active[1:] {
		if bfqGT(minStart, e.start) {
			minStart = e.start
		}
	}
	if bfqGT(minStart, st.vtime) {
		return minStart
	}
	return st.vtime
}

// firstActiveEntity is bfq_first_active_entity: the smallest finish among
// the entities with start <= vtime.
func firstActiveEntity(st *serviceTree, vtime uint64) *entity {
	for _, e := range st.active {
		if !bfqGT(e.start, vtime) {
			return e
		}
	}
	return nil
}

// lookupNextInTree is __bfq_lookup_next_entity.
func (s *Scheduler) lookupNextInTree(st *serviceTree, inService bool) *entity {
	if len(st.active) == 0 {
		return nil
	}
	nv := calcVtimeJump(st)
	if !inService && nv > st.vtime { // bfq_update_vtime
		st.vtime = nv
		s.forgetIdle(st)
	}
	return firstActiveEntity(st, nv)
}

// lookupNextEntity is bfq_lookup_next_entity, with the IDLE-class guard
// (BFQ_CL_IDLE_TIMEOUT = HZ/5).
func (s *Scheduler) lookupNextEntity(sd *schedData, expiration bool) *entity {
	classIdx := 0
	if s.nowJ > sd.classIdleLastService+int64(s.hz/5) {
		if len(sd.st[classIdle].active) > 0 {
			classIdx = classIdle
		}
		sd.classIdleLastService = s.nowJ
	}
	for ; classIdx < nClasses; classIdx++ {
		if e := s.lookupNextInTree(&sd.st[classIdx], sd.inService != nil && !expiration); e != nil {
			return e
		}
	}
	return nil
}

// updateNextInService is bfq_update_next_in_service.
func (s *Scheduler) updateNextInService(sd *schedData, newEntity *entity, expiration bool) bool {
	next := sd.next
	changeWithoutLookup := false
	if newEntity != nil && newEntity != sd.next {
		changeWithoutLookup = true
		if next != nil {
			st := &sd.st[newEntity.class]
			changeWithoutLookup = newEntity.class == next.class &&
				!bfqGT(newEntity.start, st.vtime) &&
				bfqGT(next.finish, newEntity.finish)
		}
		if changeWithoutLookup {
			next = newEntity
		}
	}
	if !changeWithoutLookup {
		next = s.lookupNextEntity(sd, expiration)
	}
	parentMayChange := false
	if next != nil {
		// bfq_update_parent_budget
		triggers := false
		if g := next.sd.owner; g != nil && g.entity != nil {
			if g.entity.budget > next.budget {
				triggers = true
			}
			g.entity.budget = next.budget
		}
		parentMayChange = sd.next == nil || triggers
	}
	sd.next = next
	return parentMayChange
}

// getNextQueue is bfq_get_next_queue.
func (s *Scheduler) getNextQueue() *queue {
	if s.totBusy() == 0 {
		return nil
	}
	sd := &s.root.sd
	var e *entity
	for sd != nil {
		e = sd.next
		if e == nil {
			return nil // internal inconsistency guard
		}
		sd.inService = e
		// bfq_no_longer_next_in_service
		if e.q != nil || e.g.activeEntities == 1 {
			s.activeExtract(e.st(), e)
		}
		sd = e.mySd
	}
	q := e.q
	for ; e != nil; e = e.parent {
		if !s.updateNextInService(e.sd, nil, false) {
			break
		}
	}
	return q
}

// served is bfq_bfqq_served: charge served sectors at every level.
func (s *Scheduler) served(q *queue, served int) {
	if q.serviceFromBacklogged == 0 {
		q.firstIOTimeJ = s.nowJ
	}
	if q.wrCoeff > 1 {
		q.serviceFromWr += served
	}
	q.serviceFromBacklogged += served
	for e := &q.entity; e != nil; e = e.parent {
		st := e.st()
		e.service += served
		st.vtime += bfqDelta(uint64(served), st.wsum)
		s.forgetIdle(st)
	}
}

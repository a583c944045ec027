package cfq

import "sort"

// ---- group service tree (grp_service_tree) ----

func (s *Scheduler) gkey(g *group) int64 { return int64(g.vdisk - s.minVdt) } // cfqg_key

// gstInsert is __cfq_group_service_tree_add's rb insertion: ties go right.
func (s *Scheduler) gstInsert(g *group) {
	k := s.gkey(g)
	i := sort.Search(len(s.gst), func(i int) bool { return s.gkey(s.gst[i]) > k })
	s.gst = append(s.gst, nil)
	copy(s.gst[i+1:], s.gst[i:])
	s.gst[i] = g
	g.onTree = true
}

func (s *Scheduler) gstErase(g *group) {
	for i, x := range s.gst {
		if x == g {
			s.gst = append(s.gst[:i], s.gst[i+1:]...)
			break
		}
	}
	g.onTree = false
}

// groupTreeAdd is cfq_group_service_tree_add: insert g and compute its
// vfraction by compounding leaf_weight/children_weight and each
// ancestor's weight/children_weight, activating ancestors on the way.
func (s *Scheduler) groupTreeAdd(g *group) {
	s.gstInsert(g)
	vfr := uint64(1) << cfqServiceShift
	propagate := g.nrActive == 0
	g.nrActive++
	g.childW += g.leafW
	vfr = vfr * uint64(g.leafW) / uint64(g.childW)
	pos := g
	for parent := pos.parent; parent != nil; parent = pos.parent {
		if propagate {
			propagate = parent.nrActive == 0
			parent.nrActive++
			parent.childW += pos.weight
		}
		vfr = vfr * uint64(pos.weight) / uint64(parent.childW)
		pos = parent
	}
	g.vfr = uint32(max(vfr, 1))
}

// groupTreeDel is cfq_group_service_tree_del: undo the activation.
func (s *Scheduler) groupTreeDel(g *group) {
	g.nrActive--
	propagate := g.nrActive == 0
	g.childW -= g.leafW
	pos := g
	for propagate {
		pos.vfr = 0
		parent := pos.parent
		if parent == nil {
			break
		}
		parent.nrActive--
		propagate = parent.nrActive == 0
		parent.childW -= pos.weight
		pos = parent
	}
	if g.onTree {
		s.gstErase(g)
	}
}

// groupNotifyQueueAdd is cfq_group_notify_queue_add: a new busy queue; a
// group that was idle goes behind the last group on the tree.
func (s *Scheduler) groupNotifyQueueAdd(g *group) {
	g.nrCfqq++
	if g.onTree {
		return
	}
	if n := len(s.gst); n > 0 {
		delay := uint64(sliceModeDelay) // CFQ_SLICE_MODE_GROUP_DELAY
		if s.iopsMode() {
			delay = uint64(s.hz() / 5) // CFQ_IOPS_MODE_GROUP_DELAY
		}
		g.vdisk = s.gst[n-1].vdisk + delay
	} else {
		g.vdisk = s.minVdt
	}
	s.groupTreeAdd(g)
}

func (s *Scheduler) hz() int64 { return int64(1e9) / s.jiffy }

// groupNotifyQueueDel is cfq_group_notify_queue_del.
func (s *Scheduler) groupNotifyQueueDel(now int64, g *group) {
	g.nrCfqq--
	if g.nrCfqq > 0 {
		return
	}
	if s.logRequests {
		s.logf(now, nil, "del_from_rr group")
	}
	s.groupTreeDel(g)
	g.savedWlSlice = 0
}

// iopsMode is iops_mode: no idling and a queueing device (hw_tag -1 counts).
func (s *Scheduler) iopsMode() bool { return s.t.sliceIdle == 0 && s.hwTag != 0 }

// groupServed is cfq_group_served: charge g for q's slice and re-insert it.
func (s *Scheduler) groupServed(now int64, g *group, q *queue) {
	nrSync := g.nrCfqq - g.busyAsync() - g.stIdle.count()
	used := s.sliceUsage(now, q)
	charge := uint64(used)
	if s.iopsMode() {
		charge = uint64(q.sliceDispatch)
	} else if !q.sync && nrSync == 0 {
		charge = uint64(q.allocatedSlice)
	}
	vfr := g.vfr
	if vfr == 0 {
		vfr = 1
	}
	s.groupTreeDel(g)
	g.vdisk += (charge << cfqServiceShift << cfqServiceShift) / uint64(vfr) // cfqg_scale_charge
	s.groupTreeAdd(g)
	if s.workloadExpires > now {
		g.savedWlSlice = s.workloadExpires - now
		g.savedWlType = s.servingType
		g.savedWlClass = s.servingClass
	} else {
		g.savedWlSlice = 0
	}
	g.stats.Time += timeDuration(used)
	g.stats.Charge += charge
	iops := 0
	if s.iopsMode() {
		iops = 1
	}
	s.logv(now, nil, kv{"served: vt=", int64(g.vdisk)}, kv{" min_vt=", int64(s.minVdt)})
	s.logv(now, q, kv{"sl_used=", used}, kv{" disp=", int64(q.sliceDispatch)}, kv{" charge=", int64(charge)}, kv{" iops=", int64(iops)}, kv{" sect=", int64(q.nrSectors)})
}

// sliceUsage is cfq_cfqq_slice_usage: time used, without the time to the
// first completion and without the overrun past the allocated slice.
func (s *Scheduler) sliceUsage(now int64, q *queue) int64 {
	if q.sliceStart == 0 || q.sliceStart == now {
		return max(now-q.dispatchStart, s.jiffy)
	}
	used := now - q.sliceStart
	if used > q.allocatedSlice {
		used = q.allocatedSlice
	}
	return used
}

// getNextCfqg is cfq_get_next_cfqg: the leftmost group; advances min_vdisktime.
func (s *Scheduler) getNextCfqg() *group {
	if len(s.gst) == 0 {
		return nil
	}
	g := s.gst[0]
	if int64(g.vdisk-s.minVdt) > 0 { // max_vdisktime
		s.minVdt = g.vdisk
	}
	return g
}

// chooseCfqg is cfq_choose_cfqg.
func (s *Scheduler) chooseCfqg(now int64) {
	g := s.getNextCfqg()
	s.servingGroup = g
	if g == nil {
		return
	}
	if g.savedWlSlice != 0 {
		s.workloadExpires = now + g.savedWlSlice
		s.servingType = g.savedWlType
		s.servingClass = g.savedWlClass
	} else {
		s.workloadExpires = now - 1
	}
	s.chooseWlClassAndType(now, g)
}

// chooseWlClassAndType is choose_wl_class_and_type.
func (s *Scheduler) chooseWlClassAndType(now int64, g *group) {
	orig := s.servingClass
	switch {
	case g.busyWl(classRT) > 0:
		s.servingClass = classRT
	case g.busyWl(classBE) > 0:
		s.servingClass = classBE
	default:
		s.servingClass = classIdle
		s.workloadExpires = now + s.jiffy
		return
	}
	if orig == s.servingClass {
		st := g.stFor(s.servingClass, s.servingType)
		if st.count() > 0 && !(now > s.workloadExpires) {
			return
		}
	}
	s.servingType = s.chooseWlType(g, s.servingClass)
	st := g.stFor(s.servingClass, s.servingType)
	count := int64(st.count())
	groupSlice := s.groupSlice(g)
	slice := groupSlice * count / int64(max(g.avgQ[s.servingClass], g.busyWl(s.servingClass), 1))
	if s.servingType == wlAsync {
		tmp := s.t.targetLatency * int64(g.busyAsync()) / int64(max(s.busyQueues, 1))
		slice = min(slice, tmp)
		slice = slice * s.t.slice[0] / s.t.slice[1]
	} else {
		slice = max(slice, 2*s.t.sliceIdle)
	}
	slice = max(slice, 2*s.jiffy) // CFQ_MIN_TT
	s.logv(now, nil, kv{"workload slice:", slice})
	s.workloadExpires = now + slice
}

// chooseWlType is cfq_choose_wl_type: the tree whose first queue has the
// lowest rb_key (or, with reposition_time, was repositioned earliest).
func (s *Scheduler) chooseWlType(g *group, class int) int {
	best, valid := wlSyncNoidle, false
	var lowest int64
	for i := wlAsync; i <= wlSync; i++ {
		q := g.stFor(class, i).first()
		if q == nil {
			continue
		}
		key := q.rbKey
		if s.reposition {
			key = q.repos
		}
		if !valid || key < lowest {
			lowest, best, valid = key, i, true
		}
	}
	return best
}

// groupSlice is cfq_group_slice: the group's share of target_latency, ns.
func (s *Scheduler) groupSlice(g *group) int64 {
	return s.t.targetLatency * int64(g.vfr) >> cfqServiceShift
}

// groupAvgQueues is cfq_group_get_avg_queues: a slowly decaying maximum
// of the busy queues of the class.
func (s *Scheduler) groupAvgQueues(g *group, rt bool) int {
	cls := classBE
	if rt {
		cls = classRT
	}
	busy := g.busyWl(cls)
	lo, hi := min(g.avgQ[cls], busy), max(g.avgQ[cls], busy)
	g.avgQ[cls] = ((cfqHistDivisor-1)*hi + lo + cfqHistDivisor/2) / cfqHistDivisor
	return g.avgQ[cls]
}

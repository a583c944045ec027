package cfq

import (
	"sort"
	"strings"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// prioSlice is cfq_prio_slice: base + base/5 * (4 - prio), ns.
func (s *Scheduler) prioSlice(sync bool, prio int) int64 {
	base := s.t.slice[b2i(sync)]
	return base + base/cfqSliceScale*int64(4-prio)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prioToSlice is cfq_prio_to_slice.
func (s *Scheduler) prioToSlice(q *queue) int64 { return s.prioSlice(q.sync, q.prio) }

// prioToMaxrq is cfq_prio_to_maxrq: async requests per slice.
func (s *Scheduler) prioToMaxrq(q *queue) int {
	return 2 * s.t.sliceAsyncRq * (8 - q.prio)
}

// scaledSlice is cfq_scaled_cfqq_slice: with low_latency, shrink the slice
// so all the group's queues fit in its share of target_latency, down to a
// floor of 2*slice_idle (prio-scaled).
func (s *Scheduler) scaledSlice(q *queue) int64 {
	slice := s.prioToSlice(q)
	if s.t.latency {
		iq := int64(s.groupAvgQueues(q.g, q.class == classRT))
		syncSlice := s.t.slice[1]
		expect := syncSlice * iq
		gs := s.groupSlice(q.g)
		if expect > gs {
			low := min(slice, 2*s.t.sliceIdle*slice/syncSlice)
			slice = max(slice*gs/expect, low)
		}
	}
	return slice
}

// setPrioSlice is cfq_set_prio_slice: the slice clock starts now.
func (s *Scheduler) setPrioSlice(now int64, q *queue) {
	slice := s.scaledSlice(q)
	q.sliceStart = now
	q.sliceEnd = now + slice
	q.allocatedSlice = slice
	s.logv(now, q, kv{"set_slice=", slice})
}

// sliceUsed is cfq_slice_used.
func (q *queue) sliceUsed(now int64) bool {
	return !q.sliceNew && now >= q.sliceEnd
}

// sliceOffset is cfq_slice_offset.
func (s *Scheduler) sliceOffset(q *queue) int64 {
	return int64(q.g.nrCfqq-1) * (s.prioSlice(true, 0) - s.prioSlice(q.sync, q.prio))
}

// serviceTreeAdd is cfq_service_tree_add: (re)key q on the tree of its
// class and type.
func (s *Scheduler) serviceTreeAdd(now int64, q *queue, addFront bool) {
	st := q.g.stFor(q.class, q.typ())
	var key int64
	switch {
	case q.class == classIdle:
		key = cfqIdleDelay
		if n := len(st.qs); n > 0 && st.qs[n-1] != q {
			key += st.qs[n-1].rbKey
		} else {
			key += now
		}
	case !addFront:
		key = s.sliceOffset(q) + now
		key -= q.sliceResid
		q.sliceResid = 0
	default:
		key = -int64(1e9)
		if f := st.first(); f != nil {
			key += f.rbKey
		} else {
			key += now
		}
	}
	newQ := true
	if q.st != nil {
		newQ = false
		if key == q.rbKey && q.st == st {
			return
		}
		q.st.erase(q)
		q.st = nil
	}
	q.rbKey = key
	q.repos = now
	q.st = st
	st.insert(q)
	if addFront || !newQ {
		return
	}
	s.groupNotifyQueueAdd(q.g)
}

// prioTreeAdd is cfq_prio_tree_add: index q by its next request's sector
// for the close-cooperator search; duplicates are not indexed.
func (s *Scheduler) prioTreeAdd(q *queue) {
	s.prioTreeDel(q)
	if q.class == classIdle || q.nextRQ == nil {
		return
	}
	pt := &s.prioTrees[q.org]
	sec := q.nextRQ.Sector
	i := pt.search(sec)
	if i < len(pt.qs) && pt.qs[i].nextRQ.Sector == sec {
		return
	}
	pt.qs = append(pt.qs, nil)
	copy(pt.qs[i+1:], pt.qs[i:])
	pt.qs[i] = q
	q.pTree = pt
}

func (s *Scheduler) prioTreeDel(q *queue) {
	if q.pTree == nil {
		return
	}
	pt := q.pTree
	for i, x := range pt.qs {
		if x == q {
			pt.qs = append(pt.qs[:i], pt.qs[i+1:]...)
			break
		}
	}
	q.pTree = nil
}

// resortRRList is cfq_resort_rr_list.
func (s *Scheduler) resortRRList(now int64, q *queue) {
	if q.onRR {
		s.serviceTreeAdd(now, q, false)
		s.prioTreeAdd(q)
	}
}

// addCfqqRR is cfq_add_cfqq_rr: q becomes busy.
func (s *Scheduler) addCfqqRR(now int64, q *queue) {
	if s.logRequests {
		s.logs(now, q, "add_to_rr")
	}
	q.onRR = true
	s.busyQueues++
	if q.sync {
		s.busySyncQueues++
	}
	s.resortRRList(now, q)
}

// delCfqqRR is cfq_del_cfqq_rr: q leaves the service tree.
func (s *Scheduler) delCfqqRR(now int64, q *queue) {
	if s.logRequests {
		s.logs(now, q, "del_from_rr")
	}
	q.onRR = false
	if q.st != nil {
		q.st.erase(q)
		q.st = nil
	}
	s.prioTreeDel(q)
	s.groupNotifyQueueDel(now, q.g)
	s.busyQueues--
	if q.sync {
		s.busySyncQueues--
	}
}

// ---- requests inside a queue ----

// chooseReq is cfq_choose_req: the better of two requests for a head at
// last: sync first, then REQ_PRIO, then the shorter seek, back seeks up to
// back_seek_max costing back_seek_penalty times more.
func (s *Scheduler) chooseReq(r1, r2 *replay.Request, last uint64) *replay.Request {
	if r1 == nil || r1 == r2 {
		return r2
	}
	if r2 == nil {
		return r1
	}
	d1, d2 := rqd(r1), rqd(r2)
	if d1.sync != d2.sync {
		if d1.sync {
			return r1
		}
		return r2
	}
	if d1.prio != d2.prio {
		if d1.prio {
			return r1
		}
		return r2
	}
	s1, s2 := r1.Sector, r2.Sector
	backMax := uint64(s.t.backMax) * 2 // KiB to sectors
	var dist1, dist2 uint64
	wrap1, wrap2 := false, false
	switch {
	case s1 >= last:
		dist1 = s1 - last
	case s1+backMax >= last:
		dist1 = (last - s1) * uint64(s.t.backPenalty)
	default:
		wrap1 = true
	}
	switch {
	case s2 >= last:
		dist2 = s2 - last
	case s2+backMax >= last:
		dist2 = (last - s2) * uint64(s.t.backPenalty)
	default:
		wrap2 = true
	}
	switch {
	case !wrap1 && !wrap2:
		if dist1 < dist2 {
			return r1
		} else if dist2 < dist1 {
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
	}
	if s1 <= s2 {
		return r1
	}
	return r2
}

// sortIndex returns the position of rq in q's sort list.
func (q *queue) sortIndex(rq *replay.Request) int {
	i := sort.Search(len(q.sortList), func(i int) bool {
		x := q.sortList[i]
		return x.Sector > rq.Sector || (x.Sector == rq.Sector && x.ID >= rq.ID)
	})
	if i < len(q.sortList) && q.sortList[i] == rq {
		return i
	}
	for k, x := range q.sortList { // the sector changed under us (front merge)
		if x == rq {
			return k
		}
	}
	return -1
}

func (q *queue) sortAdd(rq *replay.Request) {
	i := sort.Search(len(q.sortList), func(i int) bool {
		x := q.sortList[i]
		return x.Sector > rq.Sector || (x.Sector == rq.Sector && x.ID > rq.ID)
	})
	q.sortList = append(q.sortList, nil)
	copy(q.sortList[i+1:], q.sortList[i:])
	q.sortList[i] = rq
}

func (q *queue) sortDel(rq *replay.Request) {
	if i := q.sortIndex(rq); i >= 0 {
		q.sortList = append(q.sortList[:i], q.sortList[i+1:]...)
	}
}

// findNextRQ is cfq_find_next_rq: after last leaves, the better of its
// successor (wrapping to the first) and its predecessor.
func (s *Scheduler) findNextRQ(q *queue, last *replay.Request) *replay.Request {
	i := q.sortIndex(last)
	var next, prev *replay.Request
	if i > 0 {
		prev = q.sortList[i-1]
	}
	if i+1 < len(q.sortList) {
		next = q.sortList[i+1]
	} else if len(q.sortList) > 0 && q.sortList[0] != last {
		next = q.sortList[0]
	}
	return s.chooseReq(next, prev, last.Sector)
}

// addRQRB is cfq_add_rq_rb.
func (s *Scheduler) addRQRB(now int64, rq *replay.Request) {
	d := rqd(rq)
	q := d.q
	q.queued[b2i(d.sync)]++
	q.sortAdd(rq)
	if !q.onRR {
		s.addCfqqRR(now, q)
	}
	prev := q.nextRQ
	q.nextRQ = s.chooseReq(q.nextRQ, rq, s.lastPosition)
	if prev != q.nextRQ {
		s.prioTreeAdd(q)
	}
}

// removeRequest is cfq_remove_request (with cfq_del_rq_rb).
func (s *Scheduler) removeRequest(rq *replay.Request) {
	d := rqd(rq)
	q := d.q
	if q.nextRQ == rq {
		q.nextRQ = s.findNextRQ(q, rq)
	}
	for i, x := range q.fifo {
		if x == rq {
			q.fifo = append(q.fifo[:i], q.fifo[i+1:]...)
			break
		}
	}
	q.queued[b2i(d.sync)]--
	q.sortDel(rq)
	if q.onRR && q.empty() {
		// Leaves the service tree at expiry; only the prio tree now.
		s.prioTreeDel(q)
	}
	s.rqQueued--
	if d.prio {
		q.prioPending--
	}
}

// ---- queue lookup ----

// getCIC returns the io context of pid, creating it in group g at now.
// cfq_init_icq starts the process's think-time clock at the creation
// (its first request), so its first sample is about 0.
func (s *Scheduler) getCIC(now int64, pid uint32, g *group) *cic {
	c := s.procs[pid]
	if c == nil {
		c = &cic{pid: pid, g: g, class: classBE, prio: ioprioNorm}
		c.tt.lastEnd = now
		if p, ok := s.prios[pid]; ok {
			c.class, c.prio = p[0], p[1]
		}
		s.procs[pid] = c
	}
	if c.g != g { // check_blkcg_changed: the process moved; drop its queues
		c.g = g
		for i := range c.q {
			if c.q[i] != nil && c.q[i].sync {
				c.q[i].procs--
			}
			c.q[i] = nil
		}
	}
	return c
}

// getQueue is cfq_get_queue: the process's sync queue, or the group's
// shared async queue for (class, prio).
func (s *Scheduler) getQueue(now int64, c *cic, sync bool) *queue {
	g := c.g
	class, prio := c.class, c.prio
	if !sync {
		var slot **queue
		if class == classIdle {
			slot = &g.asyncIdle
		} else {
			slot = &g.async[class][prio]
		}
		if *slot == nil {
			*slot = s.newQueue(now, c, false)
		}
		return *slot
	}
	q := s.newQueue(now, c, true)
	q.procs = 1
	return q
}

// newQueue is cfq_init_cfqq with cfq_init_prio_data.
func (s *Scheduler) newQueue(now int64, c *cic, sync bool) *queue {
	s.serial++
	q := &queue{pid: c.pid, sync: sync, class: c.class, prio: c.prio, org: c.prio, g: c.g, serial: s.serial}
	if q.class == classIdle {
		q.prio = 7
		q.org = 7
	}
	if sync && q.class != classIdle {
		q.idleWindow = true // cfq_mark_cfqq_idle_window for new sync queues
	}
	return q
}

// setRequest is the queue choice of cfq_set_request: merge or split a
// cooperating queue, then take the process's queue.
func (s *Scheduler) setRequest(now int64, c *cic, sync bool) *queue {
	si := b2i(sync)
	for {
		q := c.q[si]
		if q == nil {
			q = s.getQueue(now, c, sync)
			c.q[si] = q
			return q
		}
		if q.coop && q.splitCoop {
			s.logs(now, q, "breaking apart cfqq")
			if q.procs == 1 { // split_cfqq: the last user keeps it
				q.pid, q.dispMsg = c.pid, [2]string{}
				q.coop, q.splitCoop = false, false
				return q
			}
			q.procs--
			s.putCooperator(q)
			c.q[si] = nil
			continue
		}
		if q.newQ != nil { // cfq_merge_cfqqs
			nq := q.newQ
			if s.logOn {
				s.logf(now, q, "merging with queue 0x%x", nq.serial)
			}
			c.q[si] = nq
			nq.coop = true
			q.procs--
			nq.procs++
			return nq
		}
		return q
	}
}

// putCooperator is cfq_put_cooperator: drop the pending merge chain.
func (s *Scheduler) putCooperator(q *queue) {
	q.newQ = nil
}

// ---- think time, seeks, idle window (at insertion) ----

// updateIOThinktime is cfq_update_io_thinktime.
func (s *Scheduler) updateIOThinktime(now int64, q *queue, c *cic) {
	if q.sync {
		c.tt.update(now, s.t.sliceIdle)
		q.st.tt.update(now, s.t.sliceIdle)
	}
	q.g.tt.update(now, s.t.groupIdle)
}

// updateIOSeektime is cfq_update_io_seektime.
func (s *Scheduler) updateIOSeektime(q *queue, rq *replay.Request) {
	var sdist uint64
	if q.lastRequestPos != 0 {
		if q.lastRequestPos < rq.Sector {
			sdist = rq.Sector - q.lastRequestPos
		} else {
			sdist = q.lastRequestPos - rq.Sector
		}
	}
	q.seekHistory <<= 1
	if s.nonrot {
		if uint64(rq.Bytes>>9) < cfqqSectThrNonrot {
			q.seekHistory |= 1
		}
	} else if sdist > cfqqSeekThr {
		q.seekHistory |= 1
	}
}

// reqNoidle is req_noidle (4.19 cfq-iosched.c: req_op(rq) ==
// REQ_OP_WRITE && (cmd_flags & (REQ_SYNC | REQ_IDLE)) == REQ_SYNC).
// REQ_IDLE is not visible in a trace (RWBS has no letter for it), so it is
// inferred from who sets it in 4.19: O_DIRECT writes carry
// REQ_SYNC|REQ_IDLE (fs/direct-io.c, dio_bio_write_op), while writeback
// for fsync or sync (wbc_to_write_flags: WB_SYNC_ALL gives REQ_SYNC
// only), jbd2's journal and commit writes (REQ_SYNC, with PREFLUSH|FUA
// for the commit block) and ext4's metadata (REQ_META|REQ_PRIO) do not.
// So a sync write is noidle when it carries META (PREFLUSH and FUA are
// gone once the flush machinery has it; its data phase is a plain sync
// write), or comes from a kernel writeback or journal thread (jbd2/,
// kworker/). BUG: an application's own fsync writeback (REQ_SYNC, in its
// context) is taken as O_DIRECT and keeps idling.
func reqNoidle(rq *replay.Request) bool {
	if !rq.IsWrite() || !rq.IsSync() {
		return false
	}
	if rq.Cat&(trace.CatMeta|trace.CatFlush|trace.CatFUA) != 0 {
		return true
	}
	return strings.HasPrefix(rq.Comm, "jbd2/") || strings.HasPrefix(rq.Comm, "kworker/")
}

// thinktimeBig is cfq_io_thinktime_big.
func (s *Scheduler) thinktimeBig(t *ttime, groupIdle bool) bool {
	if !t.valid() {
		return false
	}
	sl := s.t.sliceIdle
	if groupIdle {
		sl = s.t.groupIdle
	}
	return t.mean > uint64(sl)
}

// updateIdleWindow is cfq_update_idle_window.
func (s *Scheduler) updateIdleWindow(now int64, q *queue, c *cic) {
	if !q.sync || q.class == classIdle {
		return
	}
	old := q.idleWindow
	enable := old
	if q.queued[0]+q.queued[1] >= 4 {
		q.deep = true
	}
	switch {
	case q.nextRQ != nil && reqNoidle(q.nextRQ):
		enable = false
	case c.exited || s.t.sliceIdle == 0 || (!q.deep && q.seeky()):
		enable = false
	case c.tt.valid():
		enable = c.tt.mean <= uint64(s.t.sliceIdle)
	}
	if old != enable {
		s.logv(now, q, kv{"idle=", int64(b2i(enable))})
		q.idleWindow = enable
	}
}

package bfq

import (
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Waker and woken queues, the adaptive inject limit and the at-head
// dispatch list (block/bfq-iosched.c, Linux 6.x).
//
// A queue Q is the waker of q when q, a sync queue with a long think time
// whose process had at most one request allocated, three times received a
// request less than 4 ms after the last completion, which was Q's, within
// 128·slice_idle of the first such detection (bfq_check_waker). While q
// is in service and plugging, bfq_select_queue serves Q's requests before
// anything else (after the process's own async ones), and those of the
// first queue q wakes: fio's fsync waits for jbd2's commit, jbd2's commit
// for the fsync's data, and without injecting the other's I/O each would
// idle until its timer fired.

const (
	wakerMaxDelayNs  = 4000000 // bfq_check_waker: 4 * NSEC_PER_MSEC
	wakerDetections  = 3       // num_waker_detections that confirm a waker
	wakerWindowIdles = 128     // detection window, in bfq_slice_idle
)

// checkWaker is bfq_check_waker, called from bfq_add_request for a sync
// queue whose process has at most one request allocated (6.x: the
// request being added).
func (s *Scheduler) checkWaker(q *queue) {
	now := int64(s.now)
	last := s.lastCompletedRqBfqq
	if last == nil || last == q || q.shortTtime || now-s.lastCompletion >= wakerMaxDelayNs {
		return
	}
	// 6.x does not skip a waker already confirmed: it is detected again,
	// every third time, and logged again ("set waker" 713 times in
	// fs-bfq-fsync-vs-seqread).
	if last != q.tentativeWaker || now > q.wakerDetectionStart+wakerWindowIdles*s.sliceIdle {
		q.tentativeWaker = last
		q.wakerDetections = 1
		q.wakerDetectionStart = now
		if s.logLevel >= logDecisions {
			b := s.logStart(q, "set tentative waker ")
			s.logEmit(q, append(b, last.name()...))
		}
	} else {
		q.wakerDetections++
	}
	if q.wakerDetections == wakerDetections {
		q.tentativeWaker = nil
		s.setWaker(q, last)
		if s.logLevel >= logDecisions {
			b := s.logStart(q, "set waker ")
			s.logEmit(q, append(b, q.waker.name()...))
		}
	}
}

// setWaker makes w q's waker (nil: none) and moves q to the head of w's
// woken list (hlist_del_init, hlist_add_head on woken_list_node).
func (s *Scheduler) setWaker(q, w *queue) {
	s.unlinkWoken(q)
	q.waker = w
	if w != nil {
		w.woken = append(w.woken, nil)
		copy(w.woken[1:], w.woken)
		w.woken[0] = q
		q.wokenOf = w
	}
}

// unlinkWoken takes q off the woken list it is on, if any.
func (s *Scheduler) unlinkWoken(q *queue) {
	w := q.wokenOf
	if w == nil {
		return
	}
	for i, x := range w.woken {
		if x == q {
			w.woken = append(w.woken[:i], w.woken[i+1:]...)
			break
		}
	}
	q.wokenOf = nil
}

// firstWoken is the head of q's woken list (bfq_select_queue's
// blocked_bfqq), or nil.
func (q *queue) firstWoken() *queue {
	if len(q.woken) == 0 {
		return nil
	}
	return q.woken[0]
}

// canInject reports whether q has a next request its budget covers, the
// test bfq_select_queue applies to the waker and the woken queue.
func (s *Scheduler) canInject(q *queue) bool {
	return q != nil && q.busy && q.nextRq != nil && s.servToCharge(q.nextRq, q) <= q.budgetLeft()
}

// injectSampling is the part of bfq_add_request that runs for a sync
// queue whose process has at most one request allocated: waker detection,
// the periodic inject-limit reset, and the start of a total-service-time
// sample (wait_dispatch) for the in-service queue's first request.
func (s *Scheduler) injectSampling(q *queue) {
	if s.feat.waker {
		s.checkWaker(q)
	}
	if s.nowJ >= q.decreaseTimeJ+s.msecsToJiffies(1000) {
		s.resetInjectLimit(q)
	}
	if q == s.inService && (s.inDriver == 0 || (q.lastServTimeNs > 0 && s.rqsInjected && s.inDriver > 0)) &&
		s.nowJ >= q.decreaseTimeJ+s.msecsToJiffies(10) {
		s.lastEmptyOccupiedNs = int64(s.now)
		s.waitDispatch = true
		if s.inDriver == 0 {
			s.rqsInjected = false
		}
	}
}

// updateInjectLimit is bfq_update_inject_limit, on the completion of the
// request whose total service time (insertion to completion) is sampled
// (waited_rq), before bfq_completed_request counts it out of the driver.
func (s *Scheduler) updateInjectLimit(q *queue) {
	tot := int64(s.now) - s.lastEmptyOccupiedNs
	old := q.injectLimit
	if q.lastServTimeNs > 0 && s.rqsInjected {
		thr := (q.lastServTimeNs * 3) >> 1
		if tot >= thr && old > 0 {
			q.injectLimit--
			q.decreaseTimeJ = s.nowJ
		} else if tot < thr && old <= s.maxRqInDriver {
			q.injectLimit++
		}
	}
	// inDriver == 1: nothing in flight but this request.
	if (q.lastServTimeNs == 0 && s.inDriver == 1) || tot < q.lastServTimeNs {
		if q.lastServTimeNs == 0 {
			q.injectLimit = max(1, old)
		}
		q.lastServTimeNs = tot
	} else if !s.rqsInjected && s.inDriver == 1 {
		q.lastServTimeNs = tot
	}
	s.waitedRq = nil
	s.rqsInjected = false
}

// InsertAtHead is bfq_insert_request with BLK_MQ_INSERT_AT_HEAD (a flush
// sequence's data phase): bfq_init_rq finds or makes the process's queue
// and counts the request in its bic, then the request goes to the head of
// bfqd->dispatch (list_add), which __bfq_dispatch_request serves before
// any queue, uncharged.
func (s *Scheduler) InsertAtHead(now trace.Time, rq *replay.Request) {
	s.setNow(now)
	s.noteComm(rq)
	b := s.bicFor(rq.PID, rq.Cgroup)
	q := s.queueForInsert(b, rq.IsSync(), rq.PID)
	r := s.newRqState(rq, q)
	r.bic = b
	b.requests++
	s.requestAllocated(r, q)
	rq.Sched = r
	s.dispatchList = append(s.dispatchList, nil)
	copy(s.dispatchList[1:], s.dispatchList)
	s.dispatchList[0] = r
	s.h.Kick()
}

// dispatchAtHead serves the head of bfqd->dispatch: the queue counts it
// dispatched and the driver in flight (inc_in_driver_start_rq).
func (s *Scheduler) dispatchAtHead() *replay.Request {
	r := s.dispatchList[0]
	s.dispatchList = s.dispatchList[1:]
	r.q.dispatched++
	s.inDriver++
	s.totalDispatched++
	return r.rq
}

// wakerAfterSplit is bfq_waker_bfqq: the waker a queue split off q keeps,
// nil when it is about to go away (in q's merge chain with this process
// its only one, or outside it with no process left).
func wakerAfterSplit(q *queue) *queue {
	w := q.waker
	if w == nil {
		return nil
	}
	for n := q.newBfqq; n != nil; n = n.newBfqq {
		if n == w {
			if w.procRefs == 1 {
				return nil
			}
			return w
		}
	}
	if w.procRefs == 0 {
		return nil
	}
	return w
}

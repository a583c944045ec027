package diff_test

import (
	"fmt"
	"testing"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// tieSide builds a Side from events in trace order, as a replay writes
// them: on simulated time, an insertion and the scheduler's reaction to it
// share a timestamp, and only the order of the events tells them apart.
func tieSide(t *testing.T, evs []trace.Event) *diff.Side {
	t.Helper()
	s := diff.NewSide(trace.Meta{Source: "replay"})
	for i := range evs {
		s.Add(&evs[i])
	}
	s.Finish()
	return s
}

// ttReq returns the events of a one-bio sync read of pid at sector: Q, G
// and I at q, D at d, C at c; D or C left out when negative.
func ttReq(pid uint32, sector uint64, q, d, c trace.Time) (ins, issue, done []trace.Event) {
	e := func(t trace.Time, a trace.Action, cat trace.Category) trace.Event {
		return trace.Event{Time: t, Action: a, Dev: 1, Sector: sector, Bytes: 4096, PID: pid, Cat: trace.CatRead | cat}
	}
	ins = []trace.Event{e(q, trace.ActionQueue, trace.CatQueue), e(q, trace.ActionGetRQ, trace.CatQueue), e(q, trace.ActionInsert, trace.CatFS)}
	if d >= 0 {
		issue = []trace.Event{e(d, trace.ActionIssue, trace.CatIssue|trace.CatFS)}
	}
	if c >= 0 {
		done = []trace.Event{e(c, trace.ActionComplete, trace.CatComplete|trace.CatFS)}
	}
	return ins, issue, done
}

func bfqMsg(t trace.Time, text string) trace.Event {
	return trace.Event{Time: t, Action: trace.ActionMessage, Dev: 1, Cat: trace.CatNotify, Text: text}
}

// sameInstantEvents returns TestThinkTimeSameInstantOrder's events, its
// requests and BFQ messages those of pid.
func sameInstantEvents(pid uint32) []trace.Event {
	var evs []trace.Event
	add := func(es ...[]trace.Event) {
		for _, e := range es {
			evs = append(evs, e...)
		}
	}
	msg := func(t trace.Time, body string) []trace.Event {
		return []trace.Event{bfqMsg(t, fmt.Sprintf("bfq%dS %s", pid, body))}
	}
	aI, aD, aC := ttReq(pid, 0, 1000, 1000, 2000)
	bI, bD, bC := ttReq(pid, 8, 5000, 6000, 7000)
	cI, cD, cC := ttReq(pid, 16, 9000, 9000, 10000)
	eI, eD, eC := ttReq(pid, 24, 20000, 20000, 20000)
	fI, fD, fC := ttReq(pid, 32, 30000, 31000, 32000)
	add(aI, msg(1000, "set_in_service_queue, cur-budget = 100"), aD, aC)
	add(bI, msg(5000, "expire (2, slow 0, num_disp 1, short_ttime 1)"), msg(5000, "set_in_service_queue, cur-budget = 100"), bD, bC)
	add(msg(8000, "expire (3, slow 0, num_disp 1, short_ttime 1)"))
	add(cI, msg(9000, "set_in_service_queue, cur-budget = 100"), cD, cC)
	add(msg(11000, "expire (3, slow 0, num_disp 1, short_ttime 1)"))
	add(eI, eD, eC, fI, fD, fC)
	return evs
}

// TestRemapKeepsInServiceSpans: a Side whose pids are renamed (diff
// --map, two runs of one workload) renames its BFQ messages' queues with
// them, so the think-time measure still finds each queue's in-service
// spans. Before, the spans stayed under the old pid: insertion B of
// TestThinkTimeSameInstantOrder, made while its queue idled in service,
// was sampled (elapsed 3000 ns: mean 4 -> 1500 ns at 5000).
func TestRemapKeepsInServiceSpans(t *testing.T) {
	real := tieSide(t, sameInstantEvents(100))
	pred := tieSide(t, sameInstantEvents(500)).Remap(map[uint32]uint32{500: 100}, nil)
	tt := diff.Compare(real, pred, diff.Options{}).ThinkTime
	if len(tt.PerQueue) != 1 {
		t.Fatalf("%d queues, want 1 (pid 100)", len(tt.PerQueue))
	}
	q := tt.PerQueue[0]
	if len(q.PredSeries) != len(q.RealSeries) || len(q.RealSeries) != 5 {
		t.Fatalf("series of %d and %d insertions, want 5 each", len(q.RealSeries), len(q.PredSeries))
	}
	for i := range q.RealSeries {
		r, p := q.RealSeries[i], q.PredSeries[i]
		if r.Time != p.Time || r.Samples != p.Samples || r.Mean != p.Mean {
			t.Errorf("insertion %d: renamed side %+v, the same events under the kept pid %+v", i, p, r)
		}
	}
}

// TestThinkTimeSameInstantOrder: at one instant, the think-time measure
// follows the trace's order of insertions and BFQ's in-service messages,
// and a request completing at the instant of its own issue (a replay's
// zero-time service) is not left in flight.
//
// Kernel (block/bfq-iosched.c, Linux 6.18): __bfq_insert_request calls
// bfq_update_io_thinktime, which returns without a sample "if
// (bfqq->dispatched || bfq_bfqq_busy(bfqq))"; else elapsed = now -
// ttime.last_end_request (set by bfq_completed_request), capped at
// 2*slice_idle, and ttime_samples = (7*samples + 256)/8, ttime_total =
// (7*total + 256*elapsed)/8, ttime_mean = (total + 128)/samples.
// bfq_init_bfqq sets last_end_request to now + 1 for a new queue. The
// in-service queue stays busy while it idles empty; a queue expired empty
// is no longer busy (__bfq_bfqq_expire, bfq_del_bfqq_busy).
//
// pid 100's requests, by hand (ns):
//
//	A: I at 1000, then set_in_service (the insertion made the queue busy,
//	   so it came after: sampled), D 1000, C 2000. New queue: elapsed
//	   1000-1001 < 0 -> 0; samples 32, total 0, mean 128/32 = 4.
//	B: I at 5000 while A's queue idles in service; "expire" at 5000 after
//	   it (the budget spent): busy, no sample: 32, mean 4. (Reading the
//	   span as ended at 5000 sampled it: elapsed 3000.) D 6000, C 7000.
//	C: I at 9000, then set_in_service at 9000: idle before, sampled:
//	   elapsed 2000; samples 60, total 256*2000/8 = 64000, mean 64128/60
//	   = 1068. D 9000, C 10000; expire at 11000.
//	E: I, D and C all at 20000 (D before C in the trace). Sampled:
//	   elapsed 10000; samples 84, total (7*64000+2560000)/8 = 376000,
//	   mean 376128/84 = 4477.
//	F: I at 30000, nothing in flight (E completed): sampled, elapsed
//	   10000; samples 105, total (7*376000+2560000)/8 = 649000, mean
//	   649128/105 = 6182. (Sorting E's C before its own D left E in
//	   flight: no sample.)
func TestThinkTimeSameInstantOrder(t *testing.T) {
	s := tieSide(t, sameInstantEvents(100))
	tt := diff.Compare(s, s, diff.Options{}).ThinkTime
	if len(tt.PerQueue) != 1 {
		t.Fatalf("%d queues, want 1 (pid 100)", len(tt.PerQueue))
	}
	got := tt.PerQueue[0].RealSeries
	want := []struct {
		time    trace.Time
		samples uint32
		mean    int64
	}{{1000, 32, 4}, {5000, 32, 4}, {9000, 60, 1068}, {20000, 84, 4477}, {30000, 105, 6182}}
	if len(got) != len(want) {
		t.Fatalf("%d insertions in the series, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		p := got[i]
		if p.Time != w.time || p.Samples != w.samples || int64(p.Mean) != w.mean {
			t.Errorf("insertion %d: time %d, samples %d, mean %d ns; want %d, %d, %d", i, p.Time, p.Samples, p.Mean, w.time, w.samples, w.mean)
		}
	}
}

// TestThinkTimeSameInstantOrderSorted: messages out of time order in the
// input keep, once sorted, the insertions that came before them.
func TestThinkTimeSameInstantOrderSorted(t *testing.T) {
	aI, aD, aC := ttReq(100, 0, 1000, 1000, 2000)
	bI, bD, bC := ttReq(100, 8, 5000, 6000, 7000)
	var evs []trace.Event
	// A message stamped earlier than the ones before it makes Finish sort.
	evs = append(evs, bfqMsg(900, "bfq200S select_queue: already in-service queue"))
	evs = append(evs, aI...)
	evs = append(evs, bfqMsg(1000, "bfq100S set_in_service_queue, cur-budget = 100"))
	evs = append(evs, aD...)
	evs = append(evs, aC...)
	evs = append(evs, bI...)
	evs = append(evs, bfqMsg(5000, "bfq100S expire (2, slow 0, num_disp 1, short_ttime 1)"))
	evs = append(evs, bfqMsg(10, "bfq200S select_queue: already in-service queue"))
	evs = append(evs, bD...)
	evs = append(evs, bC...)
	s := tieSide(t, evs)
	got := diff.Compare(s, s, diff.Options{}).ThinkTime.PerQueue[0].RealSeries
	if len(got) != 2 || got[0].Samples != 32 || got[1].Samples != 32 {
		t.Fatalf("series %+v, want two insertions, the second unsampled (32 samples: B inserted while in service)", got)
	}
}

// TestThinkTimeFlushRequests: requests of the flush machinery, as Linux
// 6.18 handles them on a device with a write-back cache (the captures'
// loop device):
//
//   - a PREFLUSH write's data: blk_insert_flush runs the flush state
//     machine; after the preflush, blk_flush_complete_seq (REQ_FSEQ_DATA)
//     moves the request to the requeue list and blk_mq_requeue_work
//     inserts it with BLK_MQ_INSERT_AT_HEAD: bfq_insert_request puts it on
//     bfqd->dispatch ("if (flags & BLK_MQ_INSERT_AT_HEAD)
//     list_add(&rq->queuelist, &bfqd->dispatch)") without
//     __bfq_insert_request, so no bfq_update_io_thinktime and no class,
//     and it is not queued in its bfq_queue; __bfq_dispatch_request counts
//     it in bfqq->dispatched, and its completion sets last_end_request;
//   - an empty PREFLUSH (blkdev_issue_flush) never reaches the scheduler.
//
// pid 100, by hand (ns), slice_idle 8 ms:
//
//	A: write, I 1000 (new queue: samples 32, mean 4), D 1000, C 2000.
//	P: PREFLUSH|FUA write, G 3000; the flush (FN) 3000-4000; I 4000 at
//	   the head: no point. D 6000, C 7000.
//	B: write, I 5000: P waits on the dispatch list, outside the queue:
//	   sampled, elapsed 5000-2000 = 3000: samples 60, total
//	   256*3000/8 = 96000, mean 96128/60 = 1602. D 5500, C 8000.
//	E: empty PREFLUSH, Q 9000, its flush D 9100, C 9500: no point, no
//	   completion for the queue.
//	F: write, I 12000: elapsed 12000-8000 = 4000: samples 84, total
//	   (7*96000 + 256*4000)/8 = 212000, mean 212128/84 = 2525.
func TestThinkTimeFlushRequests(t *testing.T) {
	const pid = 100
	w := trace.CatWrite | trace.CatSync
	ev := func(tm trace.Time, a trace.Action, sector uint64, bytes uint32, p uint32, cat trace.Category) trace.Event {
		return trace.Event{Time: tm, Action: a, Dev: 1, Sector: sector, Bytes: bytes, PID: p, Cat: cat}
	}
	req := func(sector uint64, cat trace.Category, q, i, d, c trace.Time) []trace.Event {
		out := []trace.Event{ev(q, trace.ActionQueue, sector, 4096, pid, cat|trace.CatQueue), ev(q, trace.ActionGetRQ, sector, 4096, pid, cat|trace.CatQueue)}
		if i >= 0 {
			out = append(out, ev(i, trace.ActionInsert, sector, 4096, pid, cat|trace.CatFS))
		}
		return append(out, ev(d, trace.ActionIssue, sector, 4096, pid, cat|trace.CatIssue|trace.CatFS), ev(c, trace.ActionComplete, sector, 4096, pid, cat|trace.CatComplete|trace.CatFS))
	}
	flushRq := func(d, c trace.Time) []trace.Event { // the flush machinery's own flush: no bio
		return []trace.Event{ev(d, trace.ActionIssue, 0, 0, 0, trace.CatFlush|trace.CatIssue), ev(c, trace.ActionComplete, 0, 0, 0, trace.CatFlush|trace.CatComplete)}
	}
	var evs []trace.Event
	evs = append(evs, req(0, w, 1000, 1000, 1000, 2000)...)
	pEv := req(8, w|trace.CatFlush|trace.CatFUA, 3000, 4000, 6000, 7000)
	evs = append(evs, pEv[:2]...)
	evs = append(evs, flushRq(3000, 4000)...)
	evs = append(evs, pEv[2])
	bEv := req(16, w, 5000, 5000, 5500, 8000)
	evs = append(evs, bEv[:4]...)
	evs = append(evs, pEv[3:]...)
	evs = append(evs, bEv[4])
	evs = append(evs,
		ev(9000, trace.ActionQueue, 0, 0, pid, w|trace.CatFlush|trace.CatQueue), ev(9000, trace.ActionGetRQ, 0, 0, pid, w|trace.CatFlush|trace.CatQueue),
		ev(9100, trace.ActionIssue, 0, 0, pid, w|trace.CatFlush|trace.CatIssue), ev(9500, trace.ActionComplete, 0, 0, pid, w|trace.CatFlush|trace.CatComplete))
	evs = append(evs, req(24, w, 12000, 12000, 12500, 13000)...)
	s := tieSide(t, evs)
	if n := s.NumRequests(); n != 6 {
		t.Fatalf("%d requests rebuilt, want 6 (A, P, the flush, B, E, F): %+v", n, s.RequestSlice())
	}
	tt := diff.Compare(s, s, diff.Options{}).ThinkTime
	if len(tt.PerQueue) != 1 {
		t.Fatalf("queues %+v, want pid 100's alone", tt.PerQueue)
	}
	got := tt.PerQueue[0].RealSeries
	want := []struct {
		time    trace.Time
		samples uint32
		mean    int64
	}{{1000, 32, 4}, {5000, 60, 1602}, {12000, 84, 2525}}
	if len(got) != len(want) {
		t.Fatalf("series %+v, want A, B and F only", got)
	}
	for i, w := range want {
		if p := got[i]; p.Time != w.time || p.Samples != w.samples || int64(p.Mean) != w.mean {
			t.Errorf("insertion %d: time %d, samples %d, mean %d ns; want %d, %d, %d", i, p.Time, p.Samples, p.Mean, w.time, w.samples, w.mean)
		}
	}
	if tt.Compared != 3 {
		t.Errorf("%d requests compared, want 3 (A, B, F)", tt.Compared)
	}
	// Without a write-back cache no flush is issued (blk_flush_policy is
	// REQ_FSEQ_DATA alone) and P takes the normal insertion: A, P, B, F.
	var noWC []trace.Event
	for _, e := range evs {
		if e.PID != 0 {
			noWC = append(noWC, e)
		}
	}
	s = tieSide(t, noWC)
	if got := diff.Compare(s, s, diff.Options{}).ThinkTime.PerQueue[0].RealSeries; len(got) != 4 || got[1].Time != 4000 {
		t.Errorf("without the device's flushes: series %+v, want A, P (4000), B, F", got)
	}
}

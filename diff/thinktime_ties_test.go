package diff_test

import (
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
	var evs []trace.Event
	add := func(es ...[]trace.Event) {
		for _, e := range es {
			evs = append(evs, e...)
		}
	}
	aI, aD, aC := ttReq(100, 0, 1000, 1000, 2000)
	bI, bD, bC := ttReq(100, 8, 5000, 6000, 7000)
	cI, cD, cC := ttReq(100, 16, 9000, 9000, 10000)
	eI, eD, eC := ttReq(100, 24, 20000, 20000, 20000)
	fI, fD, fC := ttReq(100, 32, 30000, 31000, 32000)
	add(aI, []trace.Event{bfqMsg(1000, "bfq100S set_in_service_queue, cur-budget = 100")}, aD, aC)
	add(bI, []trace.Event{
		bfqMsg(5000, "bfq100S expire (2, slow 0, num_disp 1, short_ttime 1)"),
		bfqMsg(5000, "bfq100S set_in_service_queue, cur-budget = 100"),
	}, bD, bC)
	add([]trace.Event{bfqMsg(8000, "bfq100S expire (3, slow 0, num_disp 1, short_ttime 1)")})
	add(cI, []trace.Event{bfqMsg(9000, "bfq100S set_in_service_queue, cur-budget = 100")}, cD, cC)
	add([]trace.Event{bfqMsg(11000, "bfq100S expire (3, slow 0, num_disp 1, short_ttime 1)")})
	add(eI, eD, eC, fI, fD, fC)
	s := tieSide(t, evs)
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

package cfq

import (
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Rule tests: each pins one 4.19 decision that a what-if replay showed in
// bulk (tens of thousands of preemptions, an idle timer armed per
// completion, a depth of 8 with two busy queues), so that a change of the
// model has to argue with the kernel code it mirrors.

func rw(id uint64, pid uint32, sector uint64, cat trace.Category) *replay.Request {
	return &replay.Request{ID: id, PID: pid, Sector: sector, Bytes: 4096, Cat: cat}
}

// seekyProc gives pid a sync queue that is already seeky without idle
// window, as after its first random requests (cfq_update_idle_window:
// !deep && CFQQ_SEEKY -> idle=0), so that it goes to the SYNC_NOIDLE tree.
func seekyProc(s *Scheduler, pid uint32) *queue {
	c := s.getCIC(0, pid, s.root)
	q := s.setRequest(0, c, true)
	q.seekHistory = ^uint32(0)
	q.idleWindow = false
	return q
}

// TestPreemptSyncNoidleTree: on the SYNC_NOIDLE tree a new request of
// another queue preempts an active queue that has nothing queued, even with
// requests of its own in flight and with more than two queues on the tree.
// 4.19's cfq_should_preempt has no "service_tree->count == 2" condition
// any more (2.6.33..4.5 had it): the no-idle queues are served together,
// one request each, and each arrival takes the device. Eight psync random
// writers therefore give about one preemption per request.
func TestPreemptSyncNoidleTree(t *testing.T) {
	s, hh := newTest(t, hdd, replay.Options{})
	q1, q2, q3 := seekyProc(s, 1), seekyProc(s, 2), seekyProc(s, 3)
	w := trace.CatWrite | trace.CatSync // O_DIRECT: REQ_SYNC|REQ_IDLE
	a := rw(1, 1, 1<<20, w)
	s.Insert(0, a)
	s.Insert(0, rw(2, 3, 5<<20, w)) // q3 waits on the tree too
	if got := s.Dispatch(0); got != a || s.active != q1 || s.servingType != wlSyncNoidle {
		t.Fatalf("dispatched %v, active %v, serving type %d", got, s.active, s.servingType)
	}
	if q1.st.count() != 2 {
		t.Fatalf("tree count %d, want 2 (q1 active, q3 waiting)", q1.st.count())
	}
	b := rw(3, 2, 9<<20, w) // joins the tree as its third queue, then preempts
	s.Insert(1000, b)
	if s.active != nil || !strings.Contains(strings.Join(hh.logs, "\n"), "cfq2SN preempt") {
		t.Fatalf("q2 did not preempt the empty active q1 (active %v)\n%s", s.active, strings.Join(hh.logs, "\n"))
	}
	if got := s.Dispatch(1000); got != b || s.active != q2 {
		t.Fatalf("dispatched %v after the preemption, want q2's request", got)
	}
	if q1.onRR || q3.st.count() != 2 {
		t.Fatalf("q1 on tree %v (should have left it empty), tree count %d", q1.onRR, q3.st.count())
	}
}

// TestSeqReaderKeepsDevice: a sequential reader (SYNC tree, idle window)
// arms the idle timer at each completion that empties its queue
// (cfq_arm_slice_timer), a far request of another reader does not preempt
// it (cfq_should_preempt: wait_request, but not cfq_rq_close), and its own
// next request cancels the timer (cfq_rq_enqueued, busy_queues > 1) inside
// the same slice. One reader at a time, at its own queue depth of one.
func TestSeqReaderKeepsDevice(t *testing.T) {
	s, hh := newTest(t, hdd, replay.Options{Set: map[string]string{"slice_idle_us": "2000"}})
	r := trace.CatRead | trace.CatSync
	var now int64
	var q *queue
	for i := 0; i < 20; i++ {
		if i == 1 {
			// another reader, 1 GiB away, queues while the first idles
			s.Insert(trace.Time(now), rw(100, 11, 1<<21, r))
			if s.active == nil || s.active.pid != 10 {
				t.Fatal("the far reader preempted the idling one")
			}
		}
		rq := rw(uint64(i+1), 10, uint64(i)*8, r)
		s.Insert(trace.Time(now), rq)
		if got := s.Dispatch(trace.Time(now)); got != rq {
			t.Fatalf("request %d: dispatched %v\n%s", i, got, strings.Join(hh.logs, "\n"))
		}
		q = s.active
		if s.timerPending {
			t.Fatalf("request %d: timer still armed after the next request", i)
		}
		now += 80_000
		s.Completed(trace.Time(now), rq)
		if !s.timerPending || !q.waitRequest {
			t.Fatalf("request %d: no idle timer after the completion", i)
		}
		now += 40_000 // think time
	}
	if q.pid != 10 || s.busyQueues != 2 || q.sliceUsed(now) {
		t.Fatalf("active pid %d, busy %d, slice used %v", q.pid, s.busyQueues, q.sliceUsed(now))
	}
	arms := strings.Count(strings.Join(hh.logs, "\n"), "arm_idle: 2000000 group_idle: 0")
	if arms != 20 || strings.Contains(strings.Join(hh.logs, "\n"), "preempt") {
		t.Fatalf("%d idle arms (want 20), or a preemption:\n%s", arms, strings.Join(hh.logs, "\n"))
	}
}

// TestMayDispatchDepth mirrors cfq_may_dispatch: quantum/2 (4) while the
// slice is new or about to end, quantum (8) otherwise when other queues
// are busy, no limit for the only busy queue (max_dispatch = -1). Two
// processes with 16 requests each therefore never have more than 8 on
// the device under CFQ.
func TestMayDispatchDepth(t *testing.T) {
	fill := func(s *Scheduler, pid uint32, base uint64) {
		for i := 0; i < 16; i++ {
			s.Insert(0, rw(uint64(pid)*100+uint64(i), pid, base+uint64(i)*1e5, trace.CatRead|trace.CatSync))
		}
	}
	drain := func(s *Scheduler, now int64) (n int, got []*replay.Request) {
		for {
			rq := s.Dispatch(trace.Time(now))
			if rq == nil {
				return n, got
			}
			got = append(got, rq)
			n++
		}
	}

	s, _ := newTest(t, hdd, replay.Options{})
	fill(s, 20, 0)
	fill(s, 21, 1<<24)
	n, got := drain(s, 0)
	if n != 4 {
		t.Fatalf("new slice, two busy queues: %d dispatched, want 4", n)
	}
	q := s.active
	s.Completed(1e6, got[0]) // the slice clock starts: 100 ms
	n, more := drain(s, 1e6)
	if n != 5 || q.dispatched != 8 {
		t.Fatalf("mid slice, two busy queues: %d more, %d in flight, want 8 in flight", n, q.dispatched)
	}
	// Near the end of the slice (now + slice_idle*dispatched > slice_end)
	// the queue is held at 4 again.
	end := q.sliceEnd
	inflight := append(got[1:], more...)
	for _, rq := range inflight[:4] {
		s.Completed(trace.Time(end-20e6), rq)
	}
	if q.dispatched != 4 {
		t.Fatalf("in flight %d", q.dispatched)
	}
	if n, _ := drain(s, end-20e6); n != 0 {
		t.Fatalf("20 ms before the slice end with 4 in flight: %d dispatched, want 0", n)
	}

	lone, _ := newTest(t, hdd, replay.Options{})
	fill(lone, 30, 0)
	if n, _ := drain(lone, 0); n != 16 {
		t.Fatalf("only busy queue: %d dispatched, want all 16", n)
	}
}

// TestThinkTimeClockStart: a process's and a group's think-time clocks
// start when they are created (cfq_init_icq, cfq_init_cfqg_base), so the
// first request of a process that starts late is a sample of about 0, not
// the clamp 2*slice_idle.
func TestThinkTimeClockStart(t *testing.T) {
	s, _ := newTest(t, hdd, replay.Options{CgroupPaths: map[uint64]string{5: "/late"}})
	at := int64(3 * time.Second)
	s.Insert(trace.Time(at), &replay.Request{ID: 1, PID: 7, Cgroup: 5, Sector: 0, Bytes: 4096, Cat: trace.CatRead})
	c := s.procs[7]
	// mean = (total + 128) / samples: 4 ns for a zero sample
	if c.tt.samples != 32 || c.tt.mean > 4 {
		t.Fatalf("process think time after its first request: mean %d samples %d, want 4 ns and 32", c.tt.mean, c.tt.samples)
	}
	g := s.groupFor(at, 5)
	if g.tt.mean > 4 || c.q[1].st.tt.mean > 4 {
		t.Fatalf("group / tree think time %d / %d, want 0", g.tt.mean, c.q[1].st.tt.mean)
	}
}

// TestJournalWriteNoIdle: 4.19's cfq_update_idle_window clears the idle
// window when the queue's next request is req_noidle (a write with
// REQ_SYNC and not REQ_IDLE). jbd2's journal writes (REQ_SYNC|REQ_META,
// "WSM"), its commit block (PREFLUSH|FUA) and writeback for fsync
// (WB_SYNC_ALL: REQ_SYNC only) carry no REQ_IDLE; O_DIRECT writes do
// (dio_bio_write_op: REQ_SYNC|REQ_IDLE) and keep it.
func TestJournalWriteNoIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		cat  trace.Category
		comm string
		idle bool
	}{
		{"jbd2 WSM", trace.CatWrite | trace.CatSync | trace.CatMeta, "jbd2/loop0-8", false},
		{"kworker WS", trace.CatWrite | trace.CatSync, "kworker/u8:3", false},
		{"O_DIRECT WS", trace.CatWrite | trace.CatSync, "fio", true},
	} {
		s, _ := newTest(t, hdd, replay.Options{})
		c := s.getCIC(0, 7, s.root)
		q := s.setRequest(0, c, true)
		rec := &replay.Request{ID: 1, PID: 7, Comm: tc.comm, Sector: 1 << 20, Bytes: 4096, Cat: tc.cat}
		q.idleWindow = true
		q.nextRQ = rec
		s.updateIdleWindow(0, q, c)
		if q.idleWindow != tc.idle {
			t.Errorf("%s: idle window %v, want %v", tc.name, q.idleWindow, tc.idle)
		}
	}
}

package bfq

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// bfq_check_waker (6.x), by hand: a long-think-time queue that becomes
// non-empty less than 4 ms after the last completion, which was queue W's,
// makes W its tentative waker (1 detection), then counts W again while W
// stays the last completed queue and 128·slice_idle (1.024 s) have not
// passed; the third detection sets the waker (tentative cleared) and puts
// the queue at the head of W's woken list. A completion 4 ms before, a
// short think time, or its own completion never count; a window past
// 1.024 s restarts at one.
func TestCheckWakerRule(t *testing.T) {
	const ms = int64(1_000_000)
	h := newFakeHost(true, 8, trace.Time(ms))
	h.keepLogs = true
	s := newSched(t, h, replay.Options{})
	g := s.groupFor(1)
	q, w, other := s.newQueue(g, 10, true), s.newQueue(g, 20, true), s.newQueue(g, 30, true)
	q.shortTtime = false
	at := func(tns int64, last *queue, lastDone int64) {
		s.setNow(trace.Time(tns))
		s.lastCompletedRqBfqq, s.lastCompletion = last, lastDone
		s.checkWaker(q)
	}
	at(10*ms, w, 9*ms) // 1: tentative
	if q.tentativeWaker != w || q.wakerDetections != 1 || q.waker != nil {
		t.Fatalf("after one detection: tentative %v, %d detections, waker %v", q.tentativeWaker, q.wakerDetections, q.waker)
	}
	at(20*ms, w, 16*ms) // 4 ms: not a detection
	at(30*ms, q, 29*ms) // its own completion: none
	q.shortTtime = true // short think time: none
	at(40*ms, w, 39*ms)
	q.shortTtime = false
	if q.wakerDetections != 1 {
		t.Fatalf("%d detections after the ignored arrivals, want 1", q.wakerDetections)
	}
	at(50*ms, w, 48*ms) // 2
	at(60*ms, w, 59*ms) // 3: waker
	if q.waker != w || q.tentativeWaker != nil || w.firstWoken() != q {
		t.Fatalf("after three detections: waker %v, tentative %v, woken head %v", q.waker, q.tentativeWaker, w.firstWoken())
	}
	// A confirmed waker is detected again (6.x has no early return for it).
	at(70*ms, w, 69*ms)
	if q.tentativeWaker != w || q.wakerDetections != 1 {
		t.Errorf("re-detection: tentative %v, %d detections", q.tentativeWaker, q.wakerDetections)
	}
	// Past the window (70 ms + 1.024 s) the count restarts at one.
	at(80*ms, w, 79*ms)
	at(70*ms+1024*ms+1, w, 70*ms+1024*ms)
	if q.wakerDetections != 1 || q.wakerDetectionStart != 70*ms+1024*ms+1 {
		t.Errorf("after the window: %d detections from %d", q.wakerDetections, q.wakerDetectionStart)
	}
	// Another queue's completions start a new tentative waker; the third
	// moves q to other's woken list.
	at(2000*ms, other, 1999*ms)
	at(2001*ms, other, 2000*ms)
	at(2002*ms, other, 2001*ms)
	if q.waker != other || w.firstWoken() != nil || other.firstWoken() != q {
		t.Errorf("new waker: %v; woken lists %v / %v", q.waker, w.woken, other.woken)
	}
	if n := h.count("set waker bfq20S"); n != 1 {
		t.Errorf("%d \"set waker bfq20S\" messages, want 1", n)
	}
}

// The capture's first recalc_budg message shows bfq_min_budget: 3812 in
// fs-bfq-fsync-vs-seqread, so bfq_max_budget was 121984 (32 x 3812); 512
// is the default's (16384 / 32), a scheduler with fewer than 194 budgets
// assigned.
func TestWarmState(t *testing.T) {
	w, ok := WarmState("recalc_budg: last max_budg 7624, min budg 3812")
	if !ok || w["max_budget"] != 121984 {
		t.Errorf("warm state %v, %v; want max_budget 121984", w, ok)
	}
	if w, ok := WarmState("recalc_budg: last max_budg 1024, min budg 512"); !ok || w != nil {
		t.Errorf("default budgets: %v, %v; want no state, but found", w, ok)
	}
	if _, ok := WarmState("expire (2, slow 0, num_disp 3, short_ttime 1)"); ok {
		t.Error("an expire message read as budget state")
	}
	h := newFakeHost(true, 8, 1_000_000)
	s := newSched(t, h, replay.Options{Warm: map[string]int64{"max_budget": 121984}})
	// With the budgets warm, a weight-raised queue's budget is 2 x 3812
	// (__bfq_bfqq_recalc_budget), "cur-budget = 7624" in the capture.
	if s.bfqMaxBudget() != 121984 || 2*s.minBudget() != 7624 {
		t.Errorf("warm max budget %d, min budget %d; want 121984, 3812", s.bfqMaxBudget(), s.minBudget())
	}
	if mb := s.calcMaxBudget(); mb < 121984 || mb > 121985 {
		t.Errorf("peak rate %d gives max budget %d, want 121984 back (to a sector)", s.peakRate, mb)
	}
}

// ext4's journal thread runs at best effort level 3 (journal_ioprio's
// default): BFQ gives its queue weight 50, which fs-bfq-fsync-vs-seqread
// logs ("bfq23778S calc_finish: serv 8874, w 50"); fio at the default
// level 4 gets 40.
func TestJournalThreadWeight(t *testing.T) {
	h := newFakeHost(true, 8, 1_000_000)
	s := newSched(t, h, replay.Options{})
	g := s.groupFor(1)
	s.comms[23778], s.comms[23871] = "jbd2/loop0-8", "fio"
	if q := s.newQueue(g, 23778, true); q.entity.weight != 50 {
		t.Errorf("jbd2's queue weight %d, want 50", q.entity.weight)
	}
	if q := s.newQueue(g, 23871, true); q.entity.weight != 40 {
		t.Errorf("fio's queue weight %d, want 40", q.entity.weight)
	}
}

// A BFQ started on the rotational loop device (bfq_init_queue) takes
// peak_rate = ref_rate[0] * 2 / 3 = 14000 * 2 / 3 = 9333 and rate_dur_prod
// = ref_rate[0] * ref_wr_duration[0] = 14000 * msecs_to_jiffies(7000) =
// 14000 * 1750 at HZ 250, so bfq_wr_duration is 24500000 / 9333 = 2625
// jiffies, 10.5 s: what the what-if from fs-mqdl-fsync-vs-seqread raised
// for. Warm from fs-bfq-fsync-vs-seqread's first recalc_budg message
// (bfq_max_budget 121984, bfq_calc_max_budget's timeout HZ / 8 = 31
// jiffies, 124 ms), the peak rate is ceil(121984 << 16 / 124000) = 64471
// and 24500000 / 64471 = 380 jiffies, clamped to msecs_to_jiffies(3000) =
// 750: the "raising period dur 24/3000 msec" of that capture's writer.
func TestWarmWrDuration(t *testing.T) {
	cold := newSched(t, newFakeHost(true, 8, 1_000_000), replay.Options{HZ: 250})
	if cold.peakRate != 9333 || cold.wrDuration() != 2625 {
		t.Errorf("cold: peak rate %d, wr duration %d jiffies; want 9333, 2625", cold.peakRate, cold.wrDuration())
	}
	if cold.bfqMaxBudget() != 16384 || 2*cold.minBudget() != 1024 {
		t.Errorf("cold: max budget %d, wr budget %d; want 16384, 1024", cold.bfqMaxBudget(), 2*cold.minBudget())
	}
	warm := newSched(t, newFakeHost(true, 8, 1_000_000), replay.Options{HZ: 250, Warm: map[string]int64{"max_budget": 121984}})
	if warm.peakRate != 64471 || warm.wrDuration() != 750 {
		t.Errorf("warm: peak rate %d, wr duration %d jiffies; want 64471, 750", warm.peakRate, warm.wrDuration())
	}
}

// A process whose queue existed before the trace gets the state the
// capture's first messages showed for it (WarmFrom: jbd2 in
// fs-bfq-fsync-vs-seqread, max_budget 8874, short_ttime 0) in place of
// bfq_init_bfqq's (2 x 121984 / 3 = 81322, has_short_ttime 1, inject
// limit 0); bfq_init_bfqq's inject limit for a queue without a short think
// time is 1. Its short_ttime holds until the queue has more than 80 think
// time samples (bfq_update_has_short_ttime: ttime_samples > 80, which
// (7 * s + 256) / 8 from 0 passes at the third sample: 32, 60, 84); a
// later queue of the process is new.
func TestWarmQueue(t *testing.T) {
	h := newFakeHost(true, 8, 1_000_000)
	warm := map[string]int64{"max_budget": 121984, WarmQueueKey(23778, "max_budget"): 8874, WarmQueueKey(23778, "short_ttime"): 0}
	off := newSched(t, newFakeHost(true, 8, 1_000_000), replay.Options{Warm: warm})
	oq := off.newQueue(off.groupFor(1), 23778, true)
	off.warmQueue(oq, 23778)
	if q := oq; q.maxBudget != 81322 || !q.shortTtime {
		t.Errorf("warm-queues off: max budget %d, short ttime %v; want bfq_init_bfqq's 81322, true", q.maxBudget, q.shortTtime)
	}
	s := newSched(t, h, replay.Options{Warm: warm, Features: map[string]bool{"warm-queues": true}})
	g := s.groupFor(1)
	q := s.newQueue(g, 23778, true)
	s.warmQueue(q, 23778)
	if q.maxBudget != 8874 || q.shortTtime || q.injectLimit != 1 {
		t.Errorf("warm queue: max budget %d, short ttime %v, inject limit %d; want 8874, false, 1", q.maxBudget, q.shortTtime, q.injectLimit)
	}
	for i, want := range []bool{false, false, true} {
		q.tt.samples = (7*q.tt.samples + 256) / 8 // a short think time sample
		q.tt.mean = 0
		s.updateHasShortTtime(q, nil)
		if q.shortTtime != want {
			t.Errorf("after sample %d (ttime_samples %d): short ttime %v, want %v", i+1, q.tt.samples, q.shortTtime, want)
		}
	}
	again := s.newQueue(g, 23778, true)
	s.warmQueue(again, 23778)
	if again.maxBudget != 81322 || !again.shortTtime {
		t.Errorf("second queue: max budget %d, short ttime %v; want bfq_init_bfqq's 81322, true", again.maxBudget, again.shortTtime)
	}
}

// WarmFrom reads a queue's state only from a process whose queue the
// trace did not see allocated, and a weight-raised queue's recalc_budg
// (2 x bfq_min_budget) is no max_budget.
func TestWarmFromQueues(t *testing.T) {
	msgs := []struct {
		at   trace.Time
		text string
	}{
		{0, "bfq23778S expire (4, slow 0, num_disp 0, short_ttime 0)"},
		{1, "bfq23778S recalc_budg: last max_budg 8874, min budg 3812"},
		{2, "bfq40S allocated"},
		{3, "bfq40S expire (2, slow 0, num_disp 0, short_ttime 1)"},
		{4, "bfq40S recalc_budg: last max_budg 5000, min budg 3812"},
		{5, "bfq41S raising period dur 24/3000 msec, old coeff 30, w 1200(40)"},
		{6, "bfq41S recalc_budg: last max_budg 9000, min budg 3812"},
		{7, "bfq42S recalc_budg: last max_budg 7624, min budg 3812"},
		{8, "bfq43S add_request 1"},
		{200_000_000, "bfq43S expire (2, slow 1, num_disp 0, short_ttime 0)"},
	}
	w := WarmFrom(func(yield func(trace.Time, trace.Message) bool) {
		for _, m := range msgs {
			if !yield(m.at, trace.ParseMessage(m.text)) {
				return
			}
		}
	})
	want := map[string]int64{"max_budget": 121984, "pid.23778.max_budget": 8874, "pid.23778.short_ttime": 0}
	if len(w) != len(want) {
		t.Errorf("warm %v, want %v", w, want)
	}
	for k, v := range want {
		if w[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, w[k], v, w)
		}
	}
}

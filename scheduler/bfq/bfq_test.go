package bfq

import (
	"strings"
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

func opts(kernel string, set map[string]string) replay.Options {
	return replay.Options{Kernel: kernel, Set: set}
}

// Two always-backlogged sync readers in cgroups of weight 100 and 900 get
// service in about that ratio (B-WF2Q+ in the sector domain, §1.5).
func TestWeightsShareService(t *testing.T) {
	h := newFakeHost(true, 32, 250*trace.Time(1000))
	o := opts("6.18", map[string]string{"low_latency": "0"})
	o.Weights = map[uint64]int{1181: 100, 1201: 900}
	o.CgroupPaths = map[uint64]string{1181: "/cg1", 1201: "/cg2"}
	newSched(t, h, o)
	h.add(&proc{pid: 10, cgroup: 1181, sector: 1 << 20, size: 128 << 10, depth: 4, stop: 1 << 62})
	h.add(&proc{pid: 20, cgroup: 1201, sector: 1 << 24, size: 128 << 10, depth: 4, stop: 1 << 62})
	h.run(8000 * ms)
	a, b := h.served[1181], h.served[1201]
	ratio := float64(b) / float64(a)
	t.Logf("sectors: w100 %d, w900 %d, ratio %.2f; stats %+v", a, b, ratio, h.s.Stats())
	if ratio < 7 || ratio > 11 {
		t.Errorf("service ratio %.2f, want about 9", ratio)
	}
}

// Think time follows bfq_update_io_thinktime's fixed point exactly, and
// the short/long class follows bfq_update_has_short_ttime (slice_idle/2
// from 5.12, slice_idle before).
func TestThinkTimeArithmetic(t *testing.T) {
	for _, tc := range []struct {
		kernel    string
		wantShort bool
	}{{"6.18", false}, {"5.11", true}} {
		h := newFakeHost(true, 1, 100*trace.Time(1000))
		s := newSched(t, h, opts(tc.kernel, map[string]string{"low_latency": "0"}))
		issue := func(at trace.Time, sector uint64) *replay.Request {
			h.now = at
			rq := &replay.Request{ID: uint64(at), PID: 7, Sector: sector, Bytes: 4096, Cat: trace.CatRead}
			s.Insert(at, rq)
			if got := s.Dispatch(at); got != rq {
				t.Fatalf("dispatch at %v: got %v", at, got)
			}
			return rq
		}
		// 1st arrival: last_end_request = creation+1 ns, the gap wraps and is
		// clamped to 2*slice_idle = 16 ms.
		rq := issue(0, 1000)
		q := rqOf(rq).q
		if q.tt.samples != 32 || q.tt.total != 512000000 || q.tt.mean != 16000004 {
			t.Fatalf("%s sample 1: %+v", tc.kernel, q.tt)
		}
		s.Completed(100*trace.Time(1000), rq)
		// The only busy queue idles after its completion; an arrival while it
		// idles is no sample (it is busy), so let the idle timer expire it.
		s.Timer(100*trace.Time(1000)+1, idleTimerID)
		// 2nd and 3rd: 1 ms after the completion (the queue is idle).
		rq = issue(1100*trace.Time(1000), 1008)
		if q.tt.samples != 60 || q.tt.total != 480000000 || q.tt.mean != 8000002 {
			t.Fatalf("%s sample 2: %+v", tc.kernel, q.tt)
		}
		s.Completed(1200*trace.Time(1000), rq)
		s.Timer(1200*trace.Time(1000)+1, idleTimerID)
		rq = issue(2200*trace.Time(1000), 1016)
		if q.tt.samples != 84 || q.tt.total != 452000000 || q.tt.mean != 5380953 {
			t.Fatalf("%s sample 3: %+v", tc.kernel, q.tt)
		}
		// 84 samples > 80: valid; mean 5.38 ms > 4 ms (6.18) but < 8 ms (5.11).
		if q.shortTtime != tc.wantShort {
			t.Errorf("%s: short_ttime %v, want %v", tc.kernel, q.shortTtime, tc.wantShort)
		}
	}
}

// Before 5.12 every arrival is a think-time sample, also with I/O in
// flight; from 5.12 only arrivals to a fully idle queue count (seed 004).
func TestThinkTimeOnlyIdlePeriods(t *testing.T) {
	for _, tc := range []struct {
		kernel  string
		samples uint64
	}{{"6.18", 32}, {"5.11", 60}} {
		h := newFakeHost(true, 4, 100*trace.Time(1000))
		s := newSched(t, h, opts(tc.kernel, map[string]string{"low_latency": "0"}))
		r1 := &replay.Request{ID: 1, PID: 7, Sector: 1000, Bytes: 4096, Cat: trace.CatRead}
		s.Insert(0, r1)
		s.Dispatch(0)
		r2 := &replay.Request{ID: 2, PID: 7, Sector: 1008, Bytes: 4096, Cat: trace.CatRead}
		s.Insert(50*trace.Time(1000), r2) // r1 still in flight
		if got := rqOf(r2).q.tt.samples; got != tc.samples {
			t.Errorf("%s: samples %d, want %d", tc.kernel, got, tc.samples)
		}
	}
}

// A sequential, I/O-bound reader with a short think time is kept in
// service while empty (the device idles for it); with slice_idle=0 BFQ
// switches queues at every request.
func TestIdlingKeepsShortThinkTimeReader(t *testing.T) {
	run := func(sliceIdle string) (*fakeHost, int) {
		h := newFakeHost(true, 32, 1*ms)
		h.keepLogs = true
		newSched(t, h, opts("6.18", map[string]string{"low_latency": "0", "slice_idle": sliceIdle}))
		h.add(&proc{pid: 10, sector: 1 << 20, size: 64 << 10, think: 100 * trace.Time(1000), stop: 1 << 62})
		h.add(&proc{pid: 20, sector: 1 << 26, size: 64 << 10, think: 100 * trace.Time(1000), stop: 1 << 62})
		h.run(2000 * ms)
		return h, h.count("set_in_service_queue")
	}
	hi, switchesIdle := run("8")
	h0, switchesNoIdle := run("0")
	t.Logf("slice_idle=8: %d switches, %d idle arms, %d dispatches; slice_idle=0: %d switches, %d dispatches",
		switchesIdle, hi.s.Stats().IdleArms, hi.dispatches, switchesNoIdle, h0.dispatches)
	if hi.s.Stats().IdleArms == 0 {
		t.Fatal("no idling")
	}
	if switchesIdle*10 > hi.dispatches {
		t.Errorf("with idling: %d switches for %d dispatches, want long runs per queue", switchesIdle, hi.dispatches)
	}
	if switchesNoIdle*2 < h0.dispatches {
		t.Errorf("without idling: %d switches for %d dispatches, want about one per request", switchesNoIdle, h0.dispatches)
	}
}

// Seed 000: ≤ 6.1 counts any non-root group as "groups with pending
// requests > 0", an asymmetric scenario that forces idling after every
// request of seeky sync queues; 6.2+ counts the root and tests > 1.
func TestPre62NonRootGroupIdles(t *testing.T) {
	run := func(kernel string, cg uint64) (*fakeHost, float64) {
		// A device that serves queued requests concurrently (2 ms each): the
		// throughput depends on how many queues BFQ lets in at once.
		h := newFakeHost(false, 32, 2*ms)
		h.parallel = true
		o := opts(kernel, map[string]string{"low_latency": "0"})
		// The adaptive inject limit would fill the idle gaps here: on
		// this device injected requests never slow the in-service
		// queue's, so bfq_update_inject_limit raises the limit to the
		// drive's depth. Off, the group-count rule alone decides.
		o.Features = map[string]bool{"adaptive-inject-limit": false}
		o.CgroupPaths = map[uint64]string{1: "/", 500: "/tsched-cg1"}
		newSched(t, h, o)
		for i := 0; i < 4; i++ {
			h.add(&proc{pid: uint32(100 + i), cgroup: cg, base: uint64(i) << 24, region: 1 << 22, size: 4096,
				think: 200 * trace.Time(1000), start: trace.Time(i) * 300 * ms, stop: 1 << 62})
		}
		h.run(3000 * ms)
		var tot uint64
		for _, v := range h.served {
			tot += v
		}
		return h, float64(tot) / 2 / 3 // KiB/s over 3 s
	}
	h61, bw61 := run("6.1", 500)
	h618, bw618 := run("6.18", 500)
	_, bw61root := run("6.1", 1)
	t.Logf("non-root 6.1: %.0f KiB/s (%d idle arms), 6.18: %.0f KiB/s (%d idle arms); root 6.1: %.0f KiB/s",
		bw61, h61.s.Stats().IdleArms, bw618, h618.s.Stats().IdleArms, bw61root)
	if bw618 < 1.5*bw61 {
		t.Errorf("6.18 non-root %.0f KiB/s, want well above 6.1's %.0f", bw618, bw61)
	}
	if bw61root < 1.5*bw61 {
		t.Errorf("6.1 root %.0f KiB/s, want well above 6.1 non-root %.0f", bw61root, bw61)
	}
}

// Queues created within 180 ms in one group are stably merged 600 ms
// after creation (5.13+, rotational: delayed); 5.12 has no stable merge.
func TestStableMergeAfterDelay(t *testing.T) {
	run := func(kernel string) *fakeHost {
		h := newFakeHost(true, 32, 200*trace.Time(1000))
		h.keepLogs = true
		newSched(t, h, opts(kernel, nil))
		for i := 0; i < 4; i++ {
			h.add(&proc{pid: uint32(100 + i), sector: uint64(i) << 21, size: 4096, think: 8 * ms,
				start: trace.Time(i) * ms, stop: 1 << 62})
		}
		h.run(800 * ms)
		return h
	}
	h := run("6.18")
	l, ok := h.first("scheduling merge with queue")
	if !ok {
		t.Fatal("6.18: no stable merge")
	}
	if l.t < 600*ms || l.t > 700*ms {
		t.Errorf("6.18: first merge at %v, want just after 0.6 s", l.t)
	}
	if h.count("bfqSHARED-S") == 0 || h.s.Stats().Merges < 3 {
		t.Errorf("6.18: %d merges, %d shared-queue messages", h.s.Stats().Merges, h.count("bfqSHARED-S"))
	}
	t.Logf("6.18: first merge %v %q, merges %d", l.t, l.text, h.s.Stats().Merges)
	if h := run("5.12"); h.s.Stats().Merges != 0 {
		t.Errorf("5.12: %d merges, want none", h.s.Stats().Merges)
	}
}

// Seed 004: before 5.12 in_serv_last_pos keeps the previous in-service
// queue's position when a new queue is set in service, so an arrival of
// the previous queue looks close to the new one: a false cooperator merge.
func TestFalseCooperatorMerge(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		merge  bool
	}{{"5.11", true}, {"6.18", false}} {
		h := newFakeHost(true, 32, 100*trace.Time(1000))
		h.keepLogs = true
		s := newSched(t, h, opts(tc.kernel, map[string]string{"low_latency": "0", "slice_idle": "0"}))
		a1 := &replay.Request{ID: 1, PID: 10, Sector: 1 << 22, Bytes: 4096, Cat: trace.CatRead}
		s.Insert(0, a1)
		s.Dispatch(0) // A in service, in_serv_last_pos = a1's end
		b1 := &replay.Request{ID: 2, PID: 20, Sector: 1 << 28, Bytes: 4096, Cat: trace.CatRead}
		s.Insert(10*trace.Time(1000), b1)
		c1 := &replay.Request{ID: 3, PID: 30, Sector: 1 << 29, Bytes: 4096, Cat: trace.CatRead}
		s.Insert(20*trace.Time(1000), c1)
		s.Completed(100*trace.Time(1000), a1) // A empty, no idling: expired
		s.setNow(100 * trace.Time(1000))
		if q := s.setInService(); q == nil || q.pid == 10 {
			t.Fatalf("%s: set in service %v", tc.kernel, q)
		} // B or C freshly in service, nothing dispatched yet
		a2 := &replay.Request{ID: 4, PID: 10, Sector: a1.End(), Bytes: 4096, Cat: trace.CatRead}
		s.Insert(150*trace.Time(1000), a2)
		got := h.count("scheduling merge with queue") > 0
		if got != tc.merge {
			t.Errorf("%s: merge %v, want %v", tc.kernel, got, tc.merge)
		}
	}
}

// Four sequential readers of distant regions, slice_idle=1 ms (Jan Kara's
// reproducer): no cooperator merge on 6.18.
func TestNoFalseMergeSequentialReaders(t *testing.T) {
	for _, k := range []string{"5.11", "5.12", "6.18"} {
		h := newFakeHost(true, 32, 150*trace.Time(1000))
		h.keepLogs = true
		newSched(t, h, opts(k, map[string]string{"slice_idle_us": "1000"}))
		for i := 0; i < 4; i++ {
			h.add(&proc{pid: uint32(100 + i), sector: uint64(i+1) << 21, size: 4096, think: 50 * trace.Time(1000),
				start: trace.Time(i) * 300 * ms, stop: 1 << 62})
		}
		h.run(1500 * ms)
		t.Logf("%s: merges %d, cooperator messages %d", k, h.s.Stats().Merges, h.count("scheduling merge"))
		if k != "5.11" && h.s.Stats().Merges != 0 {
			t.Errorf("%s: %d merges of distant sequential readers", k, h.s.Stats().Merges)
		}
	}
}

// __bfq_bfqq_recalc_budget's table.
func TestBudgetFeedback(t *testing.T) {
	h := newFakeHost(true, 1, ms)
	s := newSched(t, h, opts("6.18", nil))
	g := s.root
	minB := s.minBudget() // 512 before 194 budgets are assigned
	s.maxBudget = 16384
	for _, tc := range []struct {
		reason, dispatched, service, start, want int
		sync                                     bool
	}{
		{expTooIdle, 1, 0, 4096, 8192, true},
		{expTooIdle, 0, 0, 4096, 4096 - 4*minB, true},
		{expTooIdle, 0, 0, 2 * minB, minB, true},
		{expBudgetTimeout, 0, 0, 4096, 8192, true},
		{expBudgetTimeout, 0, 0, 12000, 16384, true},
		{expBudgetExhausted, 0, 0, 4096, 16384, true},
		{expBudgetExhausted, 0, 0, 1000, 4000, true},
		{expNoMoreRequests, 0, 300, 4096, minB, true},
		{expNoMoreRequests, 0, 3000, 4096, 3000, true},
		{expPreempted, 0, 0, 4096, 4096, true},
		{expNoMoreRequests, 0, 0, 1000, 16384, false},
	} {
		q := s.newQueue(g, 1, tc.sync)
		q.maxBudget = tc.start
		q.dispatched = tc.dispatched
		q.entity.service = tc.service
		s.recalcBudget(q, tc.reason)
		if q.maxBudget != tc.want {
			t.Errorf("reason %d sync %v from %d: max_budget %d, want %d", tc.reason, tc.sync, tc.start, q.maxBudget, tc.want)
		}
	}
}

// A sequential reader's budget grows by BUDGET_EXHAUSTED feedback, and
// slow (seeky) queues are charged time: their slots cost them more.
func TestBudgetGrowsForSequentialReader(t *testing.T) {
	h := newFakeHost(true, 32, 100*trace.Time(1000))
	h.keepLogs = true
	newSched(t, h, opts("6.18", map[string]string{"low_latency": "0"}))
	h.add(&proc{pid: 10, sector: 1 << 20, size: 128 << 10, depth: 2, stop: 1 << 62})
	h.add(&proc{pid: 20, sector: 1 << 26, size: 128 << 10, depth: 2, stop: 1 << 62})
	h.run(3000 * ms)
	var budgets []string
	for _, l := range h.logs {
		if strings.Contains(l.text, "set_in_service_queue") {
			budgets = append(budgets, l.text[strings.LastIndex(l.text, " ")+1:])
		}
	}
	t.Logf("budgets: %v ... stats %+v", budgets[:min(8, len(budgets))], h.s.Stats())
	if h.s.Stats().Expirations[expBudgetExhausted] == 0 {
		t.Fatal("no BUDGET_EXHAUSTED")
	}
	if budgets[0] == budgets[len(budgets)-1] {
		t.Errorf("budget did not change: %v", budgets)
	}
}

func TestOptions(t *testing.T) {
	h := newFakeHost(true, 1, ms)
	if _, err := New(h, replay.Options{Kernel: "4.19"}); err == nil || !strings.Contains(err.Error(), "6.18") {
		t.Errorf("unknown kernel: %v", err)
	}
	if _, err := New(h, replay.Options{Features: map[string]bool{"nope": true}}); err == nil || !strings.Contains(err.Error(), "stable-merge") {
		t.Errorf("unknown feature: %v", err)
	}
	if _, err := New(h, replay.Options{Set: map[string]string{"quantum": "4"}}); err == nil || !strings.Contains(err.Error(), "slice_idle") {
		t.Errorf("unknown attribute: %v", err)
	}
	if _, err := New(h, replay.Options{Weights: map[uint64]int{5: 1001}}); err == nil {
		t.Error("weight 1001 accepted")
	}
	s, err := New(h, replay.Options{Set: map[string]string{"slice_idle_us": "2000", "timeout_sync": "200", "rotational": "0",
		"nr_requests": "64", "strict_guarantees": "1", "max_budget": "4096"}, HZ: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if s.sliceIdle != 8000000 || s.timeoutJ != 200 || s.rotational || s.maxBudget != 4096 || !s.strictGuarantees {
		t.Errorf("tunables: %+v", s)
	}
	s, _ = New(h, replay.Options{Kernel: "6.1", Features: map[string]bool{"legacy-group-count": false}})
	if s.feat.legacyGroupCount || !s.feat.stableMerge {
		t.Errorf("6.1 with override: %+v", s.feat)
	}
	if s.constTimeoutJ != 31 || s.jiffiesToMsecs(s.timeoutJ) != 124 {
		t.Errorf("HZ=250 timeout: %d jiffies, %d ms", s.timeoutJ, s.jiffiesToMsecs(s.timeoutJ))
	}
	for _, f := range Features() {
		if f.Name == "legacy-group-count" && strings.Join(f.Kernels, ",") != "5.10,5.11,5.12,5.13,6.1" {
			t.Errorf("legacy-group-count kernels %v", f.Kernels)
		}
		if f.Name == "stable-merge" && strings.Join(f.Kernels, ",") != "5.13,6.1,6.2,6.18" {
			t.Errorf("stable-merge kernels %v", f.Kernels)
		}
	}
}

// With low_latency a new sync queue is weight-raised ×30 (interactive).
func TestWeightRaisingNewQueue(t *testing.T) {
	h := newFakeHost(true, 32, 200*trace.Time(1000))
	h.keepLogs = true
	newSched(t, h, opts("6.18", nil))
	h.add(&proc{pid: 10, sector: 1 << 20, size: 4096, think: ms, stop: 1 << 62})
	h.run(50 * ms)
	l, ok := h.first("raising period")
	if !ok || !strings.Contains(l.text, "old coeff 30, w 1200(40)") {
		t.Fatalf("raising message: %q", l.text)
	}
	if !strings.HasPrefix(l.text, "bfq10S ") || l.pid != 10 || l.cgroup != 1 {
		t.Errorf("attribution: %+v", l)
	}
}

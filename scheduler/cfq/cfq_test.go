package cfq

import (
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

func newTest(t *testing.T, dev devModel, o replay.Options) (*Scheduler, *harness) {
	t.Helper()
	h := &harness{dev: dev, timers: map[int]uint64{}, keepLogs: true}
	s, err := New(h, o)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	return s, h
}

func TestPrioSliceTable(t *testing.T) {
	s, _ := newTest(t, hdd, replay.Options{})
	ms := time.Millisecond
	for p, want := range []time.Duration{180, 160, 140, 120, 100, 80, 60, 40} {
		if got := time.Duration(s.prioSlice(true, p)); got != want*ms {
			t.Errorf("sync prio %d: %v, want %v", p, got, want*ms)
		}
	}
	for p, want := range []time.Duration{72, 64, 56, 48, 40, 32, 24, 16} {
		if got := time.Duration(s.prioSlice(false, p)); got != want*ms {
			t.Errorf("async prio %d: %v, want %v", p, got, want*ms)
		}
	}
	if got := s.prioToMaxrq(&queue{prio: 4}); got != 16 {
		t.Errorf("maxrq at prio 4 = %d, want 16", got)
	}
}

func TestThinkTimeSamples(t *testing.T) {
	var tt ttime
	want := []uint64{32, 60, 84, 105, 123, 139}
	for i, w := range want {
		tt.update(int64(i+1)*1000, 8e6)
		if tt.samples != w {
			t.Fatalf("update %d: samples %d, want %d", i+1, tt.samples, w)
		}
		if tt.valid() != (i >= 2) {
			t.Fatalf("update %d: valid %v", i+1, tt.valid())
		}
	}
	// Gaps are clamped at 2*c.
	var u ttime
	for i := 0; i < 50; i++ {
		u.lastEnd = int64(i) * 1e9
		u.update(int64(i)*1e9+5e8, 1e6)
	}
	if u.mean > 21e5 || u.mean < 19e5 {
		t.Fatalf("clamped mean %d, want about 2e6", u.mean)
	}
}

func TestVfraction(t *testing.T) {
	s, _ := newTest(t, hdd, replay.Options{Weights: map[uint64]int{1: 1000, 2: 100}, CgroupPaths: map[uint64]string{1: "/a", 2: "/b"}})
	a, b := s.groupFor(0, 1), s.groupFor(0, 2)
	s.groupNotifyQueueAdd(a)
	if a.vfr != 4096 {
		t.Fatalf("lone group vfraction %d, want 4096", a.vfr)
	}
	s.groupNotifyQueueAdd(b)
	if b.vfr != 372 {
		t.Fatalf("b vfraction %d, want 372", b.vfr)
	}
	// a's snapshot is refreshed only at re-insertion (cfq_group_served).
	if a.vfr != 4096 {
		t.Fatalf("a vfraction changed before re-insertion: %d", a.vfr)
	}
	s.groupTreeDel(a)
	s.groupTreeAdd(a)
	if a.vfr != 3723 {
		t.Fatalf("a vfraction %d, want 3723", a.vfr)
	}
	if gs := time.Duration(s.groupSlice(a)); gs < 272*time.Millisecond || gs > 273*time.Millisecond {
		t.Fatalf("group slice %v, want about 272.7ms", gs)
	}
}

func req(id uint64, sector uint64) *replay.Request {
	r := &replay.Request{ID: id, Sector: sector, Bytes: 4096, Cat: trace.CatRead}
	r.Sched = &rqData{sync: true}
	return r
}

func TestChooseReq(t *testing.T) {
	s, _ := newTest(t, hdd, replay.Options{})
	last := uint64(100000)
	ahead, behind := req(1, last+1000), req(2, last-400)
	// Back seek of 400 sectors costs 800: the forward one (1000) still loses.
	if got := s.chooseReq(ahead, behind, last); got != behind {
		t.Errorf("back seek 400 (cost 800) vs forward 1000: chose %d", got.ID)
	}
	behind2 := req(3, last-600) // cost 1200 > 1000
	if got := s.chooseReq(ahead, behind2, last); got != ahead {
		t.Errorf("back seek 600 (cost 1200) vs forward 1000: chose %d", got.ID)
	}
	far := req(4, last-40000) // beyond 16 MiB = 32768 sectors: wraps
	if got := s.chooseReq(far, req(5, last+1e7), last); got.ID != 5 {
		t.Errorf("wrapped request chosen over a forward one")
	}
	w1, w2 := req(6, 10), req(7, 20)
	if got := s.chooseReq(w2, w1, last); got != w1 {
		t.Errorf("both wrapped: want the lowest sector")
	}
	async := req(8, last)
	async.Sched.(*rqData).sync = false
	if got := s.chooseReq(async, far, last); got != far {
		t.Errorf("sync must win over async")
	}
}

func TestTunables(t *testing.T) {
	s, _ := newTest(t, hdd, replay.Options{Set: map[string]string{"slice_idle_us": "2500", "quantum": "0", "target_latency": "150", "low_latency": "0", "back_seek_penalty": "0"}})
	a := s.Attributes()
	if a["slice_idle"] != "2" || a["slice_idle_us"] != "2500" || a["quantum"] != "1" || a["target_latency_us"] != "150000" ||
		a["low_latency"] != "0" || a["back_seek_penalty"] != "1" || a["fifo_expire_sync"] != "125" || a["slice_async_rq"] != "2" {
		t.Fatalf("attributes %v", a)
	}
	if len(a) != 17 {
		t.Fatalf("%d attributes, want 17", len(a))
	}
	ss, _ := newTest(t, ssd, replay.Options{})
	if ss.SliceIdle() != 0 {
		t.Fatalf("non-rotational default slice_idle %v, want 0", ss.SliceIdle())
	}
	ss, _ = newTest(t, ssd, replay.Options{Set: map[string]string{"slice_idle": "8"}})
	if ss.SliceIdle() != 8*time.Millisecond {
		t.Fatalf("explicit slice_idle ignored")
	}
	for _, o := range []replay.Options{{Set: map[string]string{"nope": "1"}}, {Kernel: "5.0"}, {Features: map[string]bool{"nope": true}},
		{Weights: map[uint64]int{1: 5000}}, {Set: map[string]string{"quantum": "x"}}} {
		if _, err := New(&harness{dev: hdd}, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if s.Name() != "cfq" {
		t.Fatal("name")
	}
}

// TestLogFormat checks the decision log's CFQ form on a short run.
func TestLogFormat(t *testing.T) {
	s, hh := newTest(t, hdd, replay.Options{Features: map[string]bool{FeatureLogRequests: true}})
	rq := &replay.Request{ID: 1, PID: 1234, Sector: 2048, Bytes: 65536, Cat: trace.CatRead, Queued: 0}
	s.Insert(0, rq)
	if got := s.Dispatch(0); got != rq {
		t.Fatalf("dispatch returned %v", got)
	}
	s.Completed(trace.Time(5e6), rq)
	joined := strings.Join(hh.logs, "\n")
	for _, want := range []string{"cfq1234S  insert_request", "cfq1234S  set_active wl_class:0 wl_type:2",
		"cfq1234S  dispatched a request", "cfq1234S  set_slice=100000000", "cfq1234S  arm_idle: 8000000 group_idle: 0",
		"cfq1234S  activate rq, drv=1", "cfq1234S  complete rqnoidle 0", "cfq workload slice:"} {
		if !strings.Contains(joined, want) {
			t.Errorf("log lacks %q:\n%s", want, joined)
		}
	}
	for _, l := range hh.logs {
		m := trace.ParseMessage(l)
		if m.Sched != "cfq" || (m.PID != 0 && (m.PID != 1234 || !m.Sync)) {
			t.Errorf("line %q parses as %+v", l, m)
		}
	}
	if !s.timerPending || hh.timers[idleTimer] == 0 {
		t.Fatal("idle timer not armed on a rotational disk")
	}
	// The timer fires with the queue still empty: idling failed, the queue
	// expires and leaves the tree (busy_queues counts the active queue).
	s.Timer(trace.Time(13e6), idleTimer)
	if s.active != nil || s.busyQueues != 0 || len(s.gst) != 0 {
		t.Fatalf("after the idle timer: active %v, busy %d, groups %d", s.active, s.busyQueues, len(s.gst))
	}
}

// TestPreemptSyncOverAsync: a sync request preempts an async active queue
// (cfq_should_preempt rule 5), then waits for the async request in flight
// to drain (cfq_may_dispatch).
func TestPreemptSyncOverAsync(t *testing.T) {
	s, hh := newTest(t, hdd, replay.Options{})
	var w []*replay.Request
	for i := 0; i < 4; i++ {
		w = append(w, &replay.Request{ID: uint64(i + 1), PID: 10, Sector: uint64(i) * 8, Bytes: 4096, Cat: trace.CatWrite})
		s.Insert(0, w[i])
	}
	if rq := s.Dispatch(0); rq != w[0] || s.active == nil || s.active.sync {
		t.Fatal("async queue not active")
	}
	read := &replay.Request{ID: 9, PID: 11, Sector: 1 << 20, Bytes: 4096, Cat: trace.CatRead}
	s.Insert(1000, read)
	if !strings.Contains(strings.Join(hh.logs, "\n"), "cfq11S  preempt") {
		t.Fatalf("no preemption:\n%s", strings.Join(hh.logs, "\n"))
	}
	if rq := s.Dispatch(1000); rq != nil {
		t.Fatalf("dispatched %d with an async request in flight", rq.ID)
	}
	s.Completed(2000, w[0])
	if rq := s.Dispatch(2000); rq != read {
		t.Fatalf("dispatched %v after preemption, want the read\n%s", rq, strings.Join(hh.logs, "\n"))
	}
}

// TestMergeHooks: front merges only within the process's queue; a sync
// bio never joins an async request.
func TestMergeHooks(t *testing.T) {
	s, _ := newTest(t, hdd, replay.Options{})
	a := &replay.Request{ID: 1, PID: 5, Sector: 1000, Bytes: 4096, Cat: trace.CatRead}
	w := &replay.Request{ID: 2, PID: 5, Sector: 5000, Bytes: 4096, Cat: trace.CatWrite}
	s.Insert(0, a)
	s.Insert(0, w)
	bio := &replay.Bio{PID: 5, Sector: 992, Bytes: 4096, Cat: trace.CatRead}
	if got := s.RequestMerge(0, bio); got != a {
		t.Fatalf("front merge candidate %v", got)
	}
	if s.RequestMerge(0, &replay.Bio{PID: 6, Sector: 992, Bytes: 4096, Cat: trace.CatRead}) != nil {
		t.Fatal("other process found a front merge")
	}
	if s.AllowMerge(w, &replay.Bio{PID: 5, Sector: 5008, Bytes: 4096, Cat: trace.CatRead}) {
		t.Fatal("sync bio allowed into async request")
	}
	if !s.AllowMerge(a, bio) {
		t.Fatal("own queue merge refused")
	}
	a.Sector, a.Bytes = 992, 8192
	s.RequestMerged(0, a, replay.FrontMerge)
	b := &replay.Request{ID: 3, PID: 5, Sector: 1008, Bytes: 4096, Cat: trace.CatRead}
	s.Insert(0, b)
	s.RequestsMerged(0, a, b)
	if n := len(s.procs[5].q[1].sortList); n != 1 || s.rqQueued != 2 {
		t.Fatalf("after requests merge: sort list %d, queued %d", n, s.rqQueued)
	}
}

package bfq

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// serialDev serves one request at a time, each in lat.
type serialDev struct{ lat, busy trace.Time }

func (d *serialDev) Issue(now trace.Time, rq *replay.Request) trace.Time {
	d.busy = max(now, d.busy) + d.lat
	return d.busy
}
func (d *serialDev) Done(trace.Time, *replay.Request) {}

// TestLaterMergeStaysInQueue: after a bio back-merges into a request,
// blk_mq_sched_try_merge (block/blk-mq-sched.c) calls attempt_back_merge
// (block/blk-merge.c), which looks only at elv_latter_request: BFQ's
// next_request, elv_rb_latter_request, the next request on the rb tree
// the request is on, its own bfqq's sort_list. A request of another queue
// starting where the grown request ends is not a candidate. Here pid 10's
// sync write [0,8) waits in its sync queue and its async write [16,24)
// (writeback: no REQ_SYNC) in its async queue, which is never a
// cooperator (bfq_may_be_close_cooperator wants a sync queue); its sync
// bio [8,16) then joins [0,8). 3 requests stay (pid 1's, [0,16) and
// [16,24)), no request merge. The model before looked the neighbour up
// in the engine's sector hash, across queues, and merged [16,24) in.
func TestLaterMergeStaysInQueue(t *testing.T) {
	sw, aw := trace.CatWrite|trace.CatSync, trace.CatWrite
	recs := []replay.Record{
		{PID: 1, Sector: 1 << 22, Bytes: 4096, Cat: trace.CatRead, Queue: 0},
		{PID: 10, Sector: 0, Bytes: 4096, Cat: sw, Queue: 10_000},
		{PID: 10, Sector: 16, Bytes: 4096, Cat: aw, Queue: 20_000},
		{PID: 10, Sector: 8, Bytes: 4096, Cat: sw, Queue: 30_000},
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(w, replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return New(h, opts("6.18", nil)) },
		Device:       &serialDev{lat: 1_000_000},
		Queue:        replay.Queue{Depth: 1, NrRequests: 64, MaxSectors: 2560},
		Mode:         replay.Open,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.BackMerges != 1 || res.RequestMerges != 0 || res.Requests != 3 {
		t.Errorf("%d bio back merges, %d request merges, %d requests; want 1, 0, 3",
			res.BackMerges, res.RequestMerges, res.Requests)
	}
}

// TestLimitDepth: bfq_update_depths on a queue of nr_requests 256. Linux
// 6.17 on (6.18) computes async_depths from nr_requests: {256>>1,
// (256*3)>>2} = {128, 192}, with a weight-raised queue busy {(256*3)>>4,
// (256*6)>>4} = {48, 96}. Before (6.2), word_depths of a 64-bit word
// (sbitmap_calculate_shift: 4 << 6 = 256 is not more than 256): {64>>1,
// (64*3)>>2} = {32, 48}, {(64*3)>>4, (64*6)>>4} = {12, 24}, scaled to the
// queue as (nr_requests * depth) >> shift: the same 128, 192, 48, 96. They
// differ where the word's shift rounds: nr_requests 48 has words of 8
// (4 << 3 = 32 <= 48), so a weight-raised async depth is (8*3)>>4 = 1 a
// word, (48*1)>>3 = 6 tags, where 6.18 gives (48*3)>>4 = 9. Sync reads
// are not limited.
func TestLimitDepth(t *testing.T) {
	read := &replay.Bio{PID: 1, Bytes: 4096, Cat: trace.CatRead}
	async := &replay.Bio{PID: 1, Bytes: 4096, Cat: trace.CatWrite}
	syncw := &replay.Bio{PID: 1, Bytes: 4096, Cat: trace.CatWrite | trace.CatSync}
	for _, tc := range []struct {
		kernel string
		nr     int
		wr     int
		bio    *replay.Bio
		want   int
	}{
		{"6.18", 256, 0, read, 0}, {"6.18", 256, 0, async, 128}, {"6.18", 256, 0, syncw, 192},
		{"6.18", 256, 1, async, 48}, {"6.18", 256, 1, syncw, 96}, {"6.18", 256, 1, read, 0},
		{"6.2", 256, 0, async, 128}, {"6.2", 256, 0, syncw, 192}, {"6.2", 256, 1, async, 48}, {"6.2", 256, 1, syncw, 96},
		{"6.18", 48, 1, async, 9}, {"6.2", 48, 1, async, 6}, {"6.18", 48, 1, syncw, 18}, {"6.2", 48, 1, syncw, 18},
	} {
		h := newFakeHost(false, 32, 100*trace.Time(1000))
		h.q.NrRequests = tc.nr
		s := newSched(t, h, opts(tc.kernel, nil))
		s.wrBusy = tc.wr
		if got := s.LimitDepth(0, tc.bio); got != tc.want {
			t.Errorf("%s, nr_requests %d, wr_busy %d, %v: limit %d, want %d", tc.kernel, tc.nr, tc.wr, tc.bio.Cat.RWBS(tc.bio.Bytes), got, tc.want)
		}
	}
}

// TestIOPrio: bfq_ioprio_to_weight gives a BE queue (IOPRIO_NR_LEVELS -
// level) * BFQ_WEIGHT_CONVERSION_COEFF: be/0 weighs 80, be/7 10, so two
// always-backlogged sync readers share the service about 8:1; and an RT
// queue's class tree is looked up before BE's (bfq_lookup_next_entity walks
// the classes in order), so an RT reader gets nearly all of it.
func TestIOPrio(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   string
		lo, hi float64
	}{{"be/0 vs be/7", "be/0", "be/7", 6, 10.5}, {"rt/4 vs be/4", "rt/4", "be/4", 30, 1e9}} {
		pa, err := replay.ParseIOPrio(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := replay.ParseIOPrio(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		h := newFakeHost(true, 32, 250*trace.Time(1000))
		o := opts("6.18", map[string]string{"low_latency": "0"})
		o.IOPrio = map[uint32]replay.IOPrio{10: pa, 20: pb}
		newSched(t, h, o)
		h.add(&proc{pid: 10, sector: 1 << 20, size: 128 << 10, depth: 4, stop: 1 << 62})
		h.add(&proc{pid: 20, sector: 1 << 24, size: 128 << 10, depth: 4, stop: 1 << 62})
		h.run(4000 * ms)
		a, b := h.servedPID[10], h.servedPID[20]
		ratio := float64(a) / float64(max(b, 1))
		t.Logf("%s: sectors %d vs %d, ratio %.2f", tc.name, a, b, ratio)
		if ratio < tc.lo || ratio > tc.hi {
			t.Errorf("%s: service ratio %.2f, want %.1f..%.1f", tc.name, ratio, tc.lo, tc.hi)
		}
	}
	for _, bad := range []string{"be/8", "rt", "xx/1", "be/-1"} {
		if _, err := replay.ParseIOPrio(bad); err == nil {
			t.Errorf("ParseIOPrio(%q) accepted", bad)
		}
	}
	if p := replay.NiceIOPrio(-20, false, false); p.String() != "be/0" {
		t.Errorf("nice -20: %v, want be/0", p)
	}
	if p := replay.NiceIOPrio(19, false, false); p.String() != "be/7" {
		t.Errorf("nice 19: %v, want be/7 ((19+20)/5)", p)
	}
}

// TestRequestOverLimit: bfqq_request_over_limit as bfq_limit_depth calls it,
// by hand on fs-bfq-writeback's setup: the flusher's async queue (be/4:
// weight 40) in the root group beside the reader's group of weight 750,
// nr_requests 256, no queue weight-raised. The async limit is 128 (6.18:
// async_depths[0][0] = 256>>1; 6.2: word depth 32 of a 64-bit word,
// (256*32)>>6); at level 0 (the queue itself) wsum is the root's RT tree's
// times IOPRIO_BE_NR plus its BE tree's, 0*8 + 40 + 750 = 790, so the
// queue's share is DIV_ROUND_CLOSEST(128*40, 790) = 6. With 6 allocated it
// is over the limit (the capture: "too many requests: allocated 6 limit 6
// level 0" at 1.26, 2.17 and 2.27 s) and its shallow depth drops to 1: on
// 6.18 one tag of the whole bitmap (limit = 1; data->shallow_depth is in
// tags of the whole sbitmap since 42e6c6ce03fd), on 6.2 one bit a word,
// (256*1)>>6 = 4 tags. Sync reads are not limited while their queue is
// under its share.
func TestRequestOverLimit(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		over   int
	}{{"6.18", 1}, {"6.2", 4}} {
		h := newFakeHost(false, 32, 100*trace.Time(1000))
		h.q.NrRequests = 256
		o := opts(tc.kernel, map[string]string{"low_latency": "0"})
		o.Weights = map[uint64]int{761: 750}
		o.Features = map[string]bool{"entity-request-limit": true}
		s := newSched(t, h, o)
		id := uint64(0)
		insert := func(pid uint32, cg uint64, cat trace.Category) *replay.Request {
			id++
			rq := &replay.Request{ID: id, PID: pid, Cgroup: cg, Sector: id * 2048, Bytes: 4096, Cat: cat}
			s.Insert(0, rq)
			return rq
		}
		insert(2, 761, trace.CatRead|trace.CatSync) // the reader's group on the root's tree
		async := &replay.Bio{PID: 1, Cgroup: 0, Bytes: 1 << 20, Cat: trace.CatWrite}
		read := &replay.Bio{PID: 2, Cgroup: 761, Bytes: 4096, Cat: trace.CatRead | trace.CatSync}
		if got := s.LimitDepth(0, async); got != 128 {
			t.Fatalf("%s: flusher without a queue: depth %d, want 128", tc.kernel, got)
		}
		for n := 1; n <= 6; n++ {
			insert(1, 0, trace.CatWrite)
			want := 128
			if n == 6 {
				want = tc.over
			}
			if got := s.LimitDepth(0, async); got != want {
				t.Errorf("%s: flusher with %d allocated: depth %d, want %d", tc.kernel, n, got, want)
			}
		}
		if got := s.LimitDepth(0, read); got != 0 {
			t.Errorf("%s: reader with 1 allocated: depth %d, want 0 (full)", tc.kernel, got)
		}
		s.feat.entityLimit = false
		if got := s.LimitDepth(0, async); got != 128 {
			t.Errorf("%s: without entity-request-limit: depth %d, want the async depth 128", tc.kernel, got)
		}
	}
}

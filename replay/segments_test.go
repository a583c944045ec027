package replay_test

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/trace"
)

// issued replays recs in open loop through mq-deadline on a device of 1 ms
// and returns the requests issued (D), in order.
func issued(t *testing.T, recs []replay.Record) []trace.Event {
	t.Helper()
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var ds []trace.Event
	_, err = replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 1_000_000}, Mode: replay.Open,
		Queue: replay.Queue{Depth: 64}}, func(e *trace.Event) error {
		if e.Action == trace.ActionIssue {
			ds = append(ds, *e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestSegmentLimit: jbd2 queues its journal blocks as one-page bios (WSM
// 8 sectors) under a plug; fs-mqdl-untar's journal requests stop at 1024
// sectors, 128 bios (121 of its 128 journal requests), though max_sectors
// is 2560. The kernel: blk_attempt_plug_merge -> bio_attempt_back_merge
// -> ll_back_merge_fn -> ll_new_hw_segment refuses a bio when
// req->nr_phys_segments + nr_phys_segs > blk_rq_get_max_segments(req)
// (block/blk-merge.c), and queue/max_segments is BLK_MAX_SEGMENTS, 128,
// for a driver that sets none (blk_validate_limits; the loop driver).
// 130 contiguous one-page bios: a request of 128 bios (1024 sectors) and
// one of 2 (16); without the limit one request of 1040 sectors.
func TestSegmentLimit(t *testing.T) {
	wr := trace.CatWrite | trace.CatSync | trace.CatMeta
	var recs []replay.Record
	for i := range 130 {
		recs = append(recs, replay.Record{PID: 1, Sector: uint64(1000 + 8*i), Bytes: 4096, Cat: wr,
			Queue: trace.Time(1000 * i), Open: true, Plugged: true, PlugEnd: i == 129})
	}
	ds := issued(t, recs)
	if len(ds) != 2 || ds[0].Sector != 1000 || ds[0].Bytes != 1024*512 || ds[1].Sector != 2024 || ds[1].Bytes != 16*512 {
		for _, d := range ds {
			t.Logf("D %d + %d", d.Sector, d.Bytes>>9)
		}
		t.Fatalf("%d requests issued, want 1000 + 1024 and 2024 + 16 (128 segments a request)", len(ds))
	}
}

// TestPlugFlushSize: blk_add_rq_to_plug (block/blk-mq.c) flushes a plug
// before it takes a new request when rq_list_peek(&plug->mq_list), the
// list's head (include/linux/blk-mq.h: rl->head; requests are added at
// the tail, rq_list_add_tail), its oldest request, has
// BLK_PLUG_FLUSH_SIZE (128 KiB) or more, or when it holds
// BLK_MAX_REQUEST_COUNT (32) requests. A plugged process queues a 128 KiB
// bio at 0, then 4 KiB bios elsewhere at 10 us and 20 us, and unplugs:
// the first request is issued when the second bio gets its request
// (10 us), the other two at the unplug (20 us). With a 4 KiB request
// first, then 128 KiB, 4 KiB and 4 KiB (10, 20, 30 us), nothing is
// flushed before the unplug (30 us), as sync in fs-bfq-untar keeps 32
// requests of 512 KiB behind a first of 4 KiB. Then 34 scattered 4 KiB
// bios 1 us apart under one plug: the first 32 are issued when the 33rd
// gets its request (32 us), the last two at the unplug (33 us).
func TestPlugFlushSize(t *testing.T) {
	const us = trace.Time(1000)
	wr := trace.CatWrite
	recs := []replay.Record{
		{PID: 1, Sector: 0, Bytes: 128 << 10, Cat: wr, Queue: 0, Open: true, Plugged: true},
		{PID: 1, Sector: 10000, Bytes: 4096, Cat: wr, Queue: 10 * us, Open: true, Plugged: true},
		{PID: 1, Sector: 20000, Bytes: 4096, Cat: wr, Queue: 20 * us, Open: true, Plugged: true, PlugEnd: true},
	}
	ds := issued(t, recs)
	want := map[uint64]trace.Time{0: 10 * us, 10000: 20 * us, 20000: 20 * us}
	if len(ds) != 3 {
		t.Fatalf("%d requests issued, want 3", len(ds))
	}
	for _, d := range ds {
		if d.Time != want[d.Sector] {
			t.Errorf("request at %d issued at %v, want %v", d.Sector, d.Time, want[d.Sector])
		}
	}

	recs = []replay.Record{
		{PID: 1, Sector: 0, Bytes: 4096, Cat: wr, Queue: 0, Open: true, Plugged: true},
		{PID: 1, Sector: 10000, Bytes: 128 << 10, Cat: wr, Queue: 10 * us, Open: true, Plugged: true},
		{PID: 1, Sector: 20000, Bytes: 4096, Cat: wr, Queue: 20 * us, Open: true, Plugged: true},
		{PID: 1, Sector: 30000, Bytes: 4096, Cat: wr, Queue: 30 * us, Open: true, Plugged: true, PlugEnd: true},
	}
	for _, d := range issued(t, recs) {
		if d.Time != 30*us {
			t.Errorf("request at %d issued at %v, want 30 us (the plug's first request is of 4 KiB)", d.Sector, d.Time)
		}
	}

	recs = recs[:0]
	for i := range 34 {
		recs = append(recs, replay.Record{PID: 1, Sector: uint64(100000 * (i + 1)), Bytes: 4096, Cat: wr,
			Queue: trace.Time(i) * us, Open: true, Plugged: true, PlugEnd: i == 33})
	}
	ds = issued(t, recs)
	if len(ds) != 34 {
		t.Fatalf("%d requests issued, want 34", len(ds))
	}
	for _, d := range ds {
		want := 32 * us
		if d.Sector > 32*100000 {
			want = 33 * us
		}
		if d.Time != want {
			t.Errorf("request at %d issued at %v, want %v", d.Sector, d.Time, want)
		}
	}
}

// capturedD2C serves a request in its first bio's captured D2C, fallback
// when it has none (a flush request, a bio never completed).
type capturedD2C struct{ fallback trace.Time }

func (d capturedD2C) Issue(now trace.Time, rq *replay.Request) trace.Time {
	if recs := rq.Records(); len(recs) > 0 && recs[0].Issue.Valid() && recs[0].Done >= recs[0].Issue {
		return now + recs[0].Done - recs[0].Issue
	}
	return now + d.fallback
}

func (capturedD2C) Done(trace.Time, *replay.Request) {}

// TestUntarRequests: fs-mqdl-untar replayed through mq-deadline with the
// capture's own D2C (capturedD2C) allocates the capture's requests: 1923
// G events (kworker writeback 1746, jbd2 128, sync 45, tar 4), and jbd2 and
// sync issue the capture's 128 and 45. The segment limit (TestSegmentLimit),
// the flush of a full plug (TestPlugFlushSize, with the workload's
// G, U, P taken as that flush rather than the end of the plug) and step 3d
// of the closed-loop rule (jbd2 holds its plug through gaps of 7 ms: it did
// not sleep, so no completion released it) together give them; before,
// the replay allocated 1453 (jbd2's requests of 1032 and 2560 sectors,
// sync's of 2560).
func TestUntarRequests(t *testing.T) {
	real, pred := requestsByPID(t, "fs-mqdl-untar", newMQDL)
	const kworker, jbd2, sync = 416, 574, 751
	t.Logf("G real %d (kworker %d, jbd2 %d, sync %d), predicted %d (%d, %d, %d)", total(real), real[kworker], real[jbd2], real[sync],
		total(pred), pred[kworker], pred[jbd2], pred[sync])
	if real[jbd2] != 128 || real[sync] != 45 {
		t.Fatalf("capture: jbd2 %d and sync %d requests, want 128 and 45 (README)", real[jbd2], real[sync])
	}
	if pred[jbd2] != real[jbd2] || pred[sync] != real[sync] {
		t.Errorf("jbd2 %d and sync %d requests, want the capture's %d and %d", pred[jbd2], pred[sync], real[jbd2], real[sync])
	}
	if d := pred[kworker] - real[kworker]; d*100 > real[kworker] || -d*100 > real[kworker] {
		t.Errorf("writeback %d requests, want the capture's %d within 1%%", pred[kworker], real[kworker])
	}
}

// TestAwakeWithPlug (step 3d of the closed-loop rule): a process that
// keeps a request on its plug from one bio to the next did not sleep in
// between (a task going to sleep flushes its plug: sched_submit_work ->
// blk_flush_plug, a UT in the trace), so a completion that came between
// did not release the next bio. As jbd2 in fs-mqdl-untar at 0.516905 s:
// a 128 KiB request flushed by the next bio's request (blk_add_rq_to_plug),
// that request kept on the plug 7 ms while the first completed, then
// grown by the next bio and issued at the unplug. Captured: bio 0 (128
// KiB) at 0, bio 1 (4 KiB at 10000) at 10 us, bio 0 done at 110 us, bio 2
// (4 KiB at 10008) at 5 ms, unplug. Replayed on a device of 2 ms, bio 2
// follows bio 1 by its captured 4.99 ms, joins bio 1's plugged request,
// and that request is issued at 5 ms: two requests. Taken as released by
// bio 0's completion, bio 2 came 4.89 ms after bio 0's predicted one
// (6.9 ms), the wait flushed the plug, and it got a third request.
func TestAwakeWithPlug(t *testing.T) {
	const us = trace.Time(1000)
	wr := trace.CatWrite | trace.CatSync
	recs := []replay.Record{
		{PID: 1, Sector: 0, Bytes: 128 << 10, Cat: wr, Queue: 0, Issue: 10 * us, Done: 110 * us, Plugged: true},
		{PID: 1, Sector: 10000, Bytes: 4096, Cat: wr, Queue: 10 * us, Issue: 5000 * us, Done: 5100 * us, Plugged: true},
		{PID: 1, Sector: 10008, Bytes: 4096, Cat: wr, Queue: 5000 * us, Issue: 5000 * us, Done: 5100 * us, Plugged: true, PlugEnd: true},
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var ds []trace.Event
	_, err = replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 2000 * us}, Queue: replay.Queue{Depth: 8}},
		func(e *trace.Event) error {
			if e.Action == trace.ActionIssue {
				ds = append(ds, *e)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[1].Sector != 10000 || ds[1].Bytes != 8192 || ds[1].Time != 5000*us {
		for _, d := range ds {
			t.Logf("D %d + %d at %v", d.Sector, d.Bytes>>9, d.Time)
		}
		t.Fatalf("%d requests issued, want 2, the second 10000 + 16 at 5 ms", len(ds))
	}
}

// TestBFQUntarRequests: fs-bfq-untar, the same untar under BFQ (tsched-tar
// at weight 350), replayed through the BFQ model with the capture's own
// D2C: the capture's G events (1968, in flight at its start aside), within
// 1 %; sync 45 of 45 (it keeps 32 requests of 512 KiB behind a first of
// 4 KiB on its plug, TestPlugFlushSize) and jbd2 within one of 128. Before
// the segment limit, the plug rule and step 3d the replay allocated 1826.
func TestBFQUntarRequests(t *testing.T) {
	newBFQ := func(h replay.Host) (replay.Scheduler, error) {
		return bfq.New(h, replay.Options{Weights: map[uint64]int{921: 350}, HZ: 250})
	}
	real, pred := requestsByPID(t, "fs-bfq-untar", newBFQ)
	const jbd2, sync = 32361, 413
	t.Logf("G real %d (jbd2 %d, sync %d), predicted %d (%d, %d)", total(real), real[jbd2], real[sync], total(pred), pred[jbd2], pred[sync])
	if real[jbd2] != 128 || real[sync] != 45 {
		t.Fatalf("capture: jbd2 %d and sync %d requests, want 128 and 45", real[jbd2], real[sync])
	}
	if pred[sync] != real[sync] || pred[jbd2] < real[jbd2]-1 || pred[jbd2] > real[jbd2]+1 {
		t.Errorf("jbd2 %d and sync %d requests, want the capture's %d (within one) and %d", pred[jbd2], pred[sync], real[jbd2], real[sync])
	}
	if d := total(pred) - total(real); d*100 > total(real) || -d*100 > total(real) {
		t.Errorf("%d requests, want the capture's %d within 1%%", total(pred), total(real))
	}
}

// requestsByPID returns the G events (requests allocated) per process of
// the recorded-fs capture name, and of its replay through newSched with
// the capture's own D2C (capturedD2C). It skips without ../shared.
func requestsByPID(t *testing.T, name string, newSched func(replay.Host) (replay.Scheduler, error)) (real, pred map[uint32]int) {
	t.Helper()
	base := filepath.Join(shared.Path(t, "captures", "recorded-fs", name), name)
	w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(base) })
	if err != nil {
		t.Fatal(err)
	}
	real = map[uint32]int{}
	fixture.Each(t, base, func(e *trace.Event) {
		if e.Action == trace.ActionGetRQ {
			real[e.PID]++
		}
	})
	pred = map[uint32]int{}
	_, err = replay.Run(w, replay.Config{NewScheduler: newSched, Device: capturedD2C{fallback: 200_000}}, func(e *trace.Event) error {
		if e.Action == trace.ActionGetRQ {
			pred[e.PID]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return real, pred
}

// total is the sum of a count per process.
func total(m map[uint32]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

// TestWALLockFlushes: fs-bfq-pgbench's backends flush the WAL one at a
// time under WALWriteLock, so the flush machinery never shares a flush
// between two of them: the capture issues 2,170 flush requests (D FN,
// README): one for each of the backends' 2,166 empty PREFLUSH bios (FWS)
// and two for each of jbd2's 2 commit blocks (PREFLUSH and, with no FUA
// on the device, a post-flush). Replayed through BFQ with the capture's own D2C,
// the lock (step 7 of the closed-loop rule) keeps them apart; without it
// each backend went on its own think time, flushes arrived while another
// was in flight and shared the next one: 2,159 (2,074 on the calibrated
// device model of bench/fidelity, 457 flushes queued during another).
func TestWALLockFlushes(t *testing.T) {
	base := filepath.Join(shared.Path(t, "captures", "recorded-fs", "fs-bfq-pgbench"), "fs-bfq-pgbench")
	w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(base) })
	if err != nil {
		t.Fatal(err)
	}
	isFlush := func(e *trace.Event) bool {
		return e.Action == trace.ActionIssue && e.Bytes == 0 && e.Cat&trace.CatFlush != 0
	}
	real := 0
	fixture.Each(t, base, func(e *trace.Event) {
		if isFlush(e) {
			real++
		}
	})
	newBFQ := func(h replay.Host) (replay.Scheduler, error) {
		return bfq.New(h, replay.Options{Weights: map[uint64]int{961: 450}, HZ: 250})
	}
	pred := 0
	_, err = replay.Run(w, replay.Config{NewScheduler: newBFQ, Device: capturedD2C{fallback: 200_000}}, func(e *trace.Event) error {
		if isFlush(e) {
			pred++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if real != 2170 {
		t.Fatalf("capture: %d flush requests, want 2170 (README)", real)
	}
	t.Logf("flush requests: capture %d, replay %d", real, pred)
	if pred < real-2 || pred > real {
		t.Errorf("%d flush requests, want the capture's %d (within 2)", pred, real)
	}
}

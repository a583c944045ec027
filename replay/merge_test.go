package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/mqdeadline"
	"github.com/tracesched/tracesched/trace"
)

// refusing is mq-deadline with an allow_merge hook that refuses every bio
// merge into another process's request, as BFQ's bfq_allow_bio_merge does
// for a bio of another queue.
type refusing struct{ *mqdeadline.Scheduler }

func (r refusing) AllowMerge(rq *replay.Request, bio *replay.Bio) bool { return rq.PID == bio.PID }

func newRefusing(h replay.Host) (replay.Scheduler, error) {
	s, err := mqdeadline.New(h, replay.Options{})
	return refusing{s}, err
}

// mergeWorkload: pid 1 occupies the device (depth 1, 1 ms per request).
// While it is busy, pid 3 and pid 4 each put a write on their plug lists
// ([0,8) at 5 us, [16,24) at 6 us), pid 2 queues [8,16) unplugged at
// 10 us, and pids 3 and 4 unplug at 25 and 40 us with a second, distant
// write: their requests reach the scheduler as inserts, not as bio merges.
func mergeWorkload(t *testing.T) *replay.Workload {
	t.Helper()
	w := trace.CatWrite | trace.CatSync
	recs := []replay.Record{
		{PID: 1, Sector: 1 << 20, Bytes: 4096, Cat: w, Queue: 0},
		{PID: 3, Sector: 0, Bytes: 4096, Cat: w, Queue: 5_000, Plugged: true},
		{PID: 4, Sector: 16, Bytes: 4096, Cat: w, Queue: 6_000, Plugged: true},
		{PID: 2, Sector: 8, Bytes: 4096, Cat: w, Queue: 10_000},
		{PID: 3, Sector: 1 << 22, Bytes: 4096, Cat: w, Queue: 25_000, Plugged: true, PlugEnd: true},
		{PID: 4, Sector: 1 << 23, Bytes: 4096, Cat: w, Queue: 40_000, Plugged: true, PlugEnd: true},
	}
	wl, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// TestInsertMergeAsksNoAllowMerge: the insert merge is
// elv_attempt_insert_merge (block/elevator.c), reached from
// dd_insert_request and bfq_insert_request through
// blk_mq_sched_try_insert_merge. It calls blk_attempt_req_merge ->
// attempt_merge (block/blk-merge.c), which checks rq_mergeable, the
// operation, blk_cgroup_mergeable and the size, and never the elevator's
// allow_merge (only elv_bio_merge_ok, for bios, does). Then it loops:
// "The merged request could be merged with others, try again", with
// rq = __rq. So at 40 us pid 4's request [16,24) joins pid 2's [8,16)
// although the scheduler refuses bio merges across processes, and the
// grown [8,24) joins pid 3's [0,8): one request [0,24), two request
// merges, 4 requests in all. The model before asked AllowMerge (no merge
// with refusing: 6 requests) and did not loop (one merge with
// mq-deadline: 5 requests).
func TestInsertMergeAsksNoAllowMerge(t *testing.T) {
	for _, tc := range []struct {
		name string
		mk   func(replay.Host) (replay.Scheduler, error)
	}{{"mq-deadline", newMQDL}, {"refusing allow_merge", newRefusing}} {
		var issued []trace.Event
		res, err := replay.Run(mergeWorkload(t), replay.Config{NewScheduler: tc.mk, Device: &serialDevice{lat: 1_000_000},
			Queue: replay.Queue{Depth: 1}, Mode: replay.Open}, func(e *trace.Event) error {
			if e.Action == trace.ActionIssue {
				issued = append(issued, *e)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.RequestMerges != 2 || res.Requests != 4 {
			t.Errorf("%s: %d request merges, %d requests; want 2, 4", tc.name, res.RequestMerges, res.Requests)
		}
		found := false
		for _, e := range issued {
			found = found || (e.Sector == 0 && e.Bytes == 3*4096)
		}
		if !found {
			t.Errorf("%s: no request [0,24) issued: %v", tc.name, issued)
		}
	}
}

// TestRequestMergeIsTracedAsRequestMerge: a request merge's M is
// block_rq_merge, which blk_add_trace_rq (kernel/trace/blktrace.c) records
// with BLK_TC_FS added to BLK_TA_BACKMERGE (a bio's M, from
// blk_add_trace_bio, has none), and trace.Rebuilder reads an M with FS as
// a request absorbed by another (FlagMergedAway, its bios moved there).
// In mergeWorkload the replay merges pid 4's request into pid 2's and that
// one into pid 3's: read back, the prediction must show one request
// [0,24) that served the three bios and completed, and two merged-away
// requests, every bio completed. Without FS the rebuilder took the Ms for
// bio merges, left the two absorbed requests queued with their bios, and
// those bios never completed (fs-bfq-untar: 142 merged-away requests in
// the capture, none in the prediction).
func TestRequestMergeIsTracedAsRequestMerge(t *testing.T) {
	var reqs []trace.Request
	var bios []trace.Bio
	rb := trace.NewRebuilder(func(r *trace.Request) { reqs = append(reqs, *r) }, func(b *trace.Bio) { bios = append(bios, *b) })
	_, err := replay.Run(mergeWorkload(t), replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: 1_000_000},
		Queue: replay.Queue{Depth: 1}, Mode: replay.Open}, func(e *trace.Event) error {
		rb.Add(e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rb.Close()
	away, merged := 0, 0
	for _, r := range reqs {
		switch {
		case r.Flags&trace.FlagMergedAway != 0:
			away++
		case r.Sector == 0 && r.Bytes == 24*512:
			merged++
			if r.Bios != 3 || !r.Complete.Valid() {
				t.Errorf("request [0,24): %d bios, completed %v; want 3, true", r.Bios, r.Complete.Valid())
			}
		}
		if r.Flags&trace.FlagIncomplete != 0 {
			t.Errorf("request at %d (%d bytes) left incomplete", r.Sector, r.Bytes)
		}
	}
	if away != 2 || merged != 1 {
		t.Errorf("%d merged-away requests, %d requests [0,24); want 2, 1", away, merged)
	}
	for _, b := range bios {
		if !b.Done.Valid() {
			t.Errorf("bio %d of pid %d (sector %d) never completed", b.Index, b.PID, b.Sector)
		}
	}
}

package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// metaMergeResult replays recs open-loop through mq-deadline on a device
// of depth 1 that takes 1 ms a request.
func metaMergeResult(t *testing.T, recs []replay.Record) replay.Result {
	t.Helper()
	return metaMergeResultWith(t, recs, newMQDL)
}

// metaMergeResultWith is metaMergeResult through the scheduler newSched makes.
func metaMergeResultWith(t *testing.T, recs []replay.Record, newSched func(replay.Host) (replay.Scheduler, error)) replay.Result {
	t.Helper()
	wl, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(wl, replay.Config{NewScheduler: newSched, Device: &serialDevice{lat: 1_000_000},
		Queue: replay.Queue{Depth: 1}, Mode: replay.Open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMetaBioDoesNotMergeWithData: blk_rq_merge_ok and ll_merge_requests_fn
// (block/blk-merge.c) refuse a merge unless blk_cgroup_mergeable
// (block/blk-cgroup.h): rq->bio->bi_blkg == bio->bi_blkg &&
// bio_issue_as_root_blkg(rq->bio) == bio_issue_as_root_blkg(bio), where
// bio_issue_as_root_blkg is (bi_opf & (REQ_META | REQ_SWAP)) != 0. So a
// REQ_META bio never joins a request of data bios, nor the reverse, in one
// cgroup and one process. fs-mqdl-pgbench, backend 4027: RA 4195072+8
// queued at 8.546805 ms, then RM 4195064+8 (an ext4 metadata block,
// ending where the readahead starts) at 8.548441 ms on the same plug (one
// P, then U depth=2); the capture has two G, two I and two D, no F. The
// model front-merged them (front merges real 0, predicted 1).
//
// Three cases, each counted by hand from those rules: on one plug, the RM
// bio after the RA request it ends at (plug front merge: refused, 2
// requests); the RA bio after an RM request it starts at (plug back merge:
// refused); and through the scheduler, an RM request held behind pid 1's
// request, then pid 3's RA request starting where it ends (insert merge,
// attempt_merge -> ll_merge_requests_fn: refused). The same bios without
// REQ_META merge (1 front merge, 1 back merge, 1 request merge), so the
// refusal is the META bit's.
func TestMetaBioDoesNotMergeWithData(t *testing.T) {
	for _, tc := range metaMergeCases() {
		data := metaMergeResult(t, tc.recs(trace.CatRead))
		if data.FrontMerges != tc.front || data.BackMerges != tc.back || data.RequestMerges != tc.rqMerg || data.Requests != tc.requests {
			t.Errorf("%s, no REQ_META: %d front, %d back, %d request merges, %d requests; want %d, %d, %d, %d",
				tc.name, data.FrontMerges, data.BackMerges, data.RequestMerges, data.Requests, tc.front, tc.back, tc.rqMerg, tc.requests)
		}
		meta := metaMergeResult(t, tc.recs(trace.CatRead|trace.CatMeta))
		want := tc.requests + tc.front + tc.back + tc.rqMerg
		if meta.FrontMerges != 0 || meta.BackMerges != 0 || meta.RequestMerges != 0 || meta.Requests != want {
			t.Errorf("%s, REQ_META against data: %d front, %d back, %d request merges, %d requests; want 0, 0, 0, %d",
				tc.name, meta.FrontMerges, meta.BackMerges, meta.RequestMerges, meta.Requests, want)
		}
	}
}

// preCgroupMerge is mq-deadline on a block layer without
// blk_cgroup_mergeable (replay.CgroupMergeRule), as before Linux 5.18.
type preCgroupMerge struct{ replay.Scheduler }

func (preCgroupMerge) CgroupMergeable() bool { return false }

// TestMetaBioMergesBefore518: before 6b2b04590b51 (Linux 5.18)
// blk_rq_merge_ok (4.19: rq_mergeable, bio_mergeable, req_op, data
// direction, rq_disk, integrity, write_same, write_hint) and
// ll_merge_requests_fn had no cgroup or REQ_META test, so each case of
// TestMetaBioDoesNotMergeWithData merges with REQ_META exactly as without
// it: the counts are those of the data-only bios.
func TestMetaBioMergesBefore518(t *testing.T) {
	old := func(h replay.Host) (replay.Scheduler, error) {
		s, err := newMQDL(h)
		return preCgroupMerge{s}, err
	}
	for _, tc := range metaMergeCases() {
		meta := metaMergeResultWith(t, tc.recs(trace.CatRead|trace.CatMeta), old)
		if meta.FrontMerges != tc.front || meta.BackMerges != tc.back || meta.RequestMerges != tc.rqMerg || meta.Requests != tc.requests {
			t.Errorf("%s, REQ_META against data before 5.18: %d front, %d back, %d request merges, %d requests; want %d, %d, %d, %d",
				tc.name, meta.FrontMerges, meta.BackMerges, meta.RequestMerges, meta.Requests, tc.front, tc.back, tc.rqMerg, tc.requests)
		}
	}
}

type metaMergeCase struct {
	name                string
	recs                func(second trace.Category) []replay.Record
	front, back, rqMerg int // merges without REQ_META
	requests            int // requests without REQ_META
}

// metaMergeCases are the cases of TestMetaBioDoesNotMergeWithData; the
// second bio of each gets the category recs is given.
func metaMergeCases() []metaMergeCase {
	ra := trace.CatRead | trace.CatAhead
	return []metaMergeCase{
		{"plug front merge", func(c trace.Category) []replay.Record {
			return []replay.Record{
				{PID: 2, Sector: 8, Bytes: 4096, Cat: ra, Queue: 0, Plugged: true},
				{PID: 2, Sector: 0, Bytes: 4096, Cat: c, Queue: 2_000, Plugged: true, PlugEnd: true},
			}
		}, 1, 0, 0, 1},
		{"plug back merge", func(c trace.Category) []replay.Record {
			return []replay.Record{
				{PID: 2, Sector: 0, Bytes: 4096, Cat: c, Queue: 0, Plugged: true},
				{PID: 2, Sector: 8, Bytes: 4096, Cat: ra, Queue: 2_000, Plugged: true, PlugEnd: true},
			}
		}, 0, 1, 0, 1},
		{"insert merge", func(c trace.Category) []replay.Record {
			return []replay.Record{
				{PID: 1, Sector: 1 << 20, Bytes: 4096, Cat: trace.CatRead, Queue: 0},
				{PID: 2, Sector: 0, Bytes: 4096, Cat: c, Queue: 5_000, Plugged: true},
				{PID: 3, Sector: 8, Bytes: 4096, Cat: ra, Queue: 6_000, Plugged: true},
				{PID: 2, Sector: 1 << 22, Bytes: 4096, Cat: trace.CatRead, Queue: 25_000, Plugged: true, PlugEnd: true},
				{PID: 3, Sector: 1 << 23, Bytes: 4096, Cat: trace.CatRead, Queue: 40_000, Plugged: true, PlugEnd: true},
			}
		}, 0, 0, 1, 4},
	}
}

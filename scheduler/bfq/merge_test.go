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

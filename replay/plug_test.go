package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Issue 14 item 3: `replay --sched cfq` on public/hadoop-node8 failed with
// "replay stalled: 1 requests never completed". A process that found no
// free request flushed its plug before sleeping; the flush's insert merge
// freed a request, which woke that same process, whose next request was
// plugged during the flush and then dropped with the old list. The
// scenario, in open loop with nr_requests 4 and one request on the device
// at a time:
//
//	t=0   B reads 1000+8, dispatched; the device takes 10 ms
//	t=1us P reads 100+8 under a plug: request R1 on P's plug
//	t=2us A reads 92+8, ending where R1 starts: held by mq-deadline
//	t=3us B reads 2000+8: held; 4 requests allocated
//	t=4us P reads 500+8 under its plug: no free request, P sleeps and
//	      flushes R1, which merges into A's request and frees one: P wakes
//	      and plugs a request for 500+8 while its plug is being flushed
//
// Every bio must complete, with no request left allocated.
func TestPlugFlushThatWakesItsOwnProcess(t *testing.T) {
	const us = trace.Time(1000)
	rd := trace.CatRead | trace.CatSync
	recs := []replay.Record{
		{PID: 1, Index: 0, Sector: 1000, Bytes: 4096, Cat: rd, Queue: 0, Issue: 0, Done: 10000 * us, Open: true},
		{PID: 2, Index: 0, Sector: 100, Bytes: 4096, Cat: rd, Queue: 1 * us, Issue: 10001 * us, Done: 20000 * us, Open: true, Plugged: true},
		{PID: 3, Index: 0, Sector: 92, Bytes: 4096, Cat: rd, Queue: 2 * us, Issue: 10002 * us, Done: 20001 * us, Open: true},
		{PID: 1, Index: 1, Sector: 2000, Bytes: 4096, Cat: rd, Queue: 3 * us, Issue: 20002 * us, Done: 30000 * us, Open: true},
		{PID: 2, Index: 1, Sector: 500, Bytes: 4096, Cat: rd, Queue: 4 * us, Issue: 30001 * us, Done: 40000 * us, Open: true, Plugged: true, PlugEnd: true},
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: 10000 * us}, Mode: replay.Open,
		Queue: replay.Queue{NrRequests: 4, Depth: 1}}, nil)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if res.Bios != len(recs) {
		t.Errorf("%d bios replayed, want %d", res.Bios, len(recs))
	}
	if res.Sleeps == 0 || res.RequestMerges == 0 {
		t.Errorf("sleeps %d, request merges %d: the scenario did not happen (want a sleep and an insert merge)", res.Sleeps, res.RequestMerges)
	}
}

package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestBioAfterOwnFlushWaitsForIt: step 3e of the rule on Workload. An
// empty PREFLUSH bio (an fdatasync's blkdev_issue_flush, block/blk-flush.c)
// is submitted with submit_bio_wait (block/bio.c), which sleeps until the
// bio completes: its process queues nothing before the flush completes.
// Captured (a PostgreSQL backend, as 4032 of fs-mqdl-pgbench): two reads
// in flight together (depth 2), a WAL write at 2 ms done at 2.2, the
// empty flush at 2.25 done at 2.5, the next WAL write at 2.6 ms, 100 us
// after the flush's completion. Replayed on a device of 1 ms a request
// (the flush too): the reads complete at 1.0 and 1.01 ms, the write
// comes at 2.0 (1 ms after the first completion, step 3) and completes at
// 3.0, the flush at 3.05 (step 3b) and completes at 4.05, so the next
// write comes at 4.15 ms. The depth-based rule took that write as released
// by the write before the flush (its 3rd completion, at 3.0, plus the
// captured 0.4 ms): at 3.4 ms, with the flush still in flight.
func TestBioAfterOwnFlushWaitsForIt(t *testing.T) {
	const us = trace.Time(1_000)
	r, ws, fws := trace.CatRead, trace.CatWrite|trace.CatSync, trace.CatWrite|trace.CatSync|trace.CatFlush
	recs := []replay.Record{
		{PID: 1, Sector: 1 << 20, Bytes: 8192, Cat: r, Queue: 0, Issue: 0, Done: 1000 * us},
		{PID: 1, Sector: 1 << 21, Bytes: 8192, Cat: r, Queue: 10 * us, Issue: 10 * us, Done: 1100 * us},
		{PID: 1, Sector: 4096, Bytes: 8192, Cat: ws, Queue: 2000 * us, Issue: 2000 * us, Done: 2200 * us},
		{PID: 1, Sector: 0, Bytes: 0, Cat: fws, Queue: 2250 * us, Issue: 2250 * us, Done: 2500 * us},
		{PID: 1, Sector: 4112, Bytes: 8192, Cat: ws, Queue: 2600 * us, Issue: 2600 * us, Done: 2800 * us},
	}
	wl, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var q []trace.Time
	flushDone := trace.NoTime
	_, err = replay.Run(wl, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 1000 * us},
		Queue: replay.Queue{Depth: 4}, Mode: replay.Closed}, func(e *trace.Event) error {
		switch {
		case e.Action == trace.ActionQueue && e.PID == 1:
			q = append(q, e.Time)
		case e.Action == trace.ActionComplete && e.PID == 1 && e.Bytes == 0 && e.Cat&trace.CatWrite != 0:
			flushDone = e.Time
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 5 {
		t.Fatalf("queued %d bios, want 5", len(q))
	}
	want := []trace.Time{0, 10 * us, 2000 * us, 3050 * us, 4150 * us}
	for i := range want {
		if q[i] != want[i] {
			t.Errorf("bio %d queued at %v, want %v", i, q[i], want[i])
		}
	}
	if flushDone != 4050*us {
		t.Errorf("the flush completed at %v, want 4.05 ms", flushDone)
	}
}

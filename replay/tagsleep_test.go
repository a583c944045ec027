package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestTagSleepFlushesThePlugBeforeTheRequest: a writeback kworker (as
// fs-mqdl-untar's at 1.256 s) holds request A (bio 0 at sector 0) on its
// plug; bio 1 (at 1000, not contiguous) cannot merge, sleeps for a tag in
// blk_mq_get_new_requests, and the sleep flushes the plug (UT, then A's I
// and D) before bio 1 gets request B (G) on the plug, still installed
// (P); bio 2, contiguous, merges into B on the plug (M), and the explicit
// unplug (U) issues B with two bios. Replayed (open loop, a device of 1 ms
// with room, so no tag sleep in the replay): A issued when bio 1 arrives,
// where the capture's plug was flushed, and B holding bios 1 and 2, two
// requests. Taking the UT as the end of bio 1's plug, B was inserted at
// once and bio 2 got a third request; keeping the plug without its flush,
// A waited on the plug until the U.
func TestTagSleepFlushesThePlugBeforeTheRequest(t *testing.T) {
	const us = trace.Time(1000)
	dev := trace.Dev(7 << 20)
	wr := trace.CatWrite
	var evs []trace.Event
	ev := func(at trace.Time, a trace.Action, cat trace.Category, sector uint64, bytes uint32) {
		evs = append(evs, trace.Event{Time: at, Dev: dev, Action: a, Cat: cat, Sector: sector, Bytes: bytes, PID: 1})
	}
	q, fs := wr|trace.CatQueue, wr|trace.CatFS
	ev(1*us, trace.ActionQueue, q, 0, 4096)
	ev(2*us, trace.ActionGetRQ, q, 0, 4096)
	ev(3*us, trace.ActionPlug, trace.CatQueue, 0, 0)
	ev(10*us, trace.ActionQueue, q, 1000, 4096)
	ev(11*us, trace.ActionUnplugTimer, trace.CatQueue, 0, 0)
	ev(12*us, trace.ActionInsert, fs, 0, 4096)
	ev(13*us, trace.ActionIssue, fs|trace.CatIssue, 0, 4096)
	ev(500*us, trace.ActionGetRQ, q, 1000, 4096)
	ev(501*us, trace.ActionPlug, trace.CatQueue, 0, 0)
	ev(510*us, trace.ActionQueue, q, 1008, 4096)
	ev(511*us, trace.ActionBackMerge, q, 1008, 4096)
	ev(520*us, trace.ActionUnplugIO, trace.CatQueue, 0, 0)
	ev(521*us, trace.ActionInsert, fs, 1000, 8192)
	ev(522*us, trace.ActionIssue, fs|trace.CatIssue, 1000, 8192)
	ev(1013*us, trace.ActionComplete, fs|trace.CatComplete, 0, 4096)
	ev(1522*us, trace.ActionComplete, fs|trace.CatComplete, 1000, 8192)
	w := collected(t, evs)
	var ds []trace.Event
	_, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 1000 * us}, Mode: replay.Open,
		Queue: replay.Queue{Depth: 8}}, func(e *trace.Event) error {
		if e.Action == trace.ActionIssue {
			ds = append(ds, *e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Sector != 0 || ds[0].Time != 10*us || ds[1].Sector != 1000 || ds[1].Bytes != 8192 {
		for _, d := range ds {
			t.Logf("D %d + %d at %v", d.Sector, d.Bytes>>9, d.Time)
		}
		t.Fatalf("%d requests issued, want 2: 0 + 8 at 10 us (bio 1's arrival), then 1000 + 16", len(ds))
	}
}

// TestCaptureEndsMidSplit: fs-bfq-writeback ends while the flusher's last
// bio (8 MiB, 16384 sectors) is being split at max_sectors (2560): three
// of its seven parts got requests (G) and the fourth, split off (X), was
// still waiting for a tag when the trace stopped; the capture has 213
// requests for its 31 bios, 30 x 7 + 3. Replayed with fixed work, the bio
// is submitted as far as the capture shows it. Here: a bio of 6144
// sectors, two parts of 2560 with a G each, the third never submitted;
// the replay allocates two requests, not three (before: three, and the
// flusher's 217 requests in fs-bfq-writeback against the capture's 213).
func TestCaptureEndsMidSplit(t *testing.T) {
	const us = trace.Time(1000)
	dev := trace.Dev(7 << 20)
	q, fs := trace.CatWrite|trace.CatQueue, trace.CatWrite|trace.CatFS
	evs := []trace.Event{
		{Time: 1 * us, Action: trace.ActionQueue, Cat: q, Sector: 0, Bytes: 6144 << 9},
		{Time: 2 * us, Action: trace.ActionSplit, Cat: q, Sector: 0, Bytes: 2560 << 9, SplitSector: 2560},
		{Time: 3 * us, Action: trace.ActionGetRQ, Cat: q, Sector: 0, Bytes: 2560 << 9},
		{Time: 4 * us, Action: trace.ActionSplit, Cat: q, Sector: 2560, Bytes: 2560 << 9, SplitSector: 5120},
		{Time: 5 * us, Action: trace.ActionGetRQ, Cat: q, Sector: 2560, Bytes: 2560 << 9},
		{Time: 6 * us, Action: trace.ActionInsert, Cat: fs, Sector: 0, Bytes: 2560 << 9},
		{Time: 7 * us, Action: trace.ActionIssue, Cat: fs | trace.CatIssue, Sector: 0, Bytes: 2560 << 9},
		{Time: 8 * us, Action: trace.ActionInsert, Cat: fs, Sector: 2560, Bytes: 2560 << 9},
		{Time: 9 * us, Action: trace.ActionIssue, Cat: fs | trace.CatIssue, Sector: 2560, Bytes: 2560 << 9},
	}
	for i := range evs {
		evs[i].Dev, evs[i].PID = dev, 1
	}
	w := collected(t, evs)
	gets := 0
	_, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 1000 * us}, Queue: replay.Queue{Depth: 8}},
		func(e *trace.Event) error {
			if e.Action == trace.ActionGetRQ {
				gets++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if gets != 2 {
		t.Errorf("%d requests allocated, want the capture's 2", gets)
	}
}

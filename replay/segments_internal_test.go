package replay

import (
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestGrowSegments: the bios of a request that refused a bio for
// segments get at least the segments wanted (MaxSegments+1 less the
// refused bio's, in the Collector). A one-page bio and two 4-page bios
// (3 segments at the least, 9 at the most) that must have 7: the 4
// missing are shared out over the room each has (0, 3, 3), 2 and 2. With
// 11 wanted, more than their pages allow, each gets a segment per page.
func TestGrowSegments(t *testing.T) {
	mk := func() []*collectQ {
		var qs []*collectQ
		for _, b := range []uint32{4096, 16384, 16384} {
			qs = append(qs, &collectQ{rec: storedRecord{bytes: b, segs: uint16(minSegments(b))}})
		}
		return qs
	}
	segs := func(qs []*collectQ) []uint16 {
		var s []uint16
		for _, q := range qs {
			s = append(s, q.rec.segs)
		}
		return s
	}
	qs := mk()
	growSegments(qs, 7)
	if got := segs(qs); got[0] != 1 || got[1] != 3 || got[2] != 3 {
		t.Errorf("segments %v, want [1 3 3]", got)
	}
	qs = mk()
	growSegments(qs, 11)
	if got := segs(qs); got[0] != 1 || got[1] != 4 || got[2] != 4 {
		t.Errorf("segments %v, want [1 4 4] (one a page)", got)
	}
	qs = mk()
	growSegments(qs, 2)
	if got := segs(qs); got[0] != 1 || got[1] != 1 || got[2] != 1 {
		t.Errorf("segments %v, want [1 1 1] (already enough)", got)
	}
	qs = mk()
	growSegments(qs, 6) // 3 missing over room 0, 3, 3: 1.5 each, the earlier bio takes the odd one
	if got := segs(qs); got[0] != 1 || got[1] != 3 || got[2] != 2 {
		t.Errorf("segments %v, want [1 3 2]", got)
	}
}

// TestSegmentsAfterPlugFlush: the workload follows a request through the
// unplug that blk_add_rq_to_plug makes right after its G. The events, as
// the flusher logs them in fs-bfq-untar at 1.563679 s: a 4 KiB request at
// 0 on the plug; a 64 KiB bio at 1000 gets a request, the plug is flushed
// (U, I, D of the first request) and started again (P); nine more 64 KiB
// bios merge into the new request (10 bios, 160 pages, 1280 sectors); a 4
// KiB bio at its end gets a request of its own (G) though 1288 sectors
// fit in max_sectors: refused for segments (ll_new_hw_segment), so the
// ten bios had at least 128 segments. Taken as the end of the plug, the U
// lost the request and its bios kept one segment each.
func TestSegmentsAfterPlugFlush(t *testing.T) {
	const us = trace.Time(1000)
	dev := trace.Dev(7 << 20)
	wr := trace.CatWrite
	var evs []trace.Event
	at := trace.Time(0)
	ev := func(a trace.Action, cat trace.Category, sector uint64, bytes uint32) {
		at += us
		evs = append(evs, trace.Event{Time: at, Dev: dev, Action: a, Cat: cat, Sector: sector, Bytes: bytes, PID: 1})
	}
	ev(trace.ActionQueue, wr|trace.CatQueue, 0, 4096)
	ev(trace.ActionGetRQ, wr|trace.CatQueue, 0, 4096)
	ev(trace.ActionPlug, trace.CatQueue, 0, 0)
	ev(trace.ActionQueue, wr|trace.CatQueue, 1000, 64<<10)
	ev(trace.ActionGetRQ, wr|trace.CatQueue, 1000, 64<<10)
	ev(trace.ActionUnplugIO, trace.CatQueue, 0, 0)
	ev(trace.ActionInsert, wr|trace.CatFS, 0, 4096)
	ev(trace.ActionIssue, wr|trace.CatFS|trace.CatIssue, 0, 4096)
	ev(trace.ActionPlug, trace.CatQueue, 0, 0)
	for i := 1; i < 10; i++ {
		s := uint64(1000 + 128*i)
		ev(trace.ActionQueue, wr|trace.CatQueue, s, 64<<10)
		ev(trace.ActionBackMerge, wr|trace.CatQueue, s, 64<<10)
	}
	ev(trace.ActionQueue, wr|trace.CatQueue, 2280, 4096)
	ev(trace.ActionGetRQ, wr|trace.CatQueue, 2280, 4096)
	ev(trace.ActionUnplugIO, trace.CatQueue, 0, 0)
	ev(trace.ActionInsert, wr|trace.CatFS, 1000, 640<<10)
	ev(trace.ActionInsert, wr|trace.CatFS, 2280, 4096)
	ev(trace.ActionIssue, wr|trace.CatFS|trace.CatIssue, 1000, 640<<10)
	ev(trace.ActionIssue, wr|trace.CatFS|trace.CatIssue, 2280, 4096)
	ev(trace.ActionComplete, wr|trace.CatFS|trace.CatComplete, 0, 4096)
	ev(trace.ActionComplete, wr|trace.CatFS|trace.CatComplete, 1000, 640<<10)
	ev(trace.ActionComplete, wr|trace.CatFS|trace.CatComplete, 2280, 4096)
	c := NewCollector()
	for i := range evs {
		c.Add(&evs[i])
	}
	w, err := c.Workload()
	if err != nil {
		t.Fatal(err)
	}
	recs := records(t, w)
	if len(recs) != 12 {
		t.Fatalf("%d records, want 12", len(recs))
	}
	sum := 0
	for _, r := range recs[1:11] {
		sum += int(r.Segments)
	}
	if sum < 128 || sum > 160 {
		t.Errorf("the ten 64 KiB bios have %d segments, want 128 to 160 (one to a page)", sum)
	}
	if recs[0].Segments != 1 || recs[11].Segments != 1 {
		t.Errorf("the 4 KiB bios have %d and %d segments, want 1 and 1", recs[0].Segments, recs[11].Segments)
	}
	if recs[1].PlugEnd {
		t.Errorf("the bio whose request the plug flush left on the plug ends its plug; want not (G, U, P)")
	}
}

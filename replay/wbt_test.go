package replay

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// TestWBTLimits: rq_depth_calc_max_depth and calc_wb_limits
// (block/blk-rq-qos.c, block/blk-wbt.c) for a tag set of 128, computed by
// hand. Step 0: max_depth = min(RWB_DEF_DEPTH 16, 128) = 16, wb_normal
// (16+1)/2 = 8, wb_background (16+3)/4 = 4. Scaling up: depth = 1 +
// ((16-1) << -step) = 31, 61, then 121 > 3*128/4 = 96, so 96 and
// scaled_max; wb_background 8, 16, 24. A fourth scale_up does nothing.
// Scaling down from 0: 1 + (15 >> 1) = 8 (normal 4, background 2), 1 +
// (15 >> 2) = 4 (2, 1), 2 (max_depth <= 2: normal 2, background 1), 1,
// and then no further. A hard throttle from a negative step goes to 0.
// The window at step 1 is (100 ms << 4) / int_sqrt(2 << 8) = 1600 ms /
// 22 = 72.727272 ms.
func TestWBTLimits(t *testing.T) {
	w := newWBT(Queue{QueueDepth: 128, WBTLat: 2_000_000, WriteCache: WriteBack}, nil)
	check := func(step, maxDepth, normal, bg int) {
		t.Helper()
		if w.scaleStep != step || w.maxDepth != maxDepth || w.normal != normal || w.bg != bg {
			t.Errorf("step %d max_depth %d wb_normal %d wb_background %d, want %d %d %d %d",
				w.scaleStep, w.maxDepth, w.normal, w.bg, step, maxDepth, normal, bg)
		}
	}
	check(0, 16, 8, 4)
	for _, want := range [][4]int{{-1, 31, 16, 8}, {-2, 61, 31, 16}, {-3, 96, 48, 24}} {
		if !w.scaleUp() {
			t.Fatalf("scale_up to step %d refused", want[0])
		}
		check(want[0], want[1], want[2], want[3])
	}
	if w.scaleUp() {
		t.Error("scale_up past scaled_max")
	}
	check(-3, 96, 48, 24)
	w.scaleDown(true)
	check(0, 16, 8, 4)
	for _, want := range [][4]int{{1, 8, 4, 2}, {2, 4, 2, 1}, {3, 2, 2, 1}, {4, 1, 1, 1}, {4, 1, 1, 1}} {
		w.scaleDown(false)
		check(want[0], want[1], want[2], want[3])
	}
	w.scaleStep = 1
	if got, want := w.window(), trace.Time(72_727_272); got != want {
		t.Errorf("window at step 1: %d ns, want %d", got, want)
	}
	if got := isqrt(512); got != 22 {
		t.Errorf("int_sqrt(512) = %d, want 22", got)
	}
}

// TestWBTOff: off unless a target is given (queue/wbt_lat_usec), and
// off under a scheduler that disables it (BFQ, CFQ) whatever the target.
func TestWBTOff(t *testing.T) {
	if newWBT(Queue{}, nil) != nil {
		t.Error("no target: throttle on")
	}
	if newWBT(Queue{WBTLat: 2_000_000}, disabler{}) != nil {
		t.Error("a scheduler that disables wbt: throttle on")
	}
	if w := newWBT(Queue{WBTLat: 2_000_000}, nil); w == nil || w.minLat != 2_000_000 {
		t.Errorf("wbt_lat_usec 2000: %+v, want a 2 ms target", w)
	}
}

type disabler struct{ Scheduler }

func (disabler) DisablesWBT() bool { return true }

// TestWBTTracks: wbt_should_throttle less what a trace cannot tell (see
// wbt): asynchronous writes and discards, not reads, sync writes, FUA or
// flushes.
func TestWBTTracks(t *testing.T) {
	w := newWBT(Queue{}, nil)
	for _, c := range []struct {
		cat  trace.Category
		want bool
	}{
		{trace.CatWrite, true},
		{trace.CatWrite | trace.CatMeta, true},
		{trace.CatDiscard, true},
		{trace.CatRead, false},
		{trace.CatRead | trace.CatAhead, false},
		{trace.CatWrite | trace.CatSync, false},
		{trace.CatWrite | trace.CatFUA, false},
		{trace.CatWrite | trace.CatFlush, false},
	} {
		if got := w.tracks(&Record{Cat: c.cat, Bytes: 4096}); got != c.want {
			t.Errorf("%s: tracked %v, want %v", c.cat.RWBS(4096), got, c.want)
		}
	}
}

// TestWBTWarm: a capture that began with 16 asynchronous writes on the
// device at once (fs-mqdl-wbpressure, recorded mid-writeback) starts the
// throttle at step -2, the first whose wb_background ((61+3)/4 = 16)
// lets 16 in; 4 or fewer leave it at step 0; more than step -3's 24
// stop at -3 (scaled_max).
func TestWBTWarm(t *testing.T) {
	for _, c := range []struct{ n, step, bg int }{{0, 0, 4}, {4, 0, 4}, {5, -1, 8}, {16, -2, 16}, {17, -3, 24}, {40, -3, 24}} {
		w := newWBT(Queue{QueueDepth: 128, WBTLat: 2_000_000}, nil)
		w.warm(c.n)
		if w.scaleStep != c.step || w.bg != c.bg {
			t.Errorf("warm(%d): step %d wb_background %d, want %d %d", c.n, w.scaleStep, w.bg, c.step, c.bg)
		}
	}
}

// TestWBTLimitCloseIO: get_limit gives a write wb_background while a read
// was submitted or completed within HZ/10 (close_io), else wb_normal; a
// discard always wb_background.
func TestWBTLimitCloseIO(t *testing.T) {
	w := newWBT(Queue{QueueDepth: 128, WBTLat: 2_000_000}, nil)
	wr, disc := &Record{Cat: trace.CatWrite, Bytes: 4096}, &Record{Cat: trace.CatDiscard, Bytes: 4096}
	if got := w.limit(wr, 5e9); got != 8 {
		t.Errorf("no read yet: limit %d, want wb_normal 8", got)
	}
	w.lastRead = 5e9
	if got := w.limit(wr, 5e9+99e6); got != 4 {
		t.Errorf("a read 99 ms ago: limit %d, want wb_background 4", got)
	}
	if got := w.limit(wr, 5e9+100e6); got != 8 {
		t.Errorf("a read 100 ms ago: limit %d, want wb_normal 8", got)
	}
	if got := w.limit(disc, 9e9); got != 4 {
		t.Errorf("discard: limit %d, want wb_background 4", got)
	}
}

// TestWBTWarmCapture: fs-mqdl-writeback's flusher had at most 4
// requests on the device in the 100 ms after its first (0.3212 s): the
// capture began with the throttle at step 0.
func TestWBTWarmCapture(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-mqdl-writeback")
	base := filepath.Join(dir, "fs-mqdl-writeback")
	w, err := NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(base) })
	if err != nil {
		t.Fatal(err)
	}
	if w.WBTWarm != 4 {
		t.Errorf("WBTWarm %d, want 4", w.WBTWarm)
	}
}

// TestWBTRecentWait: a capture with more asynchronous writes in flight
// than any wb_normal lets in (tag set 128: max_depth at most 96, wb_normal
// (96+1)/2 = 48) had a writer in balance_dirty_pages' recent wait: a
// write's limit is then max_depth (16 at step 0), and a completion wakes
// sleepers at wb_normal also on a write-back cache (wbt_rqw_done).
func TestWBTRecentWait(t *testing.T) {
	w := newWBT(Queue{QueueDepth: 128, WBTLat: 2_000_000, WriteCache: WriteBack}, nil)
	w.peak(48)
	if w.recentWait {
		t.Error("peak 48: recent wait, want none (wb_normal 48 at step -3 lets 48 in)")
	}
	w.peak(53) // fs-mqdl-untar's flusher
	if !w.recentWait {
		t.Fatal("peak 53: no recent wait")
	}
	wr := &Record{Cat: trace.CatWrite, Bytes: 4096}
	w.lastRead = 1e9
	if got := w.limit(wr, 1e9); got != 16 {
		t.Errorf("recent wait: limit %d, want max_depth 16", got)
	}
	if got := w.limit(&Record{Cat: trace.CatDiscard, Bytes: 4096}, 1e9); got != 4 {
		t.Errorf("recent wait, discard: limit %d, want wb_background 4", got)
	}
}

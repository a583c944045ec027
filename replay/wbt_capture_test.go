package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// writesInFlight replays the capture in dir through mq-deadline on a
// device that serves each request in the capture's own D2C, with queue q,
// and returns the most write requests on the device at once before
// `before` and over the whole replay.
func writesInFlight(t *testing.T, dir string, q replay.Queue, before trace.Time) (early, peak int) {
	t.Helper()
	w, err := replay.NewWorkload(source(dir))
	if err != nil {
		t.Fatal(err)
	}
	inflight := 0
	_, err = replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &captureDevice{fallback: 100_000}, Queue: q}, func(e *trace.Event) error {
		if !e.Cat.IsWrite() || e.Bytes == 0 {
			return nil
		}
		switch e.Action {
		case trace.ActionIssue:
			inflight++
			peak = max(peak, inflight)
			if e.Time < before {
				early = max(early, inflight)
			}
		case trace.ActionComplete:
			inflight--
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return early, peak
}

// TestWBTFlusherCapture: in fs-mqdl-writeback (mq-deadline, wbt_lat_usec
// 2000, a write-back cache, a tag set of 128) the flusher's 8 MiB bios,
// split into 1.25 MiB requests, go to the device 4 at a time from 0.3212 s,
// each four only once the previous four have completed, until 0.42 s; at
// most 24 are ever on the device at once (0.84-0.94 s, and 1.26 s). Those
// are blk-wbt's wb_background at scale_step 0 (max_depth 16: (16+3)/4 = 4)
// and at its highest step (max_depth 3*128/4 = 96: (96+3)/4 = 24), its
// first window being 100 ms; the waiters are woken only when the tracked
// writes in flight drop to 0 (QUEUE_FLAG_WC). Without the throttle the
// same replay sends each bio's seven requests at once.
func TestWBTFlusherCapture(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-mqdl-writeback")
	q := replay.Queue{Rotational: true, WBTLat: 2_000_000, QueueDepth: 128}
	const firstWindowEnd = trace.Time(421_000_000) // first throttled write 0.3212 s + 100 ms
	early, peak := writesInFlight(t, dir, q, firstWindowEnd)
	if early != 4 {
		t.Errorf("writes on the device at once before %v: %d, want 4 (the capture's; wb_background at step 0)", firstWindowEnd, early)
	}
	if peak != 24 {
		t.Errorf("writes on the device at once: %d, want 24 (the capture's; wb_background at max_depth 96)", peak)
	}
	q.WBTLat = 0
	if early, _ := writesInFlight(t, dir, q, firstWindowEnd); early <= 4 {
		t.Errorf("without writeback throttling: %d writes at once before %v, want more than 4", early, firstWindowEnd)
	}
}

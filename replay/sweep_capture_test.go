package replay_test

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestSweepSlotLag: raw-sweep-none's 4 KiB random write steps (fio,
// libaio, iodepth 1..64, one process each, pids 30520..30526) replayed
// through none on a device that serves each request in its captured D2C.
// fio reaps only when it is at its depth in its own view (fio's JSON:
// iodepth_level >=64 99.8 % of the qd64 step, clat 722 us against the
// block layer's Q2C of 598 us), so in the block layer the qd64 step kept
// 52.75 requests in flight on average, time-weighted, not 64: a completion's
// slot waited a median 102 us for fio to reap it and submit again, most of
// them taken by bios submitted back to back after the first of a batch.
// On a device that serves each request in its process's mean D2C in the
// capture (597 us at qd64), completions come evenly instead of in the
// capture's bunches, and the replay must still give each step the
// capture's bandwidth (Little's law: 52.75 in flight over 597 us is the
// capture's 88k IOPS; 64 would be 107k): the rule of step 4 that released a
// back-to-back bio only its process's wake-up delay after the completion
// that freed its depth refilled the slot in 4.7 us (median) and gave the
// qd64 step 11 % more than the capture (qd16 +10 %, qd8 +7 %).
func TestSweepSlotLag(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "raw-sweep-none")
	base := filepath.Join(dir, "raw-sweep-none")
	w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(base) })
	if err != nil {
		t.Fatal(err)
	}
	// The capture's mean D2C of each process, from its requests.
	cd := &captureDevice{fallback: 100_000}
	if _, err := replay.Run(w, replay.Config{NewScheduler: newNone, Device: cd}, func(*trace.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	sum, n := map[uint32]trace.Time{}, map[uint32]int{}
	for _, p := range cd.pairs {
		if p.real.Valid() && p.realDone.Valid() {
			sum[p.pid] += p.realDone - p.real
			n[p.pid]++
		}
	}
	dev := &pidDevice{lat: map[uint32]trace.Time{}}
	for pid := range sum {
		dev.lat[pid] = sum[pid] / trace.Time(n[pid])
	}
	res, err := replay.Run(w, replay.Config{NewScheduler: newNone, Device: dev}, func(*trace.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	pred := map[uint32]replay.ProcessStats{}
	for _, p := range res.Processes {
		pred[p.PID] = p
	}
	for _, real := range w.Processes {
		if real.PID < 30520 || real.PID > 30526 {
			continue
		}
		p, ok := pred[real.PID]
		if !ok {
			t.Fatalf("pid %d not replayed", real.PID)
		}
		rb, pb := real.MiBps(), p.MiBps()
		t.Logf("pid %d: real %.1f MiB/s, replayed %.1f (%+.1f %%)", real.PID, rb, pb, 100*(pb/rb-1))
		if rb < 40 || pb < rb*0.95 || pb > rb*1.05 {
			t.Errorf("pid %d (4 KiB random writes): replayed %.1f MiB/s, want the capture's %.1f within 5 %%", real.PID, pb, rb)
		}
	}
}

// pidDevice serves each request in a fixed time per process (lat, by the
// PID of its first bio).
type pidDevice struct{ lat map[uint32]trace.Time }

func (d *pidDevice) Issue(now trace.Time, rq *replay.Request) trace.Time {
	return now + d.lat[rq.Records()[0].PID]
}
func (d *pidDevice) Done(now trace.Time, rq *replay.Request) {}

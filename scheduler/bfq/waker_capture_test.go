package bfq_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/trace"
)

// wakerSets counts the "set waker" messages of a side by "queue <- waker",
// with the time of the first.
func wakerSets(s *diff.Side) (map[string]int, trace.Time) {
	n := map[string]int{}
	first := trace.NoTime
	for i := range s.Messages.Len() {
		m := s.Messages.At(i)
		if m.Msg.Sched != "bfq" || !strings.HasPrefix(m.Msg.Body, "set waker ") {
			continue
		}
		n[m.Msg.QueueName()+" <- "+strings.TrimPrefix(m.Msg.Body, "set waker ")]++
		if !first.Valid() {
			first = m.Time
		}
	}
	return n, first
}

// fs-bfq-fsync-vs-seqread: Linux 6.18 logged 713 "set waker" messages, 711
// of them making jbd2's queue (23778) the waker of the fsync writer's
// (23871), the first at 0.171 s, and two the other way round. Replayed
// through the model with the capture's weights and warm budgets, the
// writer must get jbd2 as its waker as often (within 5 %), first within
// 50 ms of the kernel's, and the reader (23872) never, nor anything else
// as often.
func TestWakerDetectionFsyncCapture(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-bfq-fsync-vs-seqread")
	base := filepath.Join(dir, "fs-bfq-fsync-vs-seqread")
	real, w, dm := loadCapture(t, base)
	o := replay.Options{Weights: map[uint64]int{661: 300, 681: 700},
		CgroupPaths: map[uint64]string{1: "/", 661: "/tsched-fw", 681: "/tsched-fr"},
		Warm:        bfq.WarmFrom(real.MessageSeq())}
	pred := replayBFQ(t, w, dm, o)
	rn, rfirst := wakerSets(real)
	pn, pfirst := wakerSets(pred)
	t.Logf("set waker: real %v first %.4f s; predicted %v first %.4f s", rn, rfirst.Seconds(), pn, pfirst.Seconds())
	const pair = "bfq23871S <- bfq23778S"
	if rn[pair] != 711 {
		t.Fatalf("capture: %d %q, want 711", rn[pair], pair)
	}
	if d := pn[pair] - rn[pair]; d*20 > rn[pair] || -d*20 > rn[pair] {
		t.Errorf("predicted %d %q, capture %d", pn[pair], pair, rn[pair])
	}
	if d := pfirst - rfirst; d > 50_000_000 || d < -50_000_000 {
		t.Errorf("first waker at %.4f s, capture %.4f s", pfirst.Seconds(), rfirst.Seconds())
	}
	for k, n := range pn {
		if strings.HasPrefix(k, "bfq23872S") || (k != pair && n > rn[k]+10) {
			t.Errorf("predicted %d %q, capture %d", n, k, rn[k])
		}
	}
}

// loadCapture reads the capture called base as the diff's real side and
// as a workload, and calibrates a device model on it (seed 1).
func loadCapture(t *testing.T, base string) (*diff.Side, *replay.Workload, *device.Model) {
	t.Helper()
	src, err := blktrace.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	real, err := diff.Load(src, trace.Meta{})
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(base) })
	if err != nil {
		t.Fatal(err)
	}
	dm, _, err := device.Calibrate(real.RequestSlice(), device.CalibrateOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return real, w, dm
}

// replayBFQ replays w through the BFQ model with o on dm (seed 1, a
// rotational queue, as the captures' loop device) and returns the
// prediction as a diff side.
func replayBFQ(t *testing.T, w *replay.Workload, dm *device.Model, o replay.Options) *diff.Side {
	t.Helper()
	pred := diff.NewSide(trace.Meta{Source: "replay", Devices: []trace.Dev{w.Dev}, Extra: map[string]string{"scheduler": "bfq"}})
	_, err := replay.Run(w, replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return bfq.New(h, o) },
		Device:       dm.NewDevice(1),
		Queue:        replay.Queue{Rotational: true},
	}, func(e *trace.Event) error { pred.Add(e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	pred.Finish()
	return pred
}

// fs-bfq-fsync-vs-seqread began with BFQ running: no "allocated" message
// for jbd2 (23778) or the two fio jobs, jbd2's first expire "(4, slow 0,
// num_disp 0, short_ttime 0)" and "recalc_budg: last max_budg 8874, min
// budg 3812" within the first milliseconds, the reader's (23872)
// "last max_budg 7624" = 2 x 3812, a weight-raised queue's budget, not
// its max_budget; the writer's (23871) first expire comes seconds after
// its first message.
func TestWarmQueuesFsyncCapture(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-bfq-fsync-vs-seqread")
	real, _, _ := loadCapture(t, filepath.Join(dir, "fs-bfq-fsync-vs-seqread"))
	w := bfq.WarmFrom(real.MessageSeq())
	want := map[string]int64{"max_budget": 121984, "pid.23778.max_budget": 8874, "pid.23778.short_ttime": 0}
	for k, v := range want {
		if got, ok := w[k]; !ok || got != v {
			t.Errorf("%s = %d (%v), want %d", k, got, ok, v)
		}
	}
	for _, k := range []string{"pid.23872.max_budget", "pid.23871.max_budget", "pid.23871.short_ttime"} {
		if v, ok := w[k]; ok {
			t.Errorf("%s = %d, want none", k, v)
		}
	}
}

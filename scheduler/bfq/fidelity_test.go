package bfq_test

import (
	"math"
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

// fidelityReplay replays a fixture as `tracesched replay --sched bfq` does:
// the real side loaded for reference, a device model calibrated from it,
// closed loop, and the prediction rebuilt into a diff Side.
func fidelityReplay(t *testing.T, name string, o replay.Options) (real, pred *diff.Side) {
	t.Helper()
	dir := shared.Fixture(t, name)
	src, err := blktrace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	real, err = diff.Load(src, trace.Meta{})
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	w, err := replay.NewWorkload(func() (trace.EventReader, error) { return blktrace.Open(dir) })
	if err != nil {
		t.Fatal(err)
	}
	dm, _, err := device.Calibrate(real.RequestSlice(), device.CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pred = diff.NewSide(trace.Meta{Source: "replay", Devices: []trace.Dev{w.Dev}, Extra: map[string]string{"scheduler": "bfq"}})
	_, err = replay.Run(w, replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return bfq.New(h, o) },
		Device:       dm.NewDevice(0),
		Queue:        replay.Queue{Rotational: true}, // the loop device reported rotational=1
	}, func(e *trace.Event) error { pred.Add(e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	pred.Finish()
	return real, pred
}

// stableMergeDelay is the time from the first Q of the trace (the readers'
// queues are created within a millisecond) to the first "scheduling merge
// with queue" message, or -1.
func stableMergeDelay(s *diff.Side) float64 {
	first := trace.Time(math.MaxInt64)
	for i := range s.NumRequests() {
		if q := s.RequestAt(i).Queue; q.Valid() && q < first {
			first = q
		}
	}
	for i := range s.Messages.Len() {
		if strings.Contains(s.Messages.At(i).Text, "scheduling merge with queue") {
			return (s.Messages.At(i).Time - first).Seconds()
		}
	}
	return -1
}

// fx-bfq-4seqread: the kernel stably merged the four readers' queues about
// 0.6 s after creating them (bfq_do_or_sched_stable_merge: bfq_burst_interval,
// then 600 ms on a rotational device). The replay must schedule the merge
// within 20 ms of the capture's time (the readers issue every ~8 ms), every
// queue must end up in bfqSHARED-S, and 5.12 (no stable merge) must not merge.
func TestFidelity4SeqReadStableMergeTime(t *testing.T) {
	real, pred := fidelityReplay(t, "fx-bfq-4seqread", replay.Options{})
	rd, pd := stableMergeDelay(real), stableMergeDelay(pred)
	t.Logf("first scheduled merge after creation: real %.4f s, predicted %.4f s", rd, pd)
	if rd < 0 {
		t.Fatal("the capture has no scheduled merge")
	}
	if pd < 0 || math.Abs(pd-rd) > 0.020 {
		t.Errorf("predicted merge %.4f s after creation, capture %.4f s", pd, rd)
	}
	res := diff.Compare(real, pred, diff.Options{})
	t.Logf("queue merges real %d predicted %d; tau %.4f", res.Merges.RealQueueMerges, res.Merges.PredQueueMerges, res.DispatchOrder.KendallTau)
	if res.Merges.PredQueueMerges != res.Merges.RealQueueMerges {
		t.Errorf("queue merges: predicted %d, capture %d", res.Merges.PredQueueMerges, res.Merges.RealQueueMerges)
	}
	_, pred512 := fidelityReplay(t, "fx-bfq-4seqread", replay.Options{Kernel: "5.12"})
	if d := stableMergeDelay(pred512); d >= 0 {
		t.Errorf("5.12 scheduled a merge at %.4f s", d)
	}
}

// windowShares returns each cgroup's share of the bytes completed while
// every cgroup of ids is active (from the latest first Q to the earliest
// last C). It fails tb when that window is empty or holds no bytes (the
// shares would be NaN, and NaN passes every comparison).
func windowShares(tb testing.TB, reqs []trace.Request, ids []uint64) []float64 {
	tb.Helper()
	lo, hi := trace.Time(math.MinInt64), trace.Time(math.MaxInt64)
	for _, id := range ids {
		f, l := trace.Time(math.MaxInt64), trace.Time(math.MinInt64)
		for i := range reqs {
			if r := &reqs[i]; r.Cgroup == id && r.Queue.Valid() && r.Complete.Valid() {
				f, l = min(f, r.Queue), max(l, r.Complete)
			}
		}
		lo, hi = max(lo, f), min(hi, l)
	}
	b := make([]float64, len(ids))
	var sum float64
	for i := range reqs {
		r := &reqs[i]
		if !r.Complete.Valid() || r.Complete < lo || r.Complete > hi {
			continue
		}
		for j, id := range ids {
			if r.Cgroup == id {
				b[j] += float64(r.Bytes)
				sum += float64(r.Bytes)
			}
		}
	}
	if !(lo < hi) || sum == 0 {
		tb.Fatalf("no bytes completed while cgroups %v are all active (window %v..%v)", ids, lo, hi)
	}
	for j := range b {
		b[j] /= sum
	}
	return b
}

// fx-bfq-2cg-w100-900: replayed with the capture's weights (1181=100,
// 1201=900), each cgroup's share of the bytes served while both are active
// is within 3 percentage points of the capture's.
func TestFidelity2cgShares(t *testing.T) {
	ids := []uint64{1181, 1201}
	o := replay.Options{Weights: map[uint64]int{1181: 100, 1201: 900},
		CgroupPaths: map[uint64]string{1181: "/tsched-cg1", 1201: "/tsched-cg2"}}
	real, pred := fidelityReplay(t, "fx-bfq-2cg-w100-900", o)
	rs, ps := windowShares(t, real.RequestSlice(), ids), windowShares(t, pred.RequestSlice(), ids)
	t.Logf("shares real %.3f/%.3f predicted %.3f/%.3f", rs[0], rs[1], ps[0], ps[1])
	if rs[1] <= rs[0] {
		t.Fatalf("capture shares %.3f/%.3f: the weight-900 group is not ahead", rs[0], rs[1])
	}
	for j := range ids {
		if d := math.Abs(ps[j] - rs[j]); !(d <= 0.03) {
			t.Errorf("cgroup %d: predicted share %.3f, capture %.3f (%.1f pp off)", ids[j], ps[j], rs[j], 100*d)
		}
	}
}

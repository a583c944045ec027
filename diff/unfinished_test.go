package diff

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// latencySide makes one process's n reads, request i queued and issued at
// i ms and completed d2c(i) later (NoTime: never), at sector 1000*i.
func latencySide(n int, d2c func(i int) trace.Time) *Side {
	var reqs []trace.Request
	var bios []trace.Bio
	for i := range n {
		t := trace.Time(i) * 1e6
		done := trace.NoTime
		if l := d2c(i); l != trace.NoTime {
			done = t + l
		}
		r := trace.Request{ID: uint64(i + 1), PID: 7, Cat: trace.CatRead, Sector: uint64(i) * 1000, Bytes: 4096,
			Queue: t, Get: t, Insert: t, Issue: t, Complete: done, Bios: 1, FirstBio: uint32(i)}
		reqs = append(reqs, r)
		bios = append(bios, trace.Bio{PID: 7, Index: uint32(i), Sector: r.Sector, Bytes: 4096, Cat: trace.CatRead,
			Queue: t, Request: r.ID, Issue: t, Done: done})
	}
	return FromData(trace.Meta{}, bios, reqs, nil)
}

// TestLatencyUnfinished: the real side's last request was issued and never
// completed (the capture ended); the prediction completed it in 50 ms,
// every other request in 1 ms on both sides. Left out, the two D2C
// distributions are equal: demerit 0. Counted, the predicted CDF has one
// sample in 10 at 50 ms where the real has none: the real side's 9
// samples at 1 ms against the predicted 10, quantile q of the real is 1 ms
// everywhere and of the predicted 1 ms up to q = 8/9 (type 7, position
// q*9), rising linearly to 50 ms at q = 1: the demerit is
// sqrt(1/9 * mean of (49 ms * x)^2 for x uniform on 0..1) = 49 ms / sqrt(27)
// = 9.430 ms.
func TestLatencyUnfinished(t *testing.T) {
	real, pred := lastUnfinished()
	l := compareLatency(real, pred)
	if l.D2CDemerit != 0 || l.Q2CDemerit != 0 {
		t.Errorf("D2C demerit %v, Q2C %v, want 0 and 0 (the unfinished request left out)", l.D2CDemerit, l.Q2CDemerit)
	}
	if l.UnfinishedPred != 1 || l.UnfinishedReal != 0 || l.D2C.Pred.N != 9 || l.D2C.Real.N != 9 {
		t.Errorf("left out %d real, %d predicted; n %d real, %d predicted; want 0, 1, 9, 9",
			l.UnfinishedReal, l.UnfinishedPred, l.D2C.Real.N, l.D2C.Pred.N)
	}
	// Without the unfinished request on either side nothing changes.
	all := latencySide(10, func(int) trace.Time { return 1e6 })
	if l := compareLatency(all, all); l.UnfinishedPred != 0 || l.UnfinishedReal != 0 || l.D2C.Pred.N != 10 {
		t.Errorf("complete sides: %+v", l)
	}
	// What counting it did.
	want := 0.049 / math.Sqrt(27)
	if d := demerit(real.prepared().d2c, pred.prepared().d2c); math.Abs(d-want) > 0.05e-3 {
		t.Errorf("demerit with the unfinished request counted: %v s, want %.6f", d, want)
	}
}

// TestUnfinishedWriteback: fs-bfq-writeback ends with 128 of the flusher's
// writes dispatched and not completed (the capture's D 76571, C 76443;
// its README: "128 writes were dispatched but not yet completed when
// tracing stopped").
func TestUnfinishedWriteback(t *testing.T) {
	dir := shared.Path(t, "captures", "recorded-fs", "fs-bfq-writeback")
	in, err := blktrace.Open(filepath.Join(dir, "fs-bfq-writeback"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s := NewSide(in.Meta())
	for {
		e, err := in.ReadEvent()
		if err != nil {
			break
		}
		s.Add(&e)
	}
	s.Finish()
	u := unfinished(s)
	if len(u) != 128 {
		t.Errorf("%d unfinished requests, want 128", len(u))
	}
	for k := range u {
		if k.pid != 12839 {
			t.Errorf("unfinished request of pid %d at %d, want the flusher's (12839)", k.pid, k.sector)
		}
	}
}

// TestSpanBandwidthUnfinished: process 7 reads 10 x 4 KiB, one every ms
// from 0, each done 1 ms after its queue; the capture ended before its
// last read completed, which the prediction completed in 50 ms. Over the
// bios both sides completed, each side has 9 x 4096 bytes from 0 to 9 ms:
// 36864 / 2^20 / 0.009 = 3.90625 MiB/s, the process's and its cgroup's
// span bandwidth on both sides. Counted, the prediction's last read
// would have made it 40960 bytes over 59 ms (0.662 MiB/s).
func TestSpanBandwidthUnfinished(t *testing.T) {
	real, pred := lastUnfinished()
	const want = 36864.0 / (1 << 20) / 0.009
	res := Compare(real, pred, Options{})
	procs, cgs := res.Processes, res.Cgroups
	if len(procs) != 1 || math.Abs(procs[0].RealMiBpsSpan-want) > 1e-9 || math.Abs(procs[0].PredMiBpsSpan-want) > 1e-9 {
		t.Errorf("processes %+v, want one at %.5f MiB/s on both sides", procs, want)
	}
	if len(cgs) != 1 || math.Abs(cgs[0].RealMiBpsSpan-want) > 1e-9 || math.Abs(cgs[0].PredMiBpsSpan-want) > 1e-9 {
		t.Errorf("cgroups %+v, want one at %.5f MiB/s on both sides", cgs, want)
	}
}

// lastUnfinished returns the sides of TestLatencyUnfinished: ten reads,
// each done 1 ms after its queue, but the capture's last one never
// completed and the prediction's took 50 ms.
func lastUnfinished() (real, pred *Side) {
	real = latencySide(10, func(i int) trace.Time {
		if i == 9 {
			return trace.NoTime
		}
		return 1e6
	})
	pred = latencySide(10, func(i int) trace.Time {
		if i == 9 {
			return 50e6
		}
		return 1e6
	})
	return real, pred
}

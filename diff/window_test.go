package diff

import (
	"math"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// serial builds a depth-1 stream: pid in cgroup cg issues n bios of bytes,
// each queued at the previous one's completion, each served in svc, from t0.
func serial(pid uint32, cg uint64, n int, bytes uint32, t0, svc trace.Time, reqBase uint64) ([]trace.Bio, []trace.Request) {
	var bios []trace.Bio
	var reqs []trace.Request
	t := t0
	for i := 0; i < n; i++ {
		id := reqBase + uint64(i)
		reqs = append(reqs, trace.Request{ID: id, PID: pid, Cgroup: cg, Bytes: bytes, Cat: trace.CatRead, Queue: t, Issue: t, Complete: t + svc, Bios: 1, FirstBio: uint32(i)})
		bios = append(bios, trace.Bio{PID: pid, Index: uint32(i), Cgroup: cg, Bytes: bytes, Cat: trace.CatRead, Queue: t, Issue: t, Done: t + svc, Request: id})
		t += svc
	}
	return bios, reqs
}

// Two cgroups start together; the favoured one finishes after 1 s, the
// other runs alone for 3 s more. Over the contention window [0, 1 s] the
// favoured one moved 1000 MiB of 1100 and the other 100 (hand count: 1000
// 1-MiB bios at 1 ms vs 100 at 10 ms): shares 10/11 and 1/11. Over the
// active spans the other gets 400 MiB / 4 s = 100 MiB/s as well, but its
// span share would be 100/1100 only by coincidence of this layout.
func TestContentionWindowShares(t *testing.T) {
	const ms = trace.Time(1e6)
	b1, r1 := serial(1, 10, 1000, 1<<20, 0, ms, 1)
	b2, r2 := serial(2, 20, 400, 1<<20, 0, 10*ms, 1000)
	real := FromData(trace.Meta{}, append(b1, b2...), append(r1, r2...), nil)
	pred := cloneSide(real)
	r := Compare(real, pred, Options{})
	bw := r.Bandwidth
	if math.Abs(bw.WindowReal-1.0) > 1e-6 || math.Abs(bw.WindowPred-1.0) > 1e-6 || bw.WindowFallback {
		t.Fatalf("windows %v / %v (fallback %v), want 1 s", bw.WindowReal, bw.WindowPred, bw.WindowFallback)
	}
	want := map[uint64][2]float64{10: {1000, 10.0 / 11}, 20: {100, 1.0 / 11}}
	for _, c := range r.Cgroups {
		w := want[c.ID]
		if math.Abs(c.RealMiBps-w[0]) > 1e-6 || math.Abs(c.RealShare-w[1]) > 1e-9 || !c.Compared {
			t.Errorf("cgroup %d: %.6f MiB/s share %.6f, want %v", c.ID, c.RealMiBps, c.RealShare, w)
		}
		if math.Abs(c.RealIOPS-w[0]) > 1e-6 {
			t.Errorf("cgroup %d: %.3f IOPS, want %v", c.ID, c.RealIOPS, w[0])
		}
	}
	// Active spans: 900 MiB / 1 s and 400 MiB / 4 s: 900/1000 and 100/1000.
	if c := r.Cgroups[1]; math.Abs(c.RealMiBpsSpan-100) > 1e-6 {
		t.Errorf("span MiB/s %v, want 100", c.RealMiBpsSpan)
	}
	// Q2C is the service time: 10 ms for cgroup 20.
	if c := r.Cgroups[1]; math.Abs(c.RealP50-0.010) > 1e-9 || math.Abs(c.RealP99-0.010) > 1e-9 {
		t.Errorf("p50/p99 %v / %v, want 10 ms", c.RealP50, c.RealP99)
	}
	if len(r.Processes) != 2 || r.Processes[0].PID != 1 || math.Abs(r.Processes[0].RealShare-10.0/11) > 1e-9 {
		t.Errorf("processes %+v", r.Processes)
	}
	if math.Abs(bw.Real.MiBps-1100) > 1e-6 {
		t.Errorf("total %v MiB/s, want 1100", bw.Real.MiBps)
	}
}

// Cgroups that never overlap fall back to the whole active span.
func TestContentionWindowFallback(t *testing.T) {
	const ms = trace.Time(1e6)
	b1, r1 := serial(1, 10, 100, 4096, 0, ms, 1)
	b2, r2 := serial(2, 20, 100, 4096, 200*ms, ms, 1000)
	real := FromData(trace.Meta{}, append(b1, b2...), append(r1, r2...), nil)
	r := Compare(real, cloneSide(real), Options{})
	if !r.Bandwidth.WindowFallback || math.Abs(r.Bandwidth.WindowReal-0.3) > 1e-9 {
		t.Errorf("fallback %v window %v, want true, 0.3 s", r.Bandwidth.WindowFallback, r.Bandwidth.WindowReal)
	}
}

func TestIntersect(t *testing.T) {
	a := []interval{{0, 10}, {20, 30}}
	b := []interval{{5, 25}, {28, 40}}
	got := intersect(a, b)
	want := []interval{{5, 10}, {20, 25}, {28, 30}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	if j, ok := find(got, 10); !ok || j != 0 {
		t.Errorf("find(10) = %d, %v; want 0, true", j, ok)
	}
	if j, ok := find(got, 28); !ok || j != 2 {
		t.Errorf("find(28) = %d, %v; want 2, true", j, ok)
	}
	if _, ok := find(got, 11); ok {
		t.Error("find(11) found an interval")
	}
}

// An overlap too short to measure a rate over (0.5 ms of a 200 ms span)
// falls back to the active span too.
func TestContentionWindowTooShort(t *testing.T) {
	const ms = trace.Time(1e6)
	b1, r1 := serial(1, 10, 100, 4096, 0, ms, 1)
	b2, r2 := serial(2, 20, 100, 4096, 99*ms+ms/2, ms, 1000)
	real := FromData(trace.Meta{}, append(b1, b2...), append(r1, r2...), nil)
	r := Compare(real, cloneSide(real), Options{Window: 10 * time.Millisecond})
	if !r.Bandwidth.WindowFallback || math.Abs(r.Bandwidth.WindowReal-0.1995) > 1e-9 {
		t.Errorf("fallback %v window %v, want true, 0.1995 s", r.Bandwidth.WindowFallback, r.Bandwidth.WindowReal)
	}
}

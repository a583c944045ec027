package bfq

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// BenchmarkHooks drives Insert, HasWork, Dispatch and Completed for b.N
// requests from 8 sequential and random readers in two cgroups on a queueing
// device (the fake host's event loop included).
func BenchmarkHooks(b *testing.B) {
	for _, lv := range []string{"none", "decisions"} {
		b.Run("log="+lv, func(b *testing.B) { benchHooks(b, lv) })
	}
}

func benchHooks(b *testing.B, logLevel string) {
	h := newFakeHost(false, 32, 20*trace.Time(1000))
	h.parallel = true
	h.recycle = true
	o := replay.Options{Set: map[string]string{"log": logLevel}, Weights: map[uint64]int{2: 300}, CgroupPaths: map[uint64]string{2: "/a", 3: "/b"}}
	s, err := New(h, o)
	if err != nil {
		b.Fatal(err)
	}
	h.s = s
	for i := 0; i < 8; i++ {
		p := &proc{pid: uint32(100 + i), cgroup: uint64(2 + i%2), sector: uint64(i+1) << 24, size: 4096, depth: 4,
			think: 5 * trace.Time(1000), start: trace.Time(i) * 300 * ms, stop: 1 << 62}
		if i%2 == 1 {
			p.region, p.base = 1<<22, uint64(i+1)<<24
		}
		h.add(p)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	step := 10 * ms
	for h.dispatches < b.N {
		h.run(h.now + step)
	}
	b.StopTimer()
	b.ReportMetric(float64(h.dispatches)/b.Elapsed().Seconds(), "req/s")
	// On a shared machine wall time overstates the cost: also report
	// requests per second of this process's CPU time (with -cpu 1, one core).
	if c := cpuSeconds() - cpu0; c > 0 {
		b.ReportMetric(float64(h.dispatches)/c, "req/cpu-s")
	}
}

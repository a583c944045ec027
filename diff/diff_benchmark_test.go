package diff

import (
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCompare1M diffs two synthetic traces of 1 M requests (1.33 M
// bios, a quarter of them back merges; 16 processes in two cgroups) with
// different random process interleavings and service times. It reports
// the process CPU time per diff (cpu-s/op) beside the wall time, since the
// wall time depends on the machine's load.
func BenchmarkCompare1M(b *testing.B) {
	real := synthSide(1_333_334, 16, 1)
	pred := synthSide(1_333_334, 16, 2)
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		r := Compare(real, pred, Options{})
		if r.Identity.Matched == 0 || len(real.Requests) < 1_000_000 {
			b.Fatalf("matched %d, requests %d", r.Identity.Matched, len(real.Requests))
		}
	}
	b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
}

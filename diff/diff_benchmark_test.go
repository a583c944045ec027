package diff

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tracesched/tracesched/trace"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// unprepare drops what Compare derived from s alone, so that the next
// Compare derives it again, as the first Compare of a Side does.
func unprepare(s *Side) {
	s.prepOnce = sync.Once{}
	s.prep = nil
}

// BenchmarkCompare1M diffs two synthetic traces of 1 M requests (1.33 M
// bios, a quarter of them back merges; 16 processes in two cgroups) with
// different random process interleavings and service times. Each diff is
// the first of its Sides (what Compare derives from each Side alone is
// derived again). It reports the process CPU time per diff (cpu-s/op)
// beside the wall time, since the wall time depends on the machine's load.
func BenchmarkCompare1M(b *testing.B) {
	real := synthSide(1_333_334, 16, 1)
	pred := synthSide(1_333_334, 16, 2)
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		unprepare(real)
		unprepare(pred)
		r := Compare(real, pred, Options{})
		if r.Identity.Matched == 0 || real.NumRequests() < 1_000_000 {
			b.Fatalf("matched %d, requests %d", r.Identity.Matched, real.NumRequests())
		}
	}
	b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkCompare1MWarm is BenchmarkCompare1M with Sides already compared
// once: a real capture diffed against one prediction after another.
func BenchmarkCompare1MWarm(b *testing.B) {
	real := synthSide(1_333_334, 16, 1)
	pred := synthSide(1_333_334, 16, 2)
	Compare(real, pred, Options{})
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		r := Compare(real, pred, Options{})
		if r.Identity.Matched == 0 {
			b.Fatal("nothing matched")
		}
	}
	b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkFinish1M finishes a Side of 1.33 M bios and 1 M requests given
// in time order (as the Rebuilder gives them, not sorted by key): sorting
// and indexing. cpu-s/op counts the finishing only, not the copying of the
// input.
func BenchmarkFinish1M(b *testing.B) {
	bios, reqs := synth(1_333_334, 16, 1)
	// Requests in completion order, as the Rebuilder emits them.
	byDone := append([]trace.Request(nil), reqs...)
	sortByDone(byDone)
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		bb := append([]trace.Bio(nil), bios...)
		rr := append([]trace.Request(nil), byDone...)
		b.StartTimer()
		c0 := cpuTime()
		s := FromData(trace.Meta{}, bb, rr, nil)
		cpu += cpuTime() - c0
		if s.NumRequests() != len(reqs) {
			b.Fatal("lost requests")
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkRequestPass reads every request of a Side of 1 M requests, as
// the calibration and the device coverage read a side: one RequestAt per
// request against the Requests pass (each column decoded a block at a
// time).
func BenchmarkRequestPass(b *testing.B) {
	s := synthSide(1_333_334, 16, 1)
	for _, c := range []struct {
		name string
		pass func(s *Side) uint64
	}{
		{"RequestAt", func(s *Side) uint64 {
			var sum uint64
			for i := range s.NumRequests() {
				r := s.RequestAt(i)
				sum += uint64(r.Complete - r.Issue)
			}
			return sum
		}},
		{"Requests", func(s *Side) uint64 {
			var sum uint64
			for _, r := range s.Requests() {
				sum += uint64(r.Complete - r.Issue)
			}
			return sum
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				if c.pass(s) == 0 {
					b.Fatal("no service time")
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkTables1M builds a Side's tables as the Rebuilder hands a trace
// of 1.33 M bios and 1 M requests over (bios and requests in completion
// order, through addBio and takeRequest) and finishes it, for 2 and 16
// processes (the bios' sort by process is then 2 or 16 sweeps through the
// tables' blocks). cpu-s/op is the process CPU time.
func BenchmarkTables1M(b *testing.B) {
	for _, procs := range []int{2, 16} {
		bios, reqs := synth(1_333_334, procs, 1)
		sortByDone(reqs)
		slices.SortStableFunc(bios, func(a, b trace.Bio) int { return cmp.Compare(a.Done, b.Done) })
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				c0 := cpuTime()
				s := &Side{}
				for i := range bios {
					s.addBio(&bios[i])
				}
				for i := range reqs {
					s.takeRequest(&reqs[i])
				}
				s.flushHeld()
				s.finish()
				cpu += cpuTime() - c0
				if s.NumRequests() != len(reqs) || s.NumBios() != len(bios) {
					b.Fatal("lost requests or bios")
				}
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

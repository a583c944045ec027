package replay_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// BenchmarkEngineNone replays 8 processes of queue depth 16 (400 k bios)
// through none on a fixed-latency device, emitting no events, and reports
// requests replayed per second of CPU.
func BenchmarkEngineNone(b *testing.B) {
	var recs []replay.Record
	for p := 0; p < 8; p++ {
		recs = append(recs, qdRecords(uint32(1000+p), 50_000, 16, 100_000, 2_000, uint64(p)<<24, p%2 == 1)...)
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		b.Fatal(err)
	}
	cfg := replay.Config{NewScheduler: newNone, Device: &fixedDevice{lat: 100_000}}
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		res, err := replay.Run(w, cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += res.Requests
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(total)/cpu.Seconds(), "requests/cpu-s")
	b.ReportMetric(float64(total)/float64(b.N), "requests/op")
}

// cpuTime returns the CPU time the process has used (user and system, all
// threads: the garbage collector's work counts): on a shared machine it
// measures the engine where wall time measures the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEngineEvents is BenchmarkEngineNone with every event built and
// handed to a consumer that drops it.
func BenchmarkEngineEvents(b *testing.B) {
	var recs []replay.Record
	for p := 0; p < 8; p++ {
		recs = append(recs, qdRecords(uint32(1000+p), 50_000, 16, 100_000, 2_000, uint64(p)<<24, false)...)
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		b.Fatal(err)
	}
	cfg := replay.Config{NewScheduler: newNone, Device: &fixedDevice{lat: 100_000}}
	n := 0
	drop := func(*trace.Event) error { n++; return nil }
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		res, err := replay.Run(w, cfg, drop)
		if err != nil {
			b.Fatal(err)
		}
		total += res.Requests
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(float64(total)/(cpuTime()-cpu0).Seconds(), "requests/cpu-s")
}

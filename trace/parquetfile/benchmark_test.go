package parquetfile

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/trace"
)

// BenchmarkWriteCapture writes the events of the blktrace capture named by
// $TRACESCHED_BENCH_CAPTURE (a path without the .blktrace.N suffix), and
// the requests rebuilt from them, as Parquet files; it skips when the
// variable is unset. Metrics are per CPU-second as well as per wall-clock
// second, to set beside trace/arrowfile's BenchmarkEncodeCapture.
func BenchmarkWriteCapture(b *testing.B) {
	path := os.Getenv("TRACESCHED_BENCH_CAPTURE")
	if path == "" {
		b.Skip("TRACESCHED_BENCH_CAPTURE not set")
	}
	evs, meta := fixture.Events(b, path)
	var rqs []trace.Request
	rb := trace.NewRebuilder(func(q *trace.Request) { rqs = append(rqs, *q) }, nil)
	for i := range evs {
		rb.Add(&evs[i])
	}
	rb.Close()
	b.Run("events", func(b *testing.B) {
		var out countWriter
		cpu0 := cpuTime()
		for b.Loop() {
			out = 0
			w, err := NewEventWriter(&out, meta)
			if err != nil {
				b.Fatal(err)
			}
			for i := range evs {
				if err := w.Write(&evs[i]); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		n := float64(b.N * len(evs))
		b.ReportMetric(n/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(n/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
		b.ReportMetric(float64(out)/float64(len(evs)), "B/event")
	})
	b.Run("requests", func(b *testing.B) {
		var out countWriter
		cpu0 := cpuTime()
		for b.Loop() {
			out = 0
			w, err := NewRequestWriter(&out, meta)
			if err != nil {
				b.Fatal(err)
			}
			for i := range rqs {
				if err := w.Write(&rqs[i]); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		n := float64(b.N * len(rqs))
		b.ReportMetric(n/b.Elapsed().Seconds(), "requests/s")
		b.ReportMetric(n/(cpuTime()-cpu0).Seconds(), "requests/cpu-s")
		b.ReportMetric(float64(out)/float64(len(rqs)), "B/request")
	})
}

type countWriter int64

func (w *countWriter) Write(p []byte) (int, error) { *w += countWriter(len(p)); return len(p), nil }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
